import SwiftUI
import SwiftData

/// The list of trips, with search, sorting, swipe to delete and pull to refresh.
@available(iOS 17.0, *)
struct TripListView: View {
    @Bindable var model: TripListViewModel
    @Environment(Router.self) private var router

    var body: some View {
        List {
            Section {
                ForEach(model.visibleTrips) { trip in
                    NavigationLink(value: Route.trip(trip.id)) {
                        TripRow(trip: trip)
                    }
                }
                .onDelete { offsets in
                    Task { await model.delete(at: offsets) }
                }
            } footer: {
                Text(model.syncStatusText)
                    .font(.footnote)
                    .foregroundStyle(.secondary)
            }
        }
        .overlay {
            if model.visibleTrips.isEmpty {
                if model.searchText.isEmpty {
                    ContentUnavailableView("No Trips Yet", systemImage: "suitcase",
                                           description: Text("Tap + to plan your first trip."))
                } else {
                    ContentUnavailableView.search(text: model.searchText)
                }
            }
        }
        .navigationTitle("Trips")
        .searchable(text: $model.searchText, prompt: "Trips or destinations")
        .refreshable { await model.refresh() }
        .toolbar {
            ToolbarItem(placement: .topBarLeading) {
                Picker("Sort", selection: $model.sortOrder) {
                    ForEach(TripListViewModel.SortOrder.allCases) { Text($0.rawValue).tag($0) }
                }
            }
            ToolbarItem(placement: .primaryAction) {
                Button("New Trip", systemImage: "plus") { model.isShowingEditor = true }
            }
            ToolbarItem(placement: .secondaryAction) {
                Button("Settings", systemImage: "gear") { router.show(.settings) }
            }
        }
        .sheet(isPresented: $model.isShowingEditor) {
            TripEditorView(draft: .draft()) { draft in
                Task { await model.save(draft) }
            }
        }
        .alert(model.presentedError?.title ?? "Error",
               isPresented: Binding(get: { model.presentedError != nil },
                                    set: { if !$0 { model.presentedError = nil } }),
               presenting: model.presentedError) { _ in
            Button("OK", role: .cancel) { }
        } message: { error in
            Text(error.message)
        }
    }
}

/// One row of the trip list.
struct TripRow: View {
    let trip: TripSnapshot

    var body: some View {
        HStack(spacing: 12) {
            Image(systemName: trip.category.symbolName)
                .font(.title2)
                .foregroundStyle(.tint)
                .frame(width: 36)
            VStack(alignment: .leading, spacing: 2) {
                Text(trip.name).font(.headline)
                Text(trip.destination).foregroundStyle(.secondary)
                Text("\(trip.startDate.shortTripDate) · \(trip.nights) nights")
                    .font(.caption)
                    .foregroundStyle(.tertiary)
            }
        }
        .accessibilityElement(children: .combine)
    }
}

#Preview("Row") {
    List {
        TripRow(trip: .draft(named: "Weekend in Porto"))
    }
}
