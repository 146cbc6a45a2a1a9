import Foundation

/// Persistence for trips, independent of the storage technology.
///
/// Conforming types exchange ``TripSnapshot`` values so that callers on any actor can use
/// them. ``SwiftDataTripStore`` backs the app on iOS 17 and later; ``JSONFileTripStore``
/// backs it on iOS 16 and in tests.
protocol TripStore: Sendable {
    /// All trips, newest first.
    func allTrips() async throws -> [TripSnapshot]

    /// The trip with the given identifier, or `nil`.
    func trip(id: TripID) async throws -> TripSnapshot?

    /// Inserts the trip, or replaces the stored trip with the same identifier.
    func upsert(_ trip: TripSnapshot) async throws

    /// Removes a trip. Removing a trip that doesn't exist is not an error.
    func delete(id: TripID) async throws

    /// Trips changed locally since the last successful upload.
    func pendingUploads() async throws -> [TripSnapshot]

    /// Records that the given trips were uploaded, with their new CloudKit system fields.
    func markUploaded(_ systemFields: [TripID: Data]) async throws
}

extension TripStore {
    /// Trips whose dates overlap `range`.
    func trips(overlapping range: ClosedRange<Date>) async throws -> [TripSnapshot] {
        try await allTrips().filter { trip in
            trip.startDate <= range.upperBound && trip.endDate >= range.lowerBound
        }
    }

    /// Inserts or replaces several trips, in order.
    func upsert(contentsOf trips: some Sequence<TripSnapshot>) async throws {
        for trip in trips {
            try await upsert(trip)
        }
    }
}

/// Errors thrown by trip stores.
enum TripStoreError: LocalizedError, Equatable {
    case notFound(TripID)
    case invalidDates(start: Date, end: Date)
    case corruptFile(path: String, underlying: String)
    case quotaExceeded(bytesNeeded: Int)

    var errorDescription: String? {
        switch self {
        case .notFound(let id):
            "No trip with identifier \(id.uuidString)."
        case .invalidDates(let start, let end):
            "A trip can't end (\(end.shortTripDate)) before it starts (\(start.shortTripDate))."
        case .corruptFile(let path, let underlying):
            "The trips file at \(path) could not be read: \(underlying)"
        case .quotaExceeded(let bytes):
            "Not enough storage; \(ByteCountFormatter.string(fromByteCount: Int64(bytes), countStyle: .file)) needed."
        }
    }
}
