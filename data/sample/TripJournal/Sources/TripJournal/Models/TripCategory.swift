import Foundation

/// What kind of trip this is. Business trips remember the company for expense reports.
enum TripCategory: Codable, Hashable, Sendable {
    case leisure
    case business(company: String)
    case family(members: [String])
    case other(String)

    static let leisureLabel = "Leisure"

    var label: String {
        switch self {
        case .leisure: Self.leisureLabel
        case .business(let company): "Business · \(company)"
        case .family(let members) where members.isEmpty: "Family"
        case .family(let members): "Family · \(members.joined(separator: ", "))"
        case .other(let text): text
        }
    }

    var symbolName: String {
        switch self {
        case .leisure: "sun.max"
        case .business: "briefcase"
        case .family: "figure.2.and.child.holdinghands"
        case .other: "mappin.and.ellipse"
        }
    }
}

/// A destination in the navigation stack. Identifiers, not models, so the path is `Codable`.
enum Route: Hashable, Codable, Sendable {
    case trip(TripID)
    case entry(trip: TripID, entry: EntryID)
    case map(tripID: TripID, focus: String?)
    case settings
}

/// The state of CloudKit sync, as shown in the UI.
enum SyncState: Equatable, Sendable {
    case idle(lastSync: Date?)
    case syncing(progress: Double)
    case failed(message: String, retryable: Bool)
    case disabled(DisabledReason)

    enum DisabledReason: String, Sendable {
        case noAccount = "Sign in to iCloud to sync your trips."
        case restricted = "iCloud is restricted on this device."
        case turnedOff = "iCloud sync is turned off in Settings."
    }

    var isSyncing: Bool {
        if case .syncing = self { return true }
        return false
    }
}

/// The outcome of one sync pass.
struct SyncReport: Sendable, Equatable {
    var uploaded: Int = 0
    var downloaded: Int = 0
    var deleted: Int = 0
    var conflictsResolved: Int = 0

    var changedCount: Int { downloaded + deleted }
}
