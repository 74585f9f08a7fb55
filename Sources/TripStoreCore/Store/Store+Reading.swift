import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// What a program reads of an open store besides queries: counts, rows and
/// their ids, envelopes, and where its files are. A row names an object
/// while the store is open (see `RowID`).
extension Store {
    /// The folder the store lives in.
    public var folder: String { files.folder }

    /// Whether `folder` holds a store (a snapshot, a journal or a schema record).
    ///
    /// ```swift
    /// if try !Store.exists(in: "trips") { print("no store yet") }
    /// ```
    public static func exists(in folder: String) throws -> Bool {
        try StoreFiles(folder: folder).exists()
    }

    /// Whether a writer holds the lock of the store in `folder` now (a store
    /// whose first import is still running exists only once it commits).
    public static func isLocked(_ folder: String) -> Bool {
        StoreLock.isHeld(folder: folder)
    }

    /// Removes `folder` if it holds nothing but what a first open made (its
    /// lock and an empty journal): what a failed first import leaves.
    public static func removeIfUnused(_ folder: String) {
        StoreFiles(folder: folder).removeIfUnused()
    }

    /// Temporary files a write cut short left behind (the next writer removes them).
    public var leftoverTemporaryFiles: [String] { Store.leftoverTemporaryFiles(in: files.folder) }

    /// Files a write cut short left in `folder`, a store or not: temporary
    /// files (a first import killed before it committed leaves its
    /// snapshot's, and no store), and the files of a snapshot and journal
    /// that a newer snapshot replaced, which a compaction killed after its
    /// snapshot took their place had not removed yet (they may hold values
    /// a redaction removed). A writer's open removes them.
    public static func leftoverTemporaryFiles(in folder: String) -> [String] {
        let files = StoreFiles(folder: folder)
        guard let listing = try? files.list() else { return [] }
        var all = listing.temporary
        if let newest = listing.snapshots.last {
            var older: [String] = listing.snapshots.filter { $0 < newest }.flatMap { [files.snapshot($0), files.image($0)] }
            older += listing.journals.filter { $0 < newest }.map { files.journal($0) }
            older += files.historyIndexTokens().filter { $0 < newest }.map { files.historyIndex($0) }
            older += files.journalStateTokens().filter { $0 < newest }.map { files.journalState($0) }
            all += older.filter { FileIO.exists($0) }
        }
        // A compaction running without the lock is writing its own, and removing what its snapshot replaced.
        guard LocklessCompaction.isRunning(in: folder) else { return all }
        return listing.temporary.filter { !LocklessCompaction.isItsFile($0) }
    }

    /// How many live objects the store holds.
    public var objectCount: Int { table.count }

    /// How many live objects are of exactly this entity (subclasses not included).
    public func objectCount(of entity: Entity) -> Int {
        entity.id < table.countByEntity.count ? table.countByEntity[entity.id] : 0
    }

    /// The declared indexes, each as `Entity.property` with its kind, for a listing.
    public var indexDescriptions: [String] { indexes.descriptions }

    /// The row of the live object with that id (ids are compared in NFC).
    public func row(forID id: String) -> RowID? { table.row(for: id) }

    /// Live ids that begin with `prefix`, in byte order, at most `limit`
    /// (for completing an id): reads only the rows near the prefix.
    public func ids(withPrefix prefix: String, limit: Int = 100) -> [String] {
        table.ids(withPrefix: prefix, limit: limit)
    }

    /// The id of the live object at a row, without decoding the rest of it.
    public func id(at row: RowID) -> String? { table.id(at: row) }

    /// The entity of the live object at a row.
    public func entity(at row: RowID) -> Entity? {
        table.entity(at: row).map { schema.entities[$0] }
    }

    /// Every live row in the order of their ids' bytes (the snapshot's order).
    public func rowsInIDOrder() -> [RowID] { table.rowsSortedByID() }

    /// Rows for ids; an unknown id is `StoreError.notFound`.
    public func rows(forIDs ids: [String]) throws -> [RowID] {
        try ids.map { id in
            guard let r = table.row(for: id) else { throw StoreError.notFound(id: id) }
            return r
        }
    }

    /// Writes an object as an envelope, `{"type":…,"id":…,"data":{…}}`, its
    /// relationships as references; `fields`, when given, keeps only those properties.
    ///
    /// ```swift
    /// var w = JSONWriter()
    /// if let o = store.object(id: "rome-summit") { store.writeEnvelope(o, to: &w) }
    /// print(w.string)
    /// ```
    public func writeEnvelope(_ object: StoredObject, to w: inout JSONWriter, fields: Set<String>? = nil) {
        EnvelopeEncoder.write(object, schema: schema, lookup: table, to: &w, fields: fields)
    }

    /// Writes one property's value as JSON (a relationship as references).
    public func writeValue(_ value: Value, of property: Property, to w: inout JSONWriter) {
        EnvelopeEncoder.writeValue(value, of: property, schema: schema, lookup: table, to: &w)
    }
}

extension HistoryTransaction {
    /// Writes the transaction as one JSON line of history: `envelopes` adds
    /// each insert's envelope (by id), `deletedValues` each delete's values;
    /// both together make a line of the change feed, which
    /// `FeedApplier.apply(_:line:)` replays.
    public func write(to w: inout JSONWriter, envelopes: [String: JSONValue]? = nil, deletedValues: Bool = false) {
        HistoryCoding.write(self, to: &w, envelopes: envelopes, deletedValues: deletedValues)
    }
}
