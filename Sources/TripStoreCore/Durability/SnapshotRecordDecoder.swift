import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Turns snapshot object lines straight into records, with no Swift value
/// per field: strings are copied byte for byte, numbers and dates parsed in
/// place, and each reference is noted as the file range of its id, to be
/// found by binary search once every line is in.
///
/// It reads the form the snapshot writer produces (`type`, `id`, `data`;
/// properties in slot order; references as `{"type","id"}`). A line in any
/// other form, or with anything it does not accept, is left to the envelope
/// decoder, which reads it the slow way or says exactly what is wrong.
struct SnapshotRecordDecoder {
    typealias GiveUp = FastPathGiveUp

    /// A relationship slot to fill in once ids have rows.
    struct LinkFixup {
        /// The line within the chunk.
        var line: Int32
        var slot: Int32
        /// Byte offset of the slot in the chunk's records.
        var slotOffset: Int
        /// The first of its targets in `Chunk.targets`, and how many.
        var firstTarget: Int32
        var targetCount: Int32
    }

    /// What one core decoded: records back to back, and what is left to do.
    // Sendable although it holds a raw pointer: a chunk's records are written
    // by the one worker that made it, then handed whole to the loader, which
    // alone owns them from then on (the arena adopts the block).
    struct Chunk: @unchecked Sendable {
        var base: UnsafeMutableRawPointer?
        var byteCount = 0
        /// Per line: the entity, and the record's offset (or `-1 - k` for `fallback[k]`).
        var entities: [Int16] = []
        var offsets: [Int] = []
        var fallback: [DecodedObject] = []
        var fixups: [LinkFixup] = []
        /// Each target's id, copied (the file is read in pieces).
        var targets = CopiedIDs()
        var error: (line: Int, message: String)?
        /// Whether that error is a reference to nothing (which `verify --repair` can remove).
        var errorIsDangling = false
    }

    enum Kind {
        case string, int, double, bool, date
        /// An array of strings, read without a `Value` per item.
        case stringArray
        case enumeration(Int)
        case other(ValueType)
        case relationship(toMany: Bool, destination: Int)
    }

    let schema: Schema
    private let entityNames: [[UInt8]]
    /// Every entity's slots back to back, from `firstSlot[entity]` to
    /// `firstSlot[entity + 1]` (see `Schema.flatSlotStarts`).
    let firstSlot: [Int]
    let slotNames: [[UInt8]]
    let slotKinds: [Kind]
    let slotOptional: [Bool]
    private let enumCases: [[[UInt8]]]
    private let values: EnvelopeFastDecoder

    init(schema: Schema) {
        self.schema = schema
        entityNames = schema.entities.map { Array($0.name.utf8) }
        firstSlot = schema.flatSlotStarts
        slotNames = schema.entities.flatMap { e in e.properties.map { Array($0.name.utf8) } }
        var cases: [[[UInt8]]] = []
        slotKinds = schema.entities.flatMap { e in
            e.properties.map { p -> Kind in
                switch p.kind {
                case .relationship(let r): return .relationship(toMany: r.isToMany, destination: r.destination)
                case .attribute(let a):
                    switch a.type {
                    case .string: return .string
                    case .int: return .int
                    case .double: return .double
                    case .bool: return .bool
                    case .date: return .date
                    case .array(.string): return .stringArray
                    case .enumeration(let d):
                        cases.append(d.cases.map { Array($0.utf8) })
                        return .enumeration(cases.count - 1)
                    default: return .other(a.type)
                    }
                }
            }
        }
        enumCases = cases
        slotOptional = schema.entities.flatMap { e in e.properties.map { $0.attribute?.isOptional ?? true } }
        values = EnvelopeFastDecoder(schema: schema, wantPaths: false)
    }

    /// Decodes the lines given; `firstLine` is the file line number of the first.
    func decode(_ lines: ArraySlice<Range<Int>>, in file: UnsafeBufferPointer<UInt8>, firstLine: Int) -> Chunk {
        var chunk = Chunk()
        var out = RecordBuffer(capacity: lines.reduce(0) { $0 + $1.count } * 3 / 4 + 4096)
        chunk.entities.reserveCapacity(lines.count)
        chunk.offsets.reserveCapacity(lines.count)
        let fallbackDecoder = RecordDecoder(schema: schema, wantPaths: false, snapshotLines: true)
        for (k, range) in lines.enumerated() {
            let start = out.count
            let fixups = chunk.fixups.count, targets = chunk.targets.count
            do {
                let e = try line(range, in: file, lineIndex: Int32(k), to: &out, chunk: &chunk)
                chunk.entities.append(Int16(e))
                chunk.offsets.append(start)
                continue
            } catch {
                out.truncate(to: start)
                chunk.fixups.removeSubrange(fixups...)
                chunk.targets.removeAll(from: targets)
            }
            var r = JSONReader(buffer: UnsafeBufferPointer(rebasing: file[range]))
            var decoded: [DecodedObject] = []
            do {
                try fallbackDecoder.decodeWhole(&r, at: .line(firstLine + k), into: &decoded)
            } catch {
                chunk.error = (firstLine + k, "\(error)")
                chunk.errorIsDangling = (error as? EnvelopeError)?.kind == .danglingReference
                break
            }
            guard decoded.count == 1 else {
                chunk.error = (firstLine + k, "a snapshot line holds one object, not inline related objects")
                break
            }
            chunk.entities.append(Int16(decoded[0].entity))
            chunk.offsets.append(-1 - chunk.fallback.count)
            chunk.fallback.append(decoded[0])
        }
        let (base, count) = out.release()
        chunk.base = base
        chunk.byteCount = count
        return chunk
    }

    // MARK: - One line

    private func line(_ range: Range<Int>, in file: UnsafeBufferPointer<UInt8>, lineIndex: Int32,
                      to out: inout RecordBuffer, chunk: inout Chunk) throws(GiveUp) -> Int {
        var r = JSONReader(buffer: file, start: range.lowerBound)
        try r.expectByte(UInt8(ascii: "{"))
        guard try key(&r, "type") else { throw GiveUp() }
        let entity = try self.entity(try r.plainString(), r)
        try r.expectByte(UInt8(ascii: ","))
        guard try key(&r, "id") else { throw GiveUp() }
        let id = try r.plainString()
        guard !id.isEmpty else { throw GiveUp() }
        out.id(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(file)[id]))
        try r.expectByte(UInt8(ascii: ","))
        guard try key(&r, "data") else { throw GiveUp() }
        try r.expectByte(UInt8(ascii: "{"))
        let first = firstSlot[entity], end = firstSlot[entity + 1]
        var slot = first
        if r.peekByte() == UInt8(ascii: "}") {
            r.index += 1
        } else {
            repeat {
                let k = try r.plainString()
                try r.expectByte(UInt8(ascii: ":"))
                // Properties come in slot order; the slots skipped hold nothing.
                while slot < end && !r.bytes(k, equal: slotNames[slot]) {
                    try empty(slotKinds[slot], optional: slotOptional[slot], to: &out)
                    slot += 1
                }
                guard slot < end else { throw GiveUp() }
                try value(&r, slotKinds[slot], optional: slotOptional[slot], slot: slot - first, lineIndex: lineIndex, to: &out, chunk: &chunk)
                slot += 1
            } while try r.moreMembers(close: UInt8(ascii: "}"))
        }
        while slot < end {
            try empty(slotKinds[slot], optional: slotOptional[slot], to: &out)
            slot += 1
        }
        try r.expectByte(UInt8(ascii: "}"))
        // The reader sees the whole file: only white space may follow on this line.
        while r.index < range.upperBound {
            let b = r.buffer[r.index]
            guard b == 0x20 || b == 0x09 || b == 0x0D else { throw GiveUp() }
            r.index += 1
        }
        guard r.index == range.upperBound else { throw GiveUp() }
        return entity
    }

    @inline(__always) func empty(_ kind: Kind, optional: Bool, to out: inout RecordBuffer) throws(GiveUp) {
        switch kind {
        case .relationship(let toMany, _):
            RecordWriter.reference(tag: toMany ? RecordTag.toMany : RecordTag.noReference, 0, to: &out)
        default:
            guard optional else { throw GiveUp() }
            out.byte(RecordTag.null)
        }
    }

    @inline(__always) private func value(_ r: inout JSONReader, _ kind: Kind, optional: Bool, slot: Int, lineIndex: Int32,
                                         to out: inout RecordBuffer, chunk: inout Chunk) throws(GiveUp) {
        guard case .relationship(let toMany, let destination) = kind else {
            try attribute(&r, kind, optional: optional, to: &out)
            return
        }
        if r.peekByte() == UInt8(ascii: "n") {
            do { try r.expectLiteral("null") } catch { throw GiveUp() }
            try empty(kind, optional: optional, to: &out)
            return
        }
        let slotOffset = out.count
        RecordWriter.reference(tag: RecordTag.noReference, 0, to: &out)
        let first = chunk.targets.count
        if toMany {
            try r.expectByte(UInt8(ascii: "["))
            if r.peekByte() == UInt8(ascii: "]") {
                r.index += 1
            } else {
                repeat { try reference(&r, destination, chunk: &chunk) } while try r.moreMembers(close: UInt8(ascii: "]"))
            }
        } else {
            try reference(&r, destination, chunk: &chunk)
        }
        chunk.fixups.append(LinkFixup(line: lineIndex, slot: Int32(slot), slotOffset: slotOffset,
                                      firstTarget: Int32(first), targetCount: Int32(chunk.targets.count - first)))
    }

    /// An attribute's value (or null) as its record bytes.
    @inline(__always) func attribute(_ r: inout JSONReader, _ kind: Kind, optional: Bool, to out: inout RecordBuffer) throws(GiveUp) {
        guard let c = r.peekByte() else { throw GiveUp() }
        if c == UInt8(ascii: "n") {
            do { try r.expectLiteral("null") } catch { throw GiveUp() }
            try empty(kind, optional: optional, to: &out)
            return
        }
        switch kind {
        case .string:
            out.byte(RecordTag.string)
            try string(&r, to: &out)
        case .enumeration(let e):
            let range = try r.plainString()
            guard enumCases[e].contains(where: { r.bytes(range, equal: $0) }) else { throw GiveUp() }
            out.byte(RecordTag.string)
            out.varint(range.count)
            out.bytes(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(r.buffer)[range]))
        case .date:
            let range = try r.plainString()
            // A date past what the text can hold (year 9999 rounded up, an offset before year 1) is left to the envelope decoder, which names it.
            guard let d = ISODate.parse(bytes: UnsafeBufferPointer(rebasing: r.buffer[range])), ISODate.isWritable(d) else { throw GiveUp() }
            out.byte(RecordTag.date)
            out.uint64(d.bitPattern)
        case .int, .double:
            guard c == UInt8(ascii: "-") || (c &- UInt8(ascii: "0") < 10) else { throw GiveUp() }
            let n: JSONValue
            do { n = try r.parseNumber() } catch { throw GiveUp() }
            switch (kind, n) {
            case (.int, .int(let i)):
                out.byte(RecordTag.int)
                out.uint64(UInt64(bitPattern: i))
            case (.double, .int(let i)):
                out.byte(RecordTag.double)
                out.uint64(Double(i).bitPattern)
            case (.double, .double(let d)) where d.isFinite:
                out.byte(RecordTag.double)
                out.uint64(d.bitPattern)
            default: throw GiveUp()
            }
        case .bool:
            do {
                if c == UInt8(ascii: "t") { try r.expectLiteral("true"); out.byte(RecordTag.boolTrue); return }
                if c == UInt8(ascii: "f") { try r.expectLiteral("false"); out.byte(RecordTag.boolFalse); return }
            } catch {
                throw GiveUp()
            }
            throw GiveUp()
        case .stringArray:
            // The bytes `RecordWriter.attribute` writes for `.array` of strings.
            try r.expectByte(UInt8(ascii: "["))
            out.byte(RecordTag.array)
            let lengthAt = out.placeholderVarint()
            let countAt = out.count
            out.byte(0)
            var count = 0
            if r.peekByte() == UInt8(ascii: "]") {
                r.index += 1
            } else {
                repeat {
                    out.byte(RecordTag.string)
                    try string(&r, to: &out)
                    count += 1
                } while try r.moreMembers(close: UInt8(ascii: "]"))
            }
            out.insertVarint(count, over: countAt)
            out.patchVarint(out.count - lengthAt - 5, at: lengthAt)
        case .other(let type):
            let v: Value
            do { v = try values.attribute(&r, type, optional: optional) } catch { throw GiveUp() }
            RecordWriter.attribute(v, to: &out)
        case .relationship:
            throw GiveUp()
        }
    }

    /// `{"type":"…","id":"…"}`, or `{"id":"…"}` (a snapshot writes it where the destination has no subclasses).
    @inline(__always) private func reference(_ r: inout JSONReader, _ destination: Int, chunk: inout Chunk) throws(GiveUp) {
        try r.expectByte(UInt8(ascii: "{"))
        let dest = schema.entities[destination]
        if try key(&r, "type") {
            let type = try entity(try r.plainString(), r)
            guard dest.closure.contains(type) else { throw GiveUp() }
            try r.expectByte(UInt8(ascii: ","))
            guard try key(&r, "id") else { throw GiveUp() }
        } else {
            // Written so where the destination had no subclasses; the target's type is checked when linked.
            guard try key(&r, "id") else { throw GiveUp() }
        }
        let id = try r.plainString()
        chunk.targets.append(UnsafeBufferPointer(rebasing: r.buffer[id]))
        try r.expectByte(UInt8(ascii: "}"))
    }

    // MARK: - Bytes

    /// Reads `"name":` when the next key is `name`; false (and nothing read) otherwise.
    @inline(__always) func key(_ r: inout JSONReader, _ name: StaticString) throws(GiveUp) -> Bool {
        guard r.peekByte() == UInt8(ascii: "\"") else { throw GiveUp() }
        let n = name.utf8CodeUnitCount
        let p = name.utf8Start
        let start = r.index + 1
        guard start + n < r.buffer.count, r.buffer[start + n] == UInt8(ascii: "\"") else { return false }
        for k in 0..<n where r.buffer[start + k] != p[k] { return false }
        r.index = start + n + 1
        try r.expectByte(UInt8(ascii: ":"))
        return true
    }

    /// The entity named by `range`; `expected` is tried first (a nested
    /// envelope's type is mostly its relationship's destination).
    func entity(_ range: Range<Int>, _ r: JSONReader, expected: Int? = nil) throws(GiveUp) -> Int {
        if let expected, r.bytes(range, equal: entityNames[expected]) { return expected }
        for e in entityNames.indices where r.bytes(range, equal: entityNames[e]) { return e }
        throw GiveUp()
    }

    /// A string value: copied as is when it has no escapes (its UTF-8 checked
    /// on the way), else decoded.
    @inline(__always) private func string(_ r: inout JSONReader, to out: inout RecordBuffer) throws(GiveUp) {
        guard r.peekByte() == UInt8(ascii: "\"") else { throw GiveUp() }
        let start = r.index + 1
        var i = start
        let buf = r.buffer
        while i < buf.count {
            // Eight bytes at a time while all are plain ASCII that needs no escape.
            while i + 8 <= buf.count {
                let word = UInt64(littleEndian: UnsafeRawPointer(buf.baseAddress! + i).loadUnaligned(as: UInt64.self))
                // Straight to the byte that ends the run: the closing quote, most often.
                let plain = JSONReader.plainPrefix(word)
                i += plain
                if plain < 8 { break }
            }
            guard i < buf.count else { break }
            let b = buf[i]
            if b == UInt8(ascii: "\"") {
                out.varint(i - start)
                out.bytes(UnsafeRawBufferPointer(start: buf.baseAddress! + start, count: i - start))
                r.index = i + 1
                return
            }
            if b == UInt8(ascii: "\\") || b < 0x20 { break }
            if b >= 0x80 {
                r.index = i
                do { try r.skipUTF8Sequence() } catch { throw GiveUp() }
                i = r.index
                continue
            }
            i += 1
        }
        r.index = start - 1
        var s: String
        do { s = try r.parseString() } catch { throw GiveUp() }
        s.withUTF8 { u in
            out.varint(u.count)
            out.bytes(UnsafeRawBufferPointer(u))
        }
    }
}
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension SnapshotRecordDecoder {
    /// Decodes object lines split into one run per core, results in file order.
    static func decodeInParallel(_ lines: [Range<Int>], in file: UnsafeBufferPointer<UInt8>, firstLine: Int, schema: Schema) -> [Chunk] {
        let shared = SharedBytes(file)
        return Parallel.mapRanges(lines.count, parallelFrom: 4096) { range in
            // A private copy of the schema per core, so the cores share no reference counts.
            let decoder = SnapshotRecordDecoder(schema: schema.privateCopy())
            guard !range.isEmpty else { return Chunk() }
            return decoder.decode(lines[range], in: shared.buffer, firstLine: firstLine + range.lowerBound)
        }
    }
}

extension SnapshotRecordDecoder {
    /// The row of every reference target, through the load hash, one core per
    /// chunk; per chunk, the first target not found.
    static func resolveTargets(_ chunks: [Chunk], table: ObjectTable) -> ([[RowID]], [Int?]) {
        let view = table.readView
        let hash = table.loadHash()
        let results = Parallel.map(chunks.count) { k -> ([RowID], Int?) in
            let c = chunks[k]
            var found: [RowID] = []
            found.reserveCapacity(c.targets.count)
            let missing = c.targets.firstFailing { _, id in
                guard let r = hash.row(id, in: view) else { return false }
                found.append(r)
                return true
            }
            return (found, missing)
        }
        return (results.map(\.0), results.map(\.1))
    }
}

