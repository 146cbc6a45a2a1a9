import Combine
import Foundation

/// The trip list model used on iOS 16, before Observation and SwiftData.
///
/// Kept only until the deployment target moves to iOS 17. New code should use
/// ``TripListViewModel``.
@available(iOS, introduced: 15.0, deprecated: 17.0, message: "Use TripListViewModel (Observation) on iOS 17 and later")
@MainActor
final class LegacyTripListModel: ObservableObject {
    @Published private(set) var trips: [TripSnapshot] = []
    @Published var searchText = ""
    @Published private(set) var isLoading = false
    @Published var errorMessage: String?

    private let store: JSONFileTripStore
    private var cancellables = Set<AnyCancellable>()

    init(store: JSONFileTripStore = JSONFileTripStore()) {
        self.store = store

        // Reload (debounced) whenever the search text changes.
        $searchText
            .removeDuplicates()
            .debounce(for: .milliseconds(300), scheduler: RunLoop.main)
            .sink { [weak self] _ in
                Task { await self?.load() }
            }
            .store(in: &cancellables)
    }

    func load() async {
        isLoading = true
        defer { isLoading = false }
        do {
            let all = try await store.allTrips()
            trips = searchText.isEmpty ? all : all.filter { $0.name.localizedStandardContains(searchText) }
        } catch {
            errorMessage = error.localizedDescription
        }
    }

    func add(named name: String) async {
        do {
            try await store.upsert(.draft(named: name))
            await load()
        } catch {
            errorMessage = error.localizedDescription
        }
    }

    /**
     Deletes the trips at the given offsets of ``trips``.

     - Parameter offsets: Offsets as delivered by `onDelete`.
     - Note: On iOS 17 and later, deletion goes through ``TripListViewModel/delete(at:)``.
     */
    func delete(at offsets: IndexSet) async {
        for id in offsets.map({ trips[$0].id }) {
            try? await store.delete(id: id)
        }
        await load()
    }
}
