import Foundation

/// A `Sendable` value copy of a trip, used to move data between the main actor, the store
/// and the sync actor. SwiftData models themselves are not `Sendable`.
struct TripSnapshot: Identifiable, Hashable, Codable, Sendable {
    var id: TripID
    var name: String
    var destination: String
    var startDate: Date
    var endDate: Date
    var category: TripCategory
    var stops: [StopSnapshot]
    var lastModified: Date
    /// Archived CloudKit system fields, `nil` until the trip has been uploaded once.
    var systemFields: Data?

    struct StopSnapshot: Hashable, Codable, Sendable {
        var name: String
        var latitude: Double
        var longitude: Double
        var arrival: Date
    }

    var nights: Int { (startDate...max(startDate, endDate)).nightCount }
}

extension TripSnapshot {
    /// A new, empty trip starting today.
    static func draft(named name: String = "") -> TripSnapshot {
        TripSnapshot(
            id: UUID(), name: name, destination: "",
            startDate: .now, endDate: .now.addingTimeInterval(86_400),
            category: .leisure, stops: [], lastModified: .now, systemFields: nil
        )
    }
}

@available(iOS 17.0, *)
extension TripSnapshot {
    init(_ trip: Trip) {
        self.init(
            id: trip.id,
            name: trip.name,
            destination: trip.destination,
            startDate: trip.startDate,
            endDate: trip.endDate,
            category: trip.category,
            stops: trip.orderedStops.map {
                StopSnapshot(name: $0.name, latitude: $0.latitude, longitude: $0.longitude, arrival: $0.arrival)
            },
            lastModified: trip.lastModified,
            systemFields: trip.cloudSystemFields
        )
    }
}

@available(iOS 17.0, *)
extension Trip {
    /// Copies the snapshot's values into this model, replacing its stops.
    func apply(_ snapshot: TripSnapshot) {
        name = snapshot.name
        destination = snapshot.destination
        startDate = snapshot.startDate
        endDate = snapshot.endDate
        category = snapshot.category
        lastModified = snapshot.lastModified
        cloudSystemFields = snapshot.systemFields ?? cloudSystemFields
        stops = snapshot.stops.map {
            Stop(name: $0.name, latitude: $0.latitude, longitude: $0.longitude, arrival: $0.arrival)
        }
    }
}
