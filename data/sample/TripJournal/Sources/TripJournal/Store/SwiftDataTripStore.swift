import Foundation
import SwiftData

/// A ``TripStore`` backed by a SwiftData model context on the main actor.
@available(iOS 17.0, *)
@MainActor
final class SwiftDataTripStore: TripStore {
    private let context: ModelContext

    init(context: ModelContext) {
        self.context = context
    }

    func allTrips() throws -> [TripSnapshot] {
        let descriptor = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate, order: .reverse)])
        return try context.fetch(descriptor).map(TripSnapshot.init)
    }

    func trip(id: TripID) throws -> TripSnapshot? {
        try model(id: id).map(TripSnapshot.init)
    }

    func upsert(_ snapshot: TripSnapshot) throws {
        guard snapshot.endDate >= snapshot.startDate else {
            throw TripStoreError.invalidDates(start: snapshot.startDate, end: snapshot.endDate)
        }
        if let existing = try model(id: snapshot.id) {
            existing.apply(snapshot)
        } else {
            let trip = Trip(
                id: snapshot.id, name: snapshot.name, destination: snapshot.destination,
                startDate: snapshot.startDate, endDate: snapshot.endDate, category: snapshot.category
            )
            context.insert(trip)
            trip.apply(snapshot)
        }
        try context.save()
    }

    func delete(id: TripID) throws {
        try context.delete(model: Trip.self, where: #Predicate { $0.id == id })
        try context.save()
    }

    func pendingUploads() throws -> [TripSnapshot] {
        let descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.needsSync })
        return try context.fetch(descriptor).map(TripSnapshot.init)
    }

    func markUploaded(_ systemFields: [TripID: Data]) throws {
        for (id, fields) in systemFields {
            guard let trip = try model(id: id) else { continue }
            trip.cloudSystemFields = fields
            trip.needsSync = false
        }
        try context.save()
    }

    // MARK: - Private

    private func model(id: TripID) throws -> Trip? {
        var descriptor = FetchDescriptor<Trip>(predicate: #Predicate { $0.id == id })
        descriptor.fetchLimit = 1
        return try context.fetch(descriptor).first
    }
}
