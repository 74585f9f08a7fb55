import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Turns import envelopes straight into records, with no Swift value per
/// field, as `SnapshotRecordDecoder` does for snapshot lines (it reads the
/// values the same way). An envelope nested in a relationship becomes a
/// record of its own, noted as a target by its position; a reference by id is
/// noted by its id (copied), to be found once every record is in.
///
/// It gives up at anything it does not read (a non-ASCII id, a property
/// given twice, an envelope without an id, nesting deeper than
/// `maxDepth`…); the whole import then takes `EnvelopeInput`, which reads
/// it or names exactly what is wrong.
struct ImportRecordDecoder {
    typealias GiveUp = FastPathGiveUp

    /// Nesting deeper than this is left to the envelope decoder.
    static let maxDepth = 48

    /// A relationship the input gives for one object.
    struct Link {
        var slot: Int32
        /// Byte offset of the slot in the chunk's records.
        var slotOffset: Int
        /// Its targets in `Chunk.targets`.
        var firstTarget: Int32
        var targetCount: Int32
    }

    /// What one core decoded: records back to back, in input order (an
    /// envelope before the ones nested in it), and the links to make.
    // Sendable although it holds a raw pointer: the worker that fills a chunk
    // hands it whole to the importer, which alone owns it from then on.
    struct Chunk: @unchecked Sendable {
        var base: UnsafeMutableRawPointer?
        var byteCount = 0
        /// Per object: its entity, its record's offset, and its links in `links`.
        var entities: [Int16] = []
        var offsets: [Int] = []
        var firstLink: [Int32] = []
        var linkCounts: [Int32] = []
        var links: [Link] = []
        /// A target: `>= 0` an object of this chunk, `< 0` the reference `-1 - t`.
        var targets: [Int32] = []
        /// Each reference's id (copied, so that the input can go once it is
        /// decoded) and the type it names (-1: none).
        var references = CopiedIDs()
        var referenceTypes: [Int16] = []
        var gaveUp = false

        /// Frees the records when the importer does not take them.
        func discard() { base?.deallocate() }
    }

    let fields: SnapshotRecordDecoder
    private let schema: Schema

    init(schema: Schema) {
        self.schema = schema
        fields = SnapshotRecordDecoder(schema: schema)
    }

    /// Decodes each range of `input` as one envelope (with white space around it).
    func decode(_ envelopes: ArraySlice<Range<Int>>, in input: UnsafeBufferPointer<UInt8>) -> Chunk {
        var state = State(chunk: Chunk(), out: RecordBuffer(capacity: envelopes.reduce(0) { $0 + $1.count } * 3 / 4 + 4096),
                          scratch: RecordBuffer(capacity: 1 << 16))
        state.chunk.entities.reserveCapacity(envelopes.count * 4)
        do {
            for range in envelopes {
                var r = JSONReader(buffer: input, start: range.lowerBound)
                _ = try envelope(&r, allowed: nil, depth: 0, state: &state)
                // Only white space may follow, within the range (a line ends before its newline).
                while r.index < range.upperBound, ArrayElements.isBlank(r.buffer, r.index..<(r.index + 1)) { r.index += 1 }
                guard r.index == range.upperBound else { throw GiveUp() }
            }
        } catch {
            state.chunk.gaveUp = true
        }
        var chunk = state.chunk
        let (base, count) = state.out.release()
        chunk.base = base
        chunk.byteCount = count
        return chunk
    }

    /// The decoder's work in progress: slot ranges and pending links are stacks,
    /// since a nested envelope is read (and its record written) in the middle of its parent.
    private struct State: ~Copyable {
        var chunk: Chunk
        var out: RecordBuffer
        /// Values read, not yet in slot order.
        var scratch: RecordBuffer
        /// Per open envelope, per slot: where its value is in `scratch` (start, end; -1 when not given).
        var slotRanges: [Int] = []
        var pendingLinks: [Link] = []
        var pendingTargets: [Int32] = []
    }

    // MARK: - Envelopes

    /// Reads an envelope, writes its record, and returns its index in the chunk.
    private func envelope(_ r: inout JSONReader, allowed: Int?, depth: Int, state: inout State) throws(GiveUp) -> Int32 {
        guard depth < ImportRecordDecoder.maxDepth else { throw GiveUp() }
        try r.expectByte(UInt8(ascii: "{"))
        let index = Int32(state.chunk.entities.count)
        state.chunk.entities.append(-1)
        state.chunk.offsets.append(0)
        state.chunk.firstLink.append(0)
        state.chunk.linkCounts.append(0)
        var entity = -1
        var id: Range<Int>?
        var dataRead = false
        let scratchMark = state.scratch.count
        let frame = state.slotRanges.count
        let linkMark = state.pendingLinks.count
        repeat {
            if try fields.key(&r, "type") {
                guard entity < 0 else { throw GiveUp() }
                entity = try self.entity(try r.plainString(), r, allowed: allowed)
            } else if try fields.key(&r, "id") {
                guard id == nil else { throw GiveUp() }
                let range = try r.plainString()
                guard !range.isEmpty, !r.contains(0x7F, in: range) else { throw GiveUp() }
                id = range
            } else if try fields.key(&r, "data") {
                guard !dataRead else { throw GiveUp() }
                if entity < 0, let allowed, schema.entities[allowed].closure.count == 1 { entity = allowed }
                guard entity >= 0 else { throw GiveUp() }
                dataRead = true
                state.slotRanges.append(contentsOf: repeatElement(-1, count: 2 * schema.entities[entity].properties.count))
                try data(&r, entity: entity, frame: frame, depth: depth, state: &state)
            } else {
                throw GiveUp()
            }
        } while try r.moreMembers(close: UInt8(ascii: "}"))
        guard dataRead, let id else { throw GiveUp() }

        // The record: the id, then every slot in order.
        let start = state.out.count
        state.out.id(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(r.buffer)[id]))
        let first = fields.firstSlot[entity]
        for slot in 0..<(fields.firstSlot[entity + 1] - first) {
            let at = frame + 2 * slot
            if case .relationship(let toMany, _) = fields.slotKinds[first + slot] {
                // Where the slot is, for its link; a given to-many is marked until linked.
                let given = state.slotRanges[at] >= 0
                state.slotRanges[at] = state.out.count
                RecordWriter.reference(tag: toMany && !given ? RecordTag.toMany : RecordTag.noReference, 0, to: &state.out)
            } else if state.slotRanges[at] >= 0 {
                let from = state.slotRanges[at], to = state.slotRanges[at + 1]
                state.out.bytes(UnsafeRawBufferPointer(start: state.scratch.base + from, count: to - from))
            } else {
                try fields.empty(fields.slotKinds[first + slot], optional: fields.slotOptional[first + slot], to: &state.out)
            }
        }
        state.chunk.entities[Int(index)] = Int16(entity)
        state.chunk.offsets[Int(index)] = start
        state.chunk.firstLink[Int(index)] = Int32(state.chunk.links.count)
        state.chunk.linkCounts[Int(index)] = Int32(state.pendingLinks.count - linkMark)
        for var link in state.pendingLinks[linkMark...] {
            link.slotOffset = state.slotRanges[frame + 2 * Int(link.slot)]
            state.chunk.links.append(link)
        }
        state.pendingLinks.removeSubrange(linkMark...)
        state.slotRanges.removeSubrange(frame...)
        state.scratch.truncate(to: scratchMark)
        return index
    }

    private func data(_ r: inout JSONReader, entity: Int, frame: Int, depth: Int, state: inout State) throws(GiveUp) {
        try r.expectByte(UInt8(ascii: "{"))
        if r.peekByte() == UInt8(ascii: "}") {
            r.index += 1
            return
        }
        let first = fields.firstSlot[entity], count = fields.firstSlot[entity + 1] - first
        var expected = 0
        repeat {
            let k = try r.plainString()
            try r.expectByte(UInt8(ascii: ":"))
            // Keys mostly come in slot order (as every exporter writes them): the next slot first.
            var slot = expected < count && r.bytes(k, equal: fields.slotNames[first + expected]) ? expected : -1
            if slot < 0 {
                for s in 0..<count where r.bytes(k, equal: fields.slotNames[first + s]) {
                    slot = s
                    break
                }
            }
            expected = slot + 1
            let at = frame + 2 * slot
            guard slot >= 0, state.slotRanges[at] < 0 else { throw GiveUp() }
            if case .relationship(let toMany, let destination) = fields.slotKinds[first + slot] {
                guard try relationship(&r, toMany: toMany, destination: destination, slot: slot, depth: depth, state: &state) else { continue }
                state.slotRanges[at] = 0
                state.slotRanges[at + 1] = 0
            } else {
                state.slotRanges[at] = state.scratch.count
                try fields.attribute(&r, fields.slotKinds[first + slot], optional: fields.slotOptional[first + slot], to: &state.scratch)
                state.slotRanges[at + 1] = state.scratch.count
            }
        } while try r.moreMembers(close: UInt8(ascii: "}"))
    }

    /// A relationship's value; false for `null` (nothing given).
    private func relationship(_ r: inout JSONReader, toMany: Bool, destination: Int, slot: Int, depth: Int,
                              state: inout State) throws(GiveUp) -> Bool {
        if r.peekByte() == UInt8(ascii: "n") {
            do { try r.expectLiteral("null") } catch { throw GiveUp() }
            return false
        }
        let mark = state.pendingTargets.count
        if toMany {
            try r.expectByte(UInt8(ascii: "["))
            if r.peekByte() == UInt8(ascii: "]") {
                r.index += 1
            } else {
                repeat {
                    let t = try related(&r, destination: destination, depth: depth, state: &state)
                    state.pendingTargets.append(t)
                } while try r.moreMembers(close: UInt8(ascii: "]"))
            }
        } else {
            let t = try related(&r, destination: destination, depth: depth, state: &state)
            state.pendingTargets.append(t)
        }
        // The nested envelopes are written by now: this link's targets go in one run.
        let first = state.chunk.targets.count
        state.chunk.targets.append(contentsOf: state.pendingTargets[mark...])
        state.pendingTargets.removeSubrange(mark...)
        state.pendingLinks.append(Link(slot: Int32(slot), slotOffset: 0, firstTarget: Int32(first),
                                       targetCount: Int32(state.chunk.targets.count - first)))
        return true
    }

    /// A reference `{"type","id"}` / `{"id"}`, or a nested envelope.
    private func related(_ r: inout JSONReader, destination: Int, depth: Int, state: inout State) throws(GiveUp) -> Int32 {
        let start = r.index
        try r.expectByte(UInt8(ascii: "{"))
        var type = -1
        var id: Range<Int>?
        repeat {
            if try fields.key(&r, "type") {
                guard type < 0 else { throw GiveUp() }
                type = try entity(try r.plainString(), r, allowed: destination)
            } else if try fields.key(&r, "id") {
                guard id == nil else { throw GiveUp() }
                id = try r.plainString()
            } else if try fields.key(&r, "data") {
                r.index = start
                return try envelope(&r, allowed: destination, depth: depth + 1, state: &state)
            } else {
                throw GiveUp()
            }
        } while try r.moreMembers(close: UInt8(ascii: "}"))
        guard let id, !id.isEmpty, !r.contains(0x7F, in: id) else { throw GiveUp() }
        // Without a type the destination must have no subclasses.
        if type < 0 && schema.entities[destination].closure.count > 1 { throw GiveUp() }
        let k = state.chunk.references.append(UnsafeBufferPointer(rebasing: r.buffer[id]))
        state.chunk.referenceTypes.append(Int16(type))
        return -1 - Int32(k)
    }

    /// The entity named by `range`, which must be `allowed` or one of its subclasses when given.
    private func entity(_ range: Range<Int>, _ r: JSONReader, allowed: Int?) throws(GiveUp) -> Int {
        let e = try fields.entity(range, r, expected: allowed)
        if let allowed, !schema.entities[allowed].closure.contains(e) { throw GiveUp() }
        return e
    }
}

extension ImportRecordDecoder {
    /// Decodes the envelopes in pieces that the cores take in turn, results in input order.
    static func decodeInParallel(_ envelopes: [Range<Int>], in input: UnsafeBufferPointer<UInt8>, schema: Schema) -> [Chunk] {
        let shared = SharedBytes(input)
        return Parallel.mapPieces(envelopes.count, parallelFrom: 1024) {
            // A private copy of the schema per core, so the cores share no reference counts.
            let decoder = ImportRecordDecoder(schema: schema.privateCopy())
            return { range in range.isEmpty ? Chunk() : decoder.decode(envelopes[range], in: shared.buffer) }
        }
    }
}
