import Foundation
import SwiftData

/// A trip: a named journey with dates, stops and journal entries.
///
/// Every property has a default value and every relationship is optional, so that the
/// schema stays compatible with CloudKit, where records can arrive in any order.
@available(iOS 17.0, *)
@Model
final class Trip {
    var id: TripID = UUID()
    var name: String = ""
    var destination: String = ""
    var startDate: Date = Date.now
    var endDate: Date = Date.now
    var category: TripCategory = TripCategory.leisure
    var isFavorite: Bool = false

    @Relationship(deleteRule: .cascade, inverse: \Stop.trip)
    var stops: [Stop]? = []

    @Relationship(deleteRule: .cascade, inverse: \JournalEntry.trip)
    var entries: [JournalEntry]? = []

    /// Archived `CKRecord` system fields (change tag) from the last successful sync.
    var cloudSystemFields: Data?
    var lastModified: Date = Date.now
    var needsSync: Bool = true

    @Transient var isExpanded = false

    init(
        id: TripID = UUID(),
        name: String,
        destination: String,
        startDate: Date,
        endDate: Date,
        category: TripCategory = .leisure
    ) {
        self.id = id
        self.name = name
        self.destination = destination
        self.startDate = startDate
        self.endDate = endDate
        self.category = category
    }
}

@available(iOS 17.0, *)
extension Trip {
    /// Stops ordered by arrival time.
    var orderedStops: [Stop] {
        (stops ?? []).sorted { $0.arrival < $1.arrival }
    }

    var dateRange: ClosedRange<Date> {
        startDate...max(startDate, endDate)
    }

    var isUpcoming: Bool { startDate > .now }

    /// Marks the trip as changed locally so the next sync uploads it.
    func touch() {
        lastModified = .now
        needsSync = true
    }

    static var samples: [Trip] {
        let calendar = Calendar.current
        let lisbon = Trip(
            name: "Spring in Lisbon",
            destination: "Lisbon, Portugal",
            startDate: calendar.date(byAdding: .day, value: 12, to: .now)!,
            endDate: calendar.date(byAdding: .day, value: 17, to: .now)!
        )
        lisbon.stops = [
            Stop(name: "Alfama", latitude: 38.7118, longitude: -9.1300, arrival: lisbon.startDate),
            Stop(name: "Belém Tower", latitude: 38.6916, longitude: -9.2160,
                 arrival: lisbon.startDate.addingTimeInterval(86_400)),
        ]
        let kyoto = Trip(
            name: "Kyoto conference",
            destination: "Kyoto, Japan",
            startDate: calendar.date(byAdding: .month, value: -2, to: .now)!,
            endDate: calendar.date(byAdding: .day, value: -55, to: .now)!,
            category: .business(company: "Example Corp")
        )
        return [lisbon, kyoto]
    }
}

/// A place visited during a trip.
@available(iOS 17.0, *)
@Model
final class Stop {
    var name: String = ""
    var latitude: Double = 0
    var longitude: Double = 0
    var arrival: Date = Date.now
    var notes: String = ""
    var trip: Trip?

    init(name: String, latitude: Double, longitude: Double, arrival: Date) {
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.arrival = arrival
    }
}
