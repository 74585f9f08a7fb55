import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Imports envelopes (a JSON array or JSON Lines) into an open store as one
/// all-or-nothing transaction, and chooses how: into a store that has never
/// held an object, a big input takes the bulk path (decoded straight into
/// records on every core, a file read a window at a time, committed as a
/// snapshot); anything else, or an input the bulk path does not take, is
/// decoded, staged and committed as any transaction is. Both give the same
/// objects and history; only the time and memory differ.
///
/// ```swift
/// let store = try Store.open("trips", schema: TripSchema.schema, access: .write)
/// switch try EnvelopeImporter(author: "alice").importFile("trips.json", into: store) {
/// case .unchanged: print("nothing changed")
/// case .committed(let t): print("token \(t.token)")
/// case .bulk(let r): print("token \(r.token), in bulk")
/// }
/// ```
public struct EnvelopeImporter {
    /// How an existing id is treated (insert: an error; upsert; skip-existing).
    public var mode: ImportMode
    /// Who made the change, for history.
    public var author: String
    /// Told each phase as it starts, for a progress display.
    public var progress: ((ImportPhase) -> Void)?
    /// Handed what a big transactional import built (its objects and
    /// transaction), for a program about to exit to keep instead of freeing
    /// object by object; nil frees them before the import returns.
    public var keepUntilExit: ((Any) -> Void)?

    /// An importer; `progress` and `keepUntilExit` are optional.
    public init(mode: ImportMode = .insert, author: String, progress: ((ImportPhase) -> Void)? = nil) {
        self.mode = mode
        self.author = author
        self.progress = progress
    }

    /// Imports the file at `path`. A file that changes between a first read
    /// (for the bulk path) and a second is refused; nothing is imported.
    /// - Throws: `EnvelopeErrors` for bad input, `IOError` when the file
    ///   cannot be read, and whatever `Store.stage` and `Store.commit` throw;
    ///   nothing is written in any of these cases.
    public func importFile(_ path: String, into store: Store) throws -> ImportOutcome {
        try store.checkWritable(.commit)
        var identity: FileIdentity?
        if store.isEmptyForBulkImport {
            progress?(.reading(bytes: FileIO.fileSize(path) ?? 0))
            if let plan = try Store.planBulkImport(file: path, schema: store.schema, options: store.options, identity: &identity),
               let done = try bulk(plan, into: store) {
                return done
            }
        }
        let before = identity
        var bytes = try FileIO.readFile(path, identity: &identity)
        guard before == nil || identity == before else { throw ImportError.inputChanged(path: path) }
        return try importBytes(&bytes, into: store, bulkTried: before != nil)
    }

    /// Imports `bytes` (emptied once read, so that their memory is not held
    /// twice). Throws as `importFile` does.
    public func importBytes(_ bytes: inout [UInt8], into store: Store) throws -> ImportOutcome {
        try importBytes(&bytes, into: store, bulkTried: false)
    }

    private func importBytes(_ bytes: inout [UInt8], into store: Store, bulkTried: Bool) throws -> ImportOutcome {
        try store.checkWritable(.commit)
        if !bulkTried && store.isEmptyForBulkImport {
            progress?(.reading(bytes: bytes.count))
            if let plan = Store.planBulkImport(&bytes, schema: store.schema, options: store.options) {
                // Every reference has its row: the input can go before the snapshot is written.
                let kept = bytes
                bytes = []
                if let done = try bulk(plan, into: store) { return done }
                bytes = kept
            }
        }
        var lastPercent = -1
        var objects = try EnvelopeInput.decode(bytes, schema: store.schema) { done, total in
            let percent = done * 100 / max(total, 1)
            if percent != lastPercent {
                lastPercent = percent
                progress?(.decoding(percent: percent))
            }
        }
        bytes = []
        Trace.mark("parse+decode \(objects.count) objects")
        let count = objects.count
        var tx = store.transaction()
        progress?(.linking(objects: count))
        try store.stage(objects, mode: mode, into: &tx)
        objects = []
        Trace.mark("stage (link)")
        progress?(.writing)
        let committed = try store.commit(tx, author: author)
        keepUntilExit?((tx, committed as Any))
        return committed.map { .committed($0) } ?? .unchanged
    }

    /// Commits a planned bulk import; nil where the store does not take it.
    private func bulk(_ plan: BulkImportPlan, into store: Store) throws -> ImportOutcome? {
        guard store.acceptsBulkImport(plan) else { return nil }
        progress?(.writing)
        return try store.importInBulk(plan, author: author).map { .bulk($0) }
    }
}

/// What an import did.
public enum ImportOutcome: Sendable {
    /// Nothing changed: the input was empty, or held only what the store holds.
    case unchanged
    /// Committed as one transaction by staging the objects.
    case committed(HistoryTransaction)
    /// Committed by the bulk path, into a store that held no object.
    case bulk(BulkImportResult)
}

/// The phases of an import, in order, for a progress display.
public enum ImportPhase: Sendable, Equatable {
    /// Reading and decoding the input (of this many bytes) for the bulk path.
    case reading(bytes: Int)
    /// Decoding the input for a transaction: this far, in percent.
    case decoding(percent: Int)
    /// Staging this many objects: resolving references, applying the mode.
    case linking(objects: Int)
    /// Writing and flushing the transaction.
    case writing
}

/// Why an import was refused before anything was read into the store.
public enum ImportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file changed between its first read and its second.
    case inputChanged(path: String)

    public var description: String {
        switch self {
        case .inputChanged(let path):
            return "\(path) changed while it was imported (it is not the file first read); nothing was imported: import it again"
        }
    }
}
