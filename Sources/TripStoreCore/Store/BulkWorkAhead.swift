import TripStoreFormat
import TripStoreSystem

/// What a bulk import's commit needs that its records alone decide, made
/// while the import links: the image's value indexes and the history line's
/// changes. Both only read the records' ids and attribute values, which
/// nothing changes once they are decoded (linking writes the relationship
/// slots, which this work never reads).
struct BulkWorkAhead: @unchecked Sendable {
    /// The indexes built, and which they are.
    let indexed: [IndexedProperty]
    let indexes: [SavedIndexBytes]
    /// The history line but for its header (see `BulkInsertHistory`).
    let changes: BulkInsertHistory.Line

    /// Starts the work on a thread of its own, once `after` is done:
    /// `objects` sorted by id, `runs` as history lists them.
    static func start(_ objects: BulkObjects, runs: [(entity: Int, objects: [Int32])], schema: Schema,
                      after: Parallel.Pending<Bool>?) -> Parallel.Pending<BulkWorkAhead> {
        let records = RecordPointers(records: objects.records), entities = objects.entities, order = objects.sorted
        let indexed = IndexedProperty.declared(schema)
        let named = runs.map { (schema.entities[$0.entity].name, $0.objects) }
        let schema = schema.privateCopy()
        // Linking writes the relationship slots meanwhile: the values are found without reading those.
        let relationships = RelationshipSlots(schema)
        return Parallel.start {
            _ = after?.wait()
            let changes = BulkInsertHistory.changes(named, records: records)
            Trace.mark("bulk: history changes encoded ahead")
            // Positions in id order are the image's rows.
            let values = IndexedValues.collect(order.count, schema: schema, indexed: indexed,
                                               entity: { Int(entities[Int(order[$0])]) },
                                               record: { UnsafeRawPointer(records.records[Int(order[$0])]) },
                                               prefetch: { Prefetch.read(records.records[Int(order[$0])]) },
                                               // Objects in id order: their entities and record pointers are misses too.
                                               farAhead: { g in
                                                   let o = Int(order[g])
                                                   entities.withUnsafeBufferPointer { Prefetch.read($0.baseAddress! + o) }
                                                   records.records.withUnsafeBufferPointer { Prefetch.read($0.baseAddress! + o) }
                                               },
                                               slot: { RecordReader.slot($0, $2, relationships: relationships.of($1)) })
            // Indexed attributes are never relationships: no list is read.
            let indexes = ObjectTable.indexBlobs(values, indexed: indexed, lists: RelationshipLists())
            withExtendedLifetime(relationships) {}
            Trace.mark("bulk: value indexes built ahead")
            return BulkWorkAhead(indexed: indexed, indexes: indexes, changes: changes)
        }
    }
}

/// A bulk import's commit as the snapshot writer takes it: the work done
/// ahead, and the commit's token, time and author for the history line.
struct BulkCommitWork: @unchecked Sendable {
    let token: Int64
    let timestamp: Double
    let author: String
    let ahead: Parallel.Pending<BulkWorkAhead>

    /// The whole history line (waits for the work ahead).
    func line() -> BulkInsertHistory.Line {
        BulkInsertHistory.line(token: token, timestamp: timestamp, author: author, changes: ahead.wait().changes)
    }

    /// The image's value indexes built ahead (waits for them); nil where they are not those of `indexed`.
    func indexes(for indexed: [IndexedProperty]) -> [SavedIndexBytes]? {
        let done = ahead.wait()
        return IndexedProperty.same(done.indexed, indexed) ? done.indexes : nil
    }

    /// Waits for the work ahead: nothing may free the records while it reads them.
    func finish() { _ = ahead.wait() }
}

/// Which slots are relationships, entity by entity, as flags a reader
/// indexes without retaining anything per value.
private final class RelationshipSlots: @unchecked Sendable {
    private let flags: UnsafeMutablePointer<Bool>
    private let firstSlot: [Int]

    init(_ schema: Schema) {
        let all = schema.entities.flatMap { $0.properties.map { $0.relationship != nil } }
        flags = .allocate(capacity: max(1, all.count))
        flags.initialize(from: all, count: all.count)
        firstSlot = schema.flatSlotStarts
    }

    deinit { flags.deallocate() }

    /// The flags of `entity`'s slots (valid while this lives).
    @inline(__always) func of(_ entity: Int) -> UnsafePointer<Bool> { UnsafePointer(flags + firstSlot[entity]) }
}
