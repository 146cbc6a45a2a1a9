import CloudKit
import Foundation

/// Field keys of the `Trip` record type. Keep in sync with the CloudKit schema:
/// fields can be added, but never renamed or removed once deployed to production.
enum TripRecordKey: String {
    case name, destination, startDate, endDate, category, stopsJSON, lastModified
}

extension CKRecord {
    subscript(key: TripRecordKey) -> (any CKRecordValue)? {
        get { object(forKey: key.rawValue) }
        set { setObject(newValue, forKey: key.rawValue) }
    }

    /// Recreates a record from archived system fields so that the change tag is preserved,
    /// or makes a fresh record when the trip has never been uploaded.
    static func forTrip(_ trip: TripSnapshot, in zoneID: CKRecordZone.ID) -> CKRecord {
        if let data = trip.systemFields,
           let coder = try? NSKeyedUnarchiver(forReadingFrom: data) {
            coder.requiresSecureCoding = true
            defer { coder.finishDecoding() }
            if let record = CKRecord(coder: coder) {
                return record
            }
        }
        let recordID = CKRecord.ID(recordName: trip.id.uuidString, zoneID: zoneID)
        return CKRecord(recordType: tripRecordType, recordID: recordID)
    }

    /// Copies the trip's values into the record's fields.
    func apply(_ trip: TripSnapshot) throws {
        self[.name] = trip.name as NSString
        self[.destination] = trip.destination as NSString
        self[.startDate] = trip.startDate as NSDate
        self[.endDate] = trip.endDate as NSDate
        self[.lastModified] = trip.lastModified as NSDate
        self[.category] = try JSONEncoder().encode(trip.category) as NSData
        self[.stopsJSON] = try JSONEncoder().encode(trip.stops) as NSData
    }

    /// The record's system fields (record ID, change tag, ...), archived for local storage.
    var archivedSystemFields: Data {
        let coder = NSKeyedArchiver(requiringSecureCoding: true)
        encodeSystemFields(with: coder)
        coder.finishEncoding()
        return coder.encodedData
    }
}

extension TripSnapshot {
    /// Decodes a trip from a CloudKit record, or returns `nil` for malformed records.
    init?(record: CKRecord) {
        guard record.recordType == tripRecordType,
              let id = UUID(uuidString: record.recordID.recordName),
              let name = record[.name] as? String,
              let start = record[.startDate] as? Date,
              let end = record[.endDate] as? Date
        else { return nil }

        let decoder = JSONDecoder()
        let category = (record[.category] as? Data).flatMap { try? decoder.decode(TripCategory.self, from: $0) }
        let stops = (record[.stopsJSON] as? Data).flatMap { try? decoder.decode([StopSnapshot].self, from: $0) }

        self.init(
            id: id,
            name: name,
            destination: record[.destination] as? String ?? "",
            startDate: start,
            endDate: end,
            category: category ?? .leisure,
            stops: stops ?? [],
            lastModified: record[.lastModified] as? Date ?? record.modificationDate ?? .distantPast,
            systemFields: record.archivedSystemFields
        )
    }
}
