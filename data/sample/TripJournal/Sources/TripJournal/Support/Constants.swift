import Foundation

// MARK: - Identifiers

/// Identifies a trip across devices; also used as the CloudKit record name.
typealias TripID = UUID

/// Identifies a journal entry within a trip.
typealias EntryID = UUID

/// Completion handler used by the pre-concurrency sync API.
typealias SyncCompletion = @Sendable (Result<SyncReport, any Error>) -> Void

// MARK: - Global constants

/// The CloudKit container declared in the app's iCloud entitlement.
let cloudContainerIdentifier = "iCloud.com.example.tripjournal"

/// App group shared with the widget extension.
let appGroupIdentifier = "group.com.example.tripjournal"

/// The custom record zone that holds all trip records in the private database.
let tripZoneName = "Trips"

/// The CloudKit record type for trips.
let tripRecordType = "Trip"

/// Photos larger than this are downscaled before they are stored.
let maxPhotoBytes = 8 * 1024 * 1024

/// CloudKit accepts at most 400 records per modify request; stay well below.
let syncBatchSize = 200

/// UserDefaults keys.
enum DefaultsKey {
    static let changeToken = "sync.serverChangeToken"
    static let lastSyncDate = "sync.lastSyncDate"
    static let iCloudSyncEnabled = "settings.iCloudSyncEnabled"
}
