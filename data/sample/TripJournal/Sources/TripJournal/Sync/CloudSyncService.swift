import CloudKit
import Foundation
import os

/// Keeps a ``TripStore`` and the user's private CloudKit database in step.
///
/// The service uploads trips that changed locally, then fetches changes from the custom
/// `Trips` zone since the last server change token. Conflicts are resolved per trip with
/// "most recent `lastModified` wins".
///
/// It's an actor so that the change token, the zone flag and the observer list are never
/// touched from two threads at once; the store is called through its async API.
actor CloudSyncService {
    private let container: CKContainer
    private let database: CKDatabase
    private let zoneID: CKRecordZone.ID
    private let store: any TripStore
    private let defaults: UserDefaults
    private let logger = Logger(subsystem: "com.example.tripjournal", category: "sync")

    private var zoneIsKnownToExist = false
    private var isRunning = false
    private var observers: [UUID: AsyncStream<SyncState>.Continuation] = [:]

    /// The current state, mirrored to every stream returned by ``stateUpdates()``.
    private(set) var state: SyncState = .idle(lastSync: nil) {
        didSet {
            for continuation in observers.values {
                continuation.yield(state)
            }
        }
    }

    init(
        store: any TripStore,
        containerIdentifier: String = cloudContainerIdentifier,
        defaults: UserDefaults = .standard
    ) {
        self.store = store
        self.container = CKContainer(identifier: containerIdentifier)
        self.database = container.privateCloudDatabase
        self.zoneID = CKRecordZone.ID(zoneName: tripZoneName, ownerName: CKCurrentUserDefaultName)
        self.defaults = defaults
        self.state = .idle(lastSync: defaults.object(forKey: DefaultsKey.lastSyncDate) as? Date)
    }

    // MARK: - Observing

    /// A stream of sync states, starting with the current one. Ends when the caller's task
    /// is cancelled.
    func stateUpdates() -> AsyncStream<SyncState> {
        let (stream, continuation) = AsyncStream.makeStream(of: SyncState.self, bufferingPolicy: .bufferingNewest(1))
        let id = UUID()
        observers[id] = continuation
        continuation.yield(state)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(id) }
        }
        return stream
    }

    private func removeObserver(_ id: UUID) {
        observers[id] = nil
    }

    // MARK: - Syncing

    /// Runs one full sync pass: account check, zone creation, upload, then download.
    ///
    /// Calling `sync()` while a pass is running returns an empty report instead of starting
    /// a second pass.
    @discardableResult
    func sync() async throws -> SyncReport {
        guard !isRunning else { return SyncReport() }
        guard defaults.object(forKey: DefaultsKey.iCloudSyncEnabled) as? Bool ?? true else {
            state = .disabled(.turnedOff)
            return SyncReport()
        }
        isRunning = true
        defer { isRunning = false }

        do {
            try await checkAccount()
            state = .syncing(progress: 0)
            try await ensureZoneExists()

            var report = SyncReport()
            report.uploaded = try await pushPendingChanges()
            state = .syncing(progress: 0.5)
            let pulled = try await pullChanges()
            report.downloaded = pulled.changed
            report.deleted = pulled.deleted
            report.conflictsResolved = pulled.conflicts

            let now = Date.now
            defaults.set(now, forKey: DefaultsKey.lastSyncDate)
            state = .idle(lastSync: now)
            logger.info("Sync finished: \(report.uploaded) up, \(report.downloaded) down, \(report.deleted) deleted")
            return report
        } catch let error as CKError {
            state = .failed(message: error.localizedDescription, retryable: error.isRetryable)
            logger.error("Sync failed with CloudKit error \(error.code.rawValue)")
            throw error
        } catch {
            if case .disabled = state {} else {
                state = .failed(message: error.localizedDescription, retryable: false)
            }
            throw error
        }
    }

    /// Legacy entry point for callers that haven't adopted Swift concurrency.
    @available(iOS, introduced: 15.0, deprecated: 17.0, message: "Use `await sync()` instead.")
    nonisolated func sync(completion: @escaping SyncCompletion) {
        Task {
            do {
                completion(.success(try await sync()))
            } catch {
                completion(.failure(error))
            }
        }
    }

    /// Forgets the change token and zone state, e.g. after the iCloud account changed.
    func resetForAccountChange() {
        defaults.removeObject(forKey: DefaultsKey.changeToken)
        defaults.removeObject(forKey: DefaultsKey.lastSyncDate)
        zoneIsKnownToExist = false
        state = .idle(lastSync: nil)
    }

    // MARK: - Steps

    private func checkAccount() async throws {
        switch try await container.accountStatus() {
        case .available:
            return
        case .noAccount:
            state = .disabled(.noAccount)
            throw CKError(.notAuthenticated)
        case .restricted:
            state = .disabled(.restricted)
            throw CKError(.notAuthenticated)
        case .couldNotDetermine, .temporarilyUnavailable:
            throw CKError(.accountTemporarilyUnavailable)
        @unknown default:
            throw CKError(.notAuthenticated)
        }
    }

    private func ensureZoneExists() async throws {
        guard !zoneIsKnownToExist else { return }
        let zone = CKRecordZone(zoneID: zoneID)
        _ = try await database.modifyRecordZones(saving: [zone], deleting: [])
        zoneIsKnownToExist = true
    }

    /// Uploads locally changed trips in batches; returns the number saved.
    private func pushPendingChanges() async throws -> Int {
        let pending = try await store.pendingUploads()
        guard !pending.isEmpty else { return 0 }

        var saved: [TripID: Data] = [:]
        for batch in pending.chunked(into: syncBatchSize) {
            let records = try batch.map { trip -> CKRecord in
                let record = CKRecord.forTrip(trip, in: zoneID)
                try record.apply(trip)
                return record
            }
            let (saveResults, _) = try await database.modifyRecords(
                saving: records,
                deleting: [],
                savePolicy: .ifServerRecordUnchanged,
                atomically: false
            )
            for (recordID, result) in saveResults {
                guard let tripID = UUID(uuidString: recordID.recordName) else { continue }
                switch result {
                case .success(let record):
                    saved[tripID] = record.archivedSystemFields
                case .failure(let error as CKError) where error.code == .serverRecordChanged:
                    try await resolveConflict(error, localID: tripID)
                case .failure(let error):
                    logger.error("Failed to save trip \(tripID): \(error.localizedDescription)")
                }
            }
        }
        try await store.markUploaded(saved)
        return saved.count
    }

    /// Fetches all changes since the stored change token, following `moreComing`.
    private func pullChanges() async throws -> (changed: Int, deleted: Int, conflicts: Int) {
        var token = loadChangeToken()
        var changed = 0, deleted = 0
        var moreComing = true

        while moreComing {
            let result = try await database.recordZoneChanges(inZoneWith: zoneID, since: token)
            for (_, modification) in result.modificationResultsByID {
                guard case .success(let change) = modification,
                      let remote = TripSnapshot(record: change.record) else { continue }
                if let local = try await store.trip(id: remote.id), local.lastModified > remote.lastModified {
                    continue // local edit is newer; it will be pushed on the next pass
                }
                try await store.upsert(remote)
                changed += 1
            }
            for deletion in result.deletions {
                guard let id = UUID(uuidString: deletion.recordID.recordName) else { continue }
                try await store.delete(id: id)
                deleted += 1
            }
            token = result.changeToken
            saveChangeToken(result.changeToken)
            moreComing = result.moreComing
        }
        return (changed, deleted, 0)
    }

    /// Merges a server version that changed since our last fetch: the newer edit wins.
    private func resolveConflict(_ error: CKError, localID: TripID) async throws {
        guard let serverRecord = error.serverRecord,
              let server = TripSnapshot(record: serverRecord) else { return }
        guard let local = try await store.trip(id: localID) else {
            try await store.upsert(server)
            return
        }
        var winner = local.lastModified >= server.lastModified ? local : server
        winner.systemFields = serverRecord.archivedSystemFields
        try await store.upsert(winner)
        logger.notice("Resolved conflict for trip \(localID) in favour of the \(winner == server ? "server" : "local") copy")
    }

    // MARK: - Change token persistence

    private func loadChangeToken() -> CKServerChangeToken? {
        guard let data = defaults.data(forKey: DefaultsKey.changeToken) else { return nil }
        return try? NSKeyedUnarchiver.unarchivedObject(ofClass: CKServerChangeToken.self, from: data)
    }

    private func saveChangeToken(_ token: CKServerChangeToken) {
        let data = try? NSKeyedArchiver.archivedData(withRootObject: token, requiringSecureCoding: true)
        defaults.set(data, forKey: DefaultsKey.changeToken)
    }
}

// MARK: - Helpers

extension CKError {
    /// Errors after which retrying the same request later can succeed.
    var isRetryable: Bool {
        switch code {
        case .networkFailure, .networkUnavailable, .serviceUnavailable,
             .requestRateLimited, .zoneBusy, .accountTemporarilyUnavailable:
            true
        default:
            false
        }
    }
}

extension Array {
    /// Splits the array into consecutive slices of at most `size` elements.
    func chunked(into size: Int) -> [ArraySlice<Element>] {
        precondition(size > 0, "size must be positive")
        return stride(from: 0, to: count, by: size).map { self[$0..<Swift.min($0 + size, count)] }
    }
}
