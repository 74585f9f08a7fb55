import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A store folder opened in memory: every object, its indexes and its history.
///
/// ```swift
/// let store = try Store.open("trips", schema: TripSchema.schema, access: .write)
/// var tx = store.transaction()
/// try store.stage(try EnvelopeInput.decode(bytes, schema: store.schema), mode: .insert, into: &tx)
/// try tx.set("destination", of: "t1", to: .string("Roma"))
/// try store.commit(tx, author: "alice")
/// ```
///
/// A `Store` is confined to one thread; values that leave it (envelopes,
/// changes, query results) are `Sendable`.
public final class Store {
    /// The schema the store was opened with.
    public let schema: Schema
    package let files: StoreFiles
    /// Snapshot thresholds, lock wait, and what the open may use.
    public let options: StoreOptions
    /// Every live object.
    package let table: ObjectTable
    /// The indexes, kept current by every commit.
    package let indexes: StoreIndexes
    /// Retained history, oldest first. A snapshot's history lines are read
    /// the first time this is used (a query never needs them).
    public internal(set) var history: [HistoryTransaction] {
        get { historyLog.all }
        set { historyLog.all = newValue }
    }
    /// Retained history: what is in memory, and the snapshot's lines not yet read.
    let historyLog = HistoryLog()
    /// Whether this process has checked the current snapshot file's checksum
    /// (false after an open from the image, until a compaction needs it).
    var snapshotChecksumChecked = true
    /// Whether the snapshot was loaded from its image rather than its JSON.
    public internal(set) var loadedFromImage = false {
        didSet { snapshotHasImage = loadedFromImage }
    }
    /// Whether the current snapshot has an image that loaded, or that this
    /// store wrote and bound to it (what a background snapshot starts from).
    var snapshotHasImage = false
    /// What the image's checks found damaged after open, if anything (only
    /// with `ImageChecks.onFirstTouch`): answers given since may be wrong, and
    /// the caller should open the store again without the image.
    public var imageDamage: String? { table.imageDamage }
    /// The snapshot image's path.
    public var imagePath: String { files.image(snapshotToken) }

    /// Checks every piece of the image now; false when one is damaged (see `imageDamage`).
    public func checkImage() -> Bool { table.checkEverything() }
    /// How many transactions the history holds, without reading it.
    /// `history`, or `StoreError.damaged` naming the first history line that
    /// could not be read (a line whose checksum held but whose content is not
    /// a transaction): an audit view never leaves a transaction out silently.
    public func checkedHistory() throws -> [HistoryTransaction] {
        let all = history
        if let problem = historyLog.problems.first {
            throw StoreError.damaged(file: problem.file, line: problem.line, detail: problem.detail, repairable: false)
        }
        return all
    }

    /// The retained transactions that pass `filter`, each with only the
    /// changes that pass: `filter.apply(to: checkedHistory())`, at a cost in
    /// proportion to the answer when the filter names an object, deletes, a
    /// type, an author, a kind, a time or a limit (the snapshot's history
    /// index says where to read; it is built the first time it is needed).
    public func history(matching filter: HistoryFilter) throws -> [HistoryTransaction] {
        if let found = historyLog.indexedLookup(filter) { return found }
        return filter.apply(to: try checkedHistory())
    }

    /// What is wrong with the snapshot's history index (a cache), if there
    /// is one, and whether it is merely stale; call before the history is read.
    public func historyIndexProblem() -> (problem: String, stale: Bool)? { historyLog.indexProblem() }
    /// The snapshot's history index file.
    public var historyIndexPath: String { files.historyIndex(snapshotToken) }

    public var historyCount: Int { historyLog.count }
    /// The token of the last committed transaction (0 for a new store).
    public internal(set) var lastToken: Int64 = 0
    /// The token of the loaded snapshot (0 when there is none); the journal is `journal-<this>.jsonl`.
    public internal(set) var snapshotToken: Int64 = 0
    /// Objects the journal deleted at open, to check that nothing still refers to them.
    var replayedDeletes: [ReplayedDelete] = []
    /// References to missing objects that a salvaging open left out (see `StoreOptions.salvageDanglingReferences`).
    public internal(set) var danglingReferences: [DanglingReference] = []
    /// Messages worth showing a person (a torn journal tail that was ignored).
    public internal(set) var warnings: [StoreWarning] = []
    var hasSnapshot = false
    /// The fingerprint in `schema.json`, nil while the store has no record.
    var recordedFingerprint: String?
    /// The schema `schema.json` describes, to check snapshot headers against.
    var recordedDescriptions: [EntityDescription]?
    /// Transactions in the journal (committed since the snapshot).
    public var journalTransactionCount: Int { journal.transactions }
    /// Bytes of complete lines in the journal (for the benchmark).
    package var journalByteCount: Int { journal.size }
    var lock: StoreLock?
    /// What the store may do now (see `StoreState` for the transitions).
    public internal(set) var state: StoreState
    /// The journal after the loaded snapshot (`journal-<snapshotToken>.jsonl`).
    var journal: Journal
    /// What its snapshots have going on beside the commits (see `SnapshotWork`).
    var snapshotWork = SnapshotWork()
    /// Read the journal only this far (a store opened to write a snapshot in
    /// the background, while the writer appends to the same journal).
    var journalReadLimit: Int?

    init(folder: String, schema: Schema, access: StoreAccess, options: StoreOptions) {
        self.schema = schema
        self.files = StoreFiles(folder: folder)
        self.journal = Journal(folder: folder, path: StoreFiles(folder: folder).journal(0))
        self.state = access == .write ? .writing : .reading
        self.options = options
        self.table = ObjectTable(schema: schema)
        self.indexes = StoreIndexes(schema: schema, table: table)
    }

    deinit {
        // The lock is held until the snapshot being written is in place.
        settleBackgroundSnapshot()
        settleFileRemoval()
    }

    /// Opens the store in `folder`: loads the newest snapshot and replays the journal.
    ///
    /// For `.read`, a folder without a store is `StoreError.noStore`. For
    /// `.write`, the writer's lock is taken (waiting up to `options.lockWait`),
    /// the folder is created if needed, and a torn journal tail is cut.
    ///
    /// - Throws: `StoreError.noStore` (reading a folder without a store),
    ///   `StoreError.damaged` / `.danglingReferences` (a file fails its checks),
    ///   `StoreError.newerFormat`, `StoreError.schemaMismatch`,
    ///   `StoreError.locked` (another writer beyond the wait), `IOError`.
    public static func open(_ folder: String, schema: Schema, access: StoreAccess,
                            options: StoreOptions = StoreOptions()) throws -> Store {
        if access == .read {
            guard try StoreFiles(folder: folder).exists() else { throw StoreError.noStore(path: folder) }
            // A writer may compact while we read; a vanished file means: read again.
            var attempt = 0
            var options = options
            while true {
                let store = Store(folder: folder, schema: schema, access: access, options: options)
                do {
                    try store.loadFallingBackToJSON()
                    if store.imageDamage != nil && options.useSnapshotImage {
                        // Found while opening: open from the JSON instead, as if there were no image.
                        options.useSnapshotImage = false
                        continue
                    }
                    return store
                } catch let e as IOError where e.code == ENOENT && attempt < 5 {
                    attempt += 1
                }
            }
        }
        do {
            try FileIO.makeDirectory(folder)
        } catch let e as IOError {
            throw StoreError.io(e)
        }
        guard FileIO.isDirectory(folder) else { throw StoreError.notAFolder(path: folder) }
        var store = Store(folder: folder, schema: schema, access: access, options: options)
        store.lock = try StoreLock(folder: folder, wait: options.lockWait)
        try store.loadFallingBackToJSON()
        if store.imageDamage != nil {
            var fromJSON = options
            fromJSON.useSnapshotImage = false
            let again = Store(folder: folder, schema: schema, access: access, options: fromJSON)
            again.lock = store.lock
            store.lock = nil
            store = again
            try StoreLoader(store).load()
        }
        try store.checkWritable(.repair)
        try store.repairTornTail()
        try store.finishInterruptedMigration()
        // A compaction running without the lock is writing its own; it removes what an earlier one left.
        let compacting = LocklessCompaction.isRunning(in: folder)
        for t in try store.files.list().temporary where !(compacting && LocklessCompaction.isItsFile(t)) { FileIO.unlink(t) }
        return store
    }

    /// This store read again from its JSON files, for damage to the image
    /// that a read or a commit met after the open (`imageDamage`): what the
    /// store holds is the JSON's, so nothing committed is lost, and the work
    /// that met the damage can run again on the store this returns. A writer
    /// hands its lock over (no other writer can come between), removes the
    /// damaged image and writes a new one from the JSON; a reader leaves the
    /// image to the next writer; the past (`past(at:)`) is rebuilt from the
    /// JSON at its token. This store is closed afterwards. The new
    /// store's `warnings` end with `.imageReadAgain`. Reading the JSON costs
    /// what an open without an image costs: tens of seconds at a million objects.
    /// - Throws: what opening throws (a damaged JSON file, `IOError`); this
    ///   store then stays as it was.
    public func reopenedFromJSON() throws -> Store {
        settleBackgroundSnapshot()
        let damage = imageDamage ?? "damaged"
        let file = imagePath
        // The one check of whether this store may write decides whether it removes the image.
        let writer = mayWrite(.repair)
        var again = options
        again.imageChecks = .onFirstTouch
        if case .past(let token) = state {
            // The past stays the past: rebuilt from the JSON at the same token.
            again.useSnapshotImage = false
            let past = try Store.open(files.folder, schema: schema, asOf: .token(token), options: again)
            state = .closed
            journal.close()
            historyLog.close()
            past.warnings = warnings + [.imageReadAgain(file: file, detail: damage, rebuilt: false)]
            return past
        }
        if writer {
            // Gone, the image is written again by the load below.
            FileIO.unlink(file)
        } else {
            again.useSnapshotImage = false
        }
        let store = Store(folder: files.folder, schema: schema, access: writer ? .write : .read, options: again)
        store.lock = lock
        do {
            try StoreLoader(store).load()
        } catch {
            store.lock = nil
            throw error
        }
        lock = nil
        state = .closed
        journal.close()
        historyLog.close()
        store.warnings = warnings + [.imageReadAgain(file: file, detail: damage, rebuilt: writer && store.snapshotHasImage)]
        return store
    }

    /// `load`, except that a failure while the image shows damage is the
    /// image's fault: the caller opens again from the JSON.
    private func loadFallingBackToJSON() throws {
        do {
            try StoreLoader(self).load()
        } catch {
            if imageDamage == nil { throw error }
        }
    }

    /// A new transaction over the current state.
    public func transaction() -> TransactionBuilder {
        TransactionBuilder(table: table, baseToken: lastToken)
    }

    /// The object with that id.
    public func object(id: String) -> StoredObject? {
        table.row(for: id).flatMap { table.object(at: $0) }
    }

    /// The object at a row of a query result or a relationship value (rows
    /// name objects while the store is open; they are never written to disk).
    public func object(at row: RowID) -> StoredObject? {
        table.object(at: row)
    }

    /// Sizes of the files on disk, for `stats`.
    public var fileSizes: (snapshot: Int, journal: Int) {
        (hasSnapshot ? FileIO.fileSize(files.snapshot(snapshotToken)) ?? 0 : 0,
         FileIO.fileSize(files.journal(snapshotToken)) ?? 0)
    }

    /// Puts an automatic snapshot being written in the background in place
    /// (waiting for it), then releases the writer's lock (also released
    /// when the store is freed).
    public func close() {
        settleBackgroundSnapshot()
        writeJournalStateForNextOpen()
        state = .closed
        journal.close()
        historyLog.close()
        // Removing replaced files needs no lock (no writer makes a file of an
        // older token again), and freeing a big one's blocks takes a while.
        lock = nil
        settleFileRemoval()
    }

    /// An empty store in memory, with no folder (for validating a file when no store exists).
    public static func empty(schema: Schema) -> Store {
        Store(folder: "", schema: schema, access: .read, options: StoreOptions())
    }

    /// The schema the store in `folder` was last written with (see `SchemaRecord.schema(in:)`).
    public static func recordedSchema(in folder: String) throws -> Schema? {
        try SchemaRecord.schema(in: folder)
    }

    /// Whether the folder says which schema wrote it (a record or a snapshot header).
    var schemaIsRecorded: Bool { recordedFingerprint != nil || hasSnapshot }

    /// A writer's first step: finishes a migration that committed before
    /// its schema record took its place, or removes one that did not commit.
    func finishInterruptedMigration() throws {
        guard FileIO.exists(files.pendingSchemaRecord) else { return }
        if try SchemaRecord.committedPending(files) != nil {
            try FileIO.rename(files.pendingSchemaRecord, files.schemaRecord)
        } else {
            FileIO.unlink(files.pendingSchemaRecord)
        }
        try FileIO.fsyncDirectory(files.folder)
    }
}
