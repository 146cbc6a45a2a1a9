import SwiftUI
import SwiftData

/// Owns the navigation path for the whole app.
@available(iOS 17.0, *)
@MainActor
@Observable
final class Router {
    var path: [Route] = []

    func show(_ route: Route) { path.append(route) }
    func popToRoot() { path.removeAll() }

    /// Handles `tripjournal://trips/<uuid>` links.
    func handle(_ url: URL) {
        guard url.scheme == "tripjournal", url.host() == "trips",
              let idString = url.pathComponents.dropFirst().first,
              let id = UUID(uuidString: idString)
        else { return }
        path = [.trip(id)]
    }
}

/// The root view on iOS 17 and later.
@available(iOS 17.0, *)
struct ContentView: View {
    @Environment(Router.self) private var router
    @State private var model = TripListViewModel(
        store: SharedModelContainer.store,
        sync: SharedModelContainer.syncService
    )

    var body: some View {
        @Bindable var router = router

        NavigationStack(path: $router.path) {
            TripListView(model: model)
                .navigationDestination(for: Route.self) { route in
                    switch route {
                    case .trip(let id):
                        TripDetailView(tripID: id)
                    case .entry(let tripID, let entryID):
                        EntryDetailPlaceholder(tripID: tripID, entryID: entryID)
                    case .map(let tripID, let focus):
                        Text("Map for \(tripID.uuidString.prefix(8)) \(focus ?? "")")
                    case .settings:
                        SettingsView()
                    }
                }
        }
        .onOpenURL { router.handle($0) }
        .task { await model.load() }
    }
}

@available(iOS 17.0, *)
private struct EntryDetailPlaceholder: View {
    let tripID: TripID
    let entryID: EntryID

    var body: some View {
        ContentUnavailableView("Entry", systemImage: "book.closed",
                               description: Text("Entry \(entryID.uuidString.prefix(8))"))
    }
}

@available(iOS 17.0, *)
struct SettingsView: View {
    @AppStorage(DefaultsKey.iCloudSyncEnabled) private var iCloudSyncEnabled = true

    var body: some View {
        Form {
            Toggle("Sync with iCloud", isOn: $iCloudSyncEnabled)
        }
        .navigationTitle("Settings")
    }
}

#Preview {
    if #available(iOS 17.0, *) {
        ContentView()
            .modelContainer(SharedModelContainer.preview)
            .environment(Router())
    }
}
