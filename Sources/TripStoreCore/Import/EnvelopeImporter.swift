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

    /// Imports the file at `path` into an open store. A file that changes
    /// while it is read, or between a first read (for the bulk path) and a
    /// second, is refused; nothing is imported.
    /// - Throws: `EnvelopeErrors` for bad input, `ImportError`, `IOError`
    ///   when the file cannot be read, and whatever `Store.stage` and
    ///   `Store.commit` throw; nothing is written in any of these cases.
    public func importFile(_ path: String, into store: Store) throws -> ImportOutcome {
        try store.checkWritable(.commit)
        return try run(.file(path), folder: store.files.folder, schema: store.schema, options: store.options) { store }
    }

    /// Imports `bytes` into an open store (emptied once read, so that their
    /// memory is not held twice). Throws as `importFile` does.
    public func importBytes(_ bytes: inout [UInt8], into store: Store) throws -> ImportOutcome {
        try store.checkWritable(.commit)
        defer { bytes = [] }
        return try run(.bytes(bytes), folder: store.files.folder, schema: store.schema, options: store.options) { store }
    }

    /// Imports a file (`path`), or `bytes` when `path` is nil, into the
    /// store in `folder`, which `open` opens to write only once the input
    /// has been read and decoded: an input that cannot be read or decoded
    /// leaves no store where there was none, and no writer waits while it is
    /// read. `schema` decodes it (and again the store's, if another writer
    /// changed it meanwhile). Nothing to import where there is no store
    /// opens none (`.unchanged`). Throws as `importFile` does.
    public func importInput(file path: String?, bytes: inout [UInt8], intoStoreAt folder: String, schema: Schema,
                            options: StoreOptions, open: () throws -> Store) throws -> ImportOutcome {
        defer { bytes = [] }
        return try run(path.map { .file($0) } ?? .bytes(bytes), folder: folder, schema: schema, options: options, open: open)
    }

    private enum Input {
        case file(String)
        case bytes([UInt8])
    }

    private func run(_ input: Input, folder: String, schema: Schema, options: StoreOptions, open: () throws -> Store) throws -> ImportOutcome {
        var identity: FileIdentity?
        var bytes: [UInt8] = []
        var store: Store?
        // A store that has never held an object may take the bulk path: planned before it is opened.
        if BulkImporter.mayTake(folder) {
            var plan: BulkImportPlan?
            switch input {
            case .file(let path):
                progress?(.reading(bytes: FileIO.fileSize(path) ?? 0))
                plan = try BulkImporter.plan(file: path, schema: schema, options: options, identity: &identity)
            case .bytes(let given):
                bytes = given
                progress?(.reading(bytes: bytes.count))
                plan = BulkImporter.plan(&bytes, schema: schema, options: options)
            }
            if let plan {
                let opened = try open()
                store = opened
                if BulkImporter(opened).accepts(plan) {
                    // Every reference has its row: the input can go before the snapshot is written.
                    bytes = []
                    progress?(.writing)
                    if let r = try BulkImporter(opened).insert(plan, author: author) { return .bulk(r) }
                    return .unchanged
                }
            }
        }
        switch input {
        case .file(let path):
            let before = identity
            bytes = try FileIO.readFile(path, identity: &identity)
            guard before == nil || identity == before else { throw ImportError.inputChanged(path: path) }
        case .bytes(let given):
            if bytes.isEmpty { bytes = given }
        }
        var objects = try decode(bytes, schema)
        if objects.isEmpty && store == nil && !((try? Store.exists(in: folder)) ?? false) { return .unchanged }
        let target = try store ?? open()
        if target.schema.fingerprint != schema.fingerprint {
            // Another writer changed the store's schema meanwhile: decode with it.
            objects = try decode(bytes, target.schema)
        }
        bytes = []
        Trace.mark("parse+decode \(objects.count) objects")
        var tx = target.transaction()
        progress?(.linking(objects: objects.count))
        try target.stage(objects, mode: mode, into: &tx)
        objects = []
        Trace.mark("stage (link)")
        progress?(.writing)
        let committed = try target.commit(tx, author: author)
        keepUntilExit?((tx, committed as Any))
        return committed.map { .committed($0) } ?? .unchanged
    }

    private func decode(_ bytes: [UInt8], _ schema: Schema) throws -> [DecodedObject] {
        var lastPercent = -1
        return try EnvelopeInput.decode(bytes, schema: schema) { done, total in
            let percent = done * 100 / max(total, 1)
            if percent != lastPercent {
                lastPercent = percent
                progress?(.decoding(percent: percent))
            }
        }
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
