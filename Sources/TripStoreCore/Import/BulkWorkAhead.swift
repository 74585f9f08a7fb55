import TripStoreFormat
import TripStoreSystem

/// What a bulk import's commit needs that its records alone decide, made
/// while the import links: the image's value indexes. They only read the
/// records' attribute values, which nothing changes once they are decoded
/// (linking writes the relationship slots, which this work never reads).
struct BulkWorkAhead: @unchecked Sendable {
    /// The indexes built, and which they are.
    let indexed: [IndexedProperty]
    let indexes: [SavedIndexBytes]

    /// Starts the work on a thread of its own, once `after` is done:
    /// `objects` sorted by id.
    static func start(_ objects: BulkObjects, schema: Schema, after: Parallel.Pending<Bool>?) -> Parallel.Pending<BulkWorkAhead> {
        let records = RecordPointers(records: objects.records), entities = objects.entities, order = objects.sorted
        let indexed = IndexedProperty.declared(schema)
        let schema = schema.privateCopy()
        // Linking writes the relationship slots meanwhile: the values are found without reading those.
        let relationships = RelationshipSlots(schema)
        return Parallel.start {
            _ = after?.wait()
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
            return BulkWorkAhead(indexed: indexed, indexes: indexes)
        }
    }
}

/// A bulk import's commit as the snapshot writer takes it: the work done
/// ahead, and the transaction for the history line.
struct BulkCommitWork: @unchecked Sendable {
    let history: BulkInsertHistory
    let ahead: Parallel.Pending<BulkWorkAhead>

    /// The image's value indexes built ahead (waits for them); nil where they are not those of `indexed`.
    func indexes(for indexed: [IndexedProperty]) -> [SavedIndexBytes]? {
        let done = ahead.wait()
        return IndexedProperty.same(done.indexed, indexed) ? done.indexes : nil
    }
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
