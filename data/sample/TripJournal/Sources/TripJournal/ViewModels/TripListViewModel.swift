import Foundation
import Observation

/// Drives the trip list: search, sorting, creation, deletion and the sync banner.
///
/// Views read its properties directly; thanks to Observation, a view updates only when a
/// property it read changes (the banner doesn't redraw when `searchText` changes).
@available(iOS 17.0, *)
@MainActor
@Observable
final class TripListViewModel {
    enum SortOrder: String, CaseIterable, Identifiable, Sendable {
        case newestFirst = "Newest first"
        case oldestFirst = "Oldest first"
        case name = "Name"

        var id: Self { self }
    }

    // MARK: State read by views

    private(set) var trips: [TripSnapshot] = []
    var searchText = ""
    var sortOrder: SortOrder = .newestFirst
    private(set) var syncState: SyncState = .idle(lastSync: nil)
    var presentedError: PresentedError?
    var isShowingEditor = false

    // MARK: Dependencies

    @ObservationIgnored private let store: any TripStore
    @ObservationIgnored private let sync: CloudSyncService
    @ObservationIgnored private var syncObservation: Task<Void, Never>?

    init(store: any TripStore, sync: CloudSyncService) {
        self.store = store
        self.sync = sync
    }

    // MARK: Derived values

    /// Trips matching the search text, in the chosen order.
    var visibleTrips: [TripSnapshot] {
        let query = searchText.trimmingCharacters(in: .whitespaces)
        let matching = query.isEmpty ? trips : trips.filter {
            $0.name.localizedStandardContains(query) || $0.destination.localizedStandardContains(query)
        }
        switch sortOrder {
        case .newestFirst: return matching.sorted { $0.startDate > $1.startDate }
        case .oldestFirst: return matching.sorted { $0.startDate < $1.startDate }
        case .name: return matching.sorted { $0.name.localizedStandardCompare($1.name) == .orderedAscending }
        }
    }

    var upcomingCount: Int {
        trips.lazy.filter { $0.startDate > .now }.count
    }

    var syncStatusText: String {
        switch syncState {
        case .idle(let last?): "Synced \(last.formatted(.relative(presentation: .named)))"
        case .idle(nil): "Not synced yet"
        case .syncing(let progress): "Syncing… \(Int(progress * 100))%"
        case .failed(let message, _): message
        case .disabled(let reason): reason.rawValue
        }
    }

    // MARK: Loading

    /// Loads trips from the store and starts mirroring the sync state.
    func load() async {
        startObservingSync()
        do {
            trips = try await store.allTrips()
        } catch {
            present(error, title: "Couldn't Load Trips")
        }
    }

    /// Pull-to-refresh: sync, then reload from the store.
    func refresh() async {
        do {
            try await sync.sync()
        } catch is CancellationError {
            return
        } catch {
            // The banner already shows the failure; only surface non-retryable errors.
            if case .failed(_, retryable: false) = syncState {
                present(error, title: "Sync Failed")
            }
        }
        await load()
    }

    // MARK: Editing

    func save(_ draft: TripSnapshot) async {
        var trip = draft
        trip.lastModified = .now
        do {
            try await store.upsert(trip)
            if let index = trips.firstIndex(where: { $0.id == trip.id }) {
                trips[index] = trip
            } else {
                trips.append(trip)
            }
            isShowingEditor = false
            Task { try? await sync.sync() }
        } catch {
            present(error, title: "Couldn't Save Trip")
        }
    }

    func delete(at offsets: IndexSet) async {
        let visible = visibleTrips
        let ids = offsets.map { visible[$0].id }
        for id in ids {
            do {
                try await store.delete(id: id)
                trips.removeAll { $0.id == id }
            } catch {
                present(error, title: "Couldn't Delete Trip")
                return
            }
        }
    }

    func toggleFavoriteSort() {
        sortOrder = sortOrder == .name ? .newestFirst : .name
    }

    // MARK: Private

    private func startObservingSync() {
        guard syncObservation == nil else { return }
        syncObservation = Task { [weak self, sync] in
            for await state in await sync.stateUpdates() {
                guard let self else { return }  // the model went away; stop observing
                self.syncState = state
            }
        }
    }

    private func present(_ error: any Error, title: String) {
        presentedError = PresentedError(title: title, message: error.localizedDescription)
    }
}

/// An error ready for an alert.
struct PresentedError: Identifiable, Equatable {
    let id = UUID()
    var title: String
    var message: String
}
