import Foundation
import SwiftData

/// Process-wide SwiftData and sync objects.
///
/// Created lazily on first access, on the main actor, so that iOS 16 devices never touch
/// SwiftData types.
@available(iOS 17.0, *)
@MainActor
enum SharedModelContainer {
    /// The container for all persistent models. CloudKit mirroring is disabled because
    /// ``CloudSyncService`` syncs explicitly through the `TripStore` abstraction.
    static let shared: ModelContainer = {
        let schema = Schema([Trip.self, Stop.self, JournalEntry.self])
        let configuration = ModelConfiguration(
            "TripJournal",
            schema: schema,
            isStoredInMemoryOnly: ProcessInfo.processInfo.isRunningForPreviews,
            groupContainer: .identifier(appGroupIdentifier),
            cloudKitDatabase: .none
        )
        do {
            return try ModelContainer(for: schema, configurations: [configuration])
        } catch {
            fatalError("Unable to create the model container: \(error)")
        }
    }()

    static let store: SwiftDataTripStore = SwiftDataTripStore(context: shared.mainContext)

    static let syncService = CloudSyncService(store: store)

    static let router = Router()

    /// A container with sample data, for `#Preview` blocks.
    static var preview: ModelContainer {
        let container = try! ModelContainer(
            for: Trip.self, Stop.self, JournalEntry.self,
            configurations: ModelConfiguration(isStoredInMemoryOnly: true)
        )
        for trip in Trip.samples {
            container.mainContext.insert(trip)
        }
        return container
    }
}

extension ProcessInfo {
    /// `true` inside Xcode previews, where the real store should not be touched.
    var isRunningForPreviews: Bool {
        environment["XCODE_RUNNING_FOR_PREVIEWS"] == "1"
    }
}
