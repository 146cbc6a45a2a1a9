import Foundation
import Testing
@testable import TripJournal

/// Tests for the file-backed store, which runs on every supported OS version.
@Suite("JSONFileTripStore")
struct JSONFileTripStoreTests {
    let fileURL = FileManager.default.temporaryDirectory
        .appending(path: "trips-\(UUID().uuidString).json")

    @Test func upsertThenFetch() async throws {
        let store = JSONFileTripStore(fileURL: fileURL)
        let trip = TripSnapshot.draft(named: "Oslo")
        try await store.upsert(trip)

        let loaded = try await store.trip(id: trip.id)
        #expect(loaded?.name == "Oslo")
        #expect(try await store.pendingUploads().map(\.id) == [trip.id])
    }

    @Test func rejectsTripsThatEndBeforeTheyStart() async throws {
        let store = JSONFileTripStore(fileURL: fileURL)
        var trip = TripSnapshot.draft(named: "Backwards")
        trip.endDate = trip.startDate.addingTimeInterval(-86_400)

        await #expect(throws: TripStoreError.self) {
            try await store.upsert(trip)
        }
    }

    @Test("Marking trips uploaded clears them from pending uploads")
    func markUploaded() async throws {
        let store = JSONFileTripStore(fileURL: fileURL)
        let trip = TripSnapshot.draft(named: "Rome")
        try await store.upsert(trip)
        try await store.markUploaded([trip.id: Data([0x01])])

        #expect(try await store.pendingUploads().isEmpty)
        #expect(try await store.trip(id: trip.id)?.systemFields == Data([0x01]))
    }

    @Test(arguments: [0, 1, 7, 30])
    func nightCount(nights: Int) {
        let start = Date(timeIntervalSince1970: 1_767_225_600) // 2026-01-01
        let end = Calendar.current.date(byAdding: .day, value: nights, to: start)!
        #expect((start...end).nightCount == nights)
    }
}

@Test func chunkedSplitsIntoBatches() {
    let batches = Array(1...450).chunked(into: syncBatchSize)
    #expect(batches.map(\.count) == [200, 200, 50])
}
