import Foundation
import SwiftData

/// A dated note, optionally with a photo, written during a trip.
@available(iOS 17.0, *)
@Model
final class JournalEntry {
    var id: EntryID = UUID()
    var text: String = ""
    var createdAt: Date = Date.now
    var mood: Mood = Mood.good

    /// Stored next to the database rather than inside it.
    @Attribute(.externalStorage)
    var photoData: Data?

    var trip: Trip?

    init(text: String, mood: Mood = .good, photoData: Data? = nil) {
        self.text = text
        self.mood = mood
        self.photoData = photoData
    }
}

/// How the day felt. Stored as a Codable composite attribute.
enum Mood: String, Codable, CaseIterable, Sendable {
    case great, good, tired, rough

    var emoji: String {
        switch self {
        case .great: "🤩"
        case .good: "🙂"
        case .tired: "🥱"
        case .rough: "😣"
        }
    }
}
