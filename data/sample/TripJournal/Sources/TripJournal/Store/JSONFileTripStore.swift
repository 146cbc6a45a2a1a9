import Foundation

/// A ``TripStore`` that keeps all trips in one JSON file.
///
/// Used on iOS 16, where SwiftData is unavailable, and by unit tests. The actor serializes
/// access to the in-memory cache and to the file.
actor JSONFileTripStore: TripStore {
    private let fileURL: URL
    private var cache: [TripID: TripSnapshot]?
    private var pending: Set<TripID> = []

    private static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .iso8601
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        return encoder
    }()

    init(fileURL: URL = URL.documentsDirectory.appending(path: "trips.json")) {
        self.fileURL = fileURL
    }

    func allTrips() throws -> [TripSnapshot] {
        try load().values.sorted { $0.startDate > $1.startDate }
    }

    func trip(id: TripID) throws -> TripSnapshot? {
        try load()[id]
    }

    func upsert(_ trip: TripSnapshot) throws {
        guard trip.endDate >= trip.startDate else {
            throw TripStoreError.invalidDates(start: trip.startDate, end: trip.endDate)
        }
        var trips = try load()
        trips[trip.id] = trip
        pending.insert(trip.id)
        try persist(trips)
    }

    func delete(id: TripID) throws {
        var trips = try load()
        guard trips.removeValue(forKey: id) != nil else { return }
        pending.remove(id)
        try persist(trips)
    }

    func pendingUploads() throws -> [TripSnapshot] {
        let trips = try load()
        return pending.compactMap { trips[$0] }
    }

    func markUploaded(_ systemFields: [TripID: Data]) throws {
        var trips = try load()
        for (id, fields) in systemFields {
            trips[id]?.systemFields = fields
            pending.remove(id)
        }
        try persist(trips)
    }

    // MARK: - File access

    private func load() throws -> [TripID: TripSnapshot] {
        if let cache { return cache }
        guard FileManager.default.fileExists(atPath: fileURL.path()) else {
            cache = [:]
            return [:]
        }
        do {
            let data = try Data(contentsOf: fileURL)
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            let list = try decoder.decode([TripSnapshot].self, from: data)
            let loaded = Dictionary(list.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            cache = loaded
            return loaded
        } catch {
            throw TripStoreError.corruptFile(path: fileURL.path(), underlying: String(describing: error))
        }
    }

    private func persist(_ trips: [TripID: TripSnapshot]) throws {
        let data = try Self.encoder.encode(Array(trips.values))
        try data.write(to: fileURL, options: [.atomic, .completeFileProtection])
        cache = trips
    }
}
