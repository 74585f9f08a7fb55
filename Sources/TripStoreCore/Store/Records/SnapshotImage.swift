import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `snapshot-N.image`: the records of `snapshot-N.jsonl` as they sit in
/// memory, so that opening a store is reading one file instead of parsing
/// JSON. It is a cache, never the truth: it names the snapshot file it was
/// made from (token, size and trailer checksum, and the file's device, inode,
/// modification and status-change times as the file system reports them after
/// the rename, so any later change to that file through the file system makes
/// the image ignored) and the schema, carries a checksum of its own, and is
/// ignored (the JSON is loaded) when anything does not match.
/// It is written after the snapshot is durable, without fsync: a torn image
/// fails its checksum and costs only speed.
///
/// Layout (little-endian): magic, the header fields below, then rows'
/// entities (Int16), record offsets (Int64), id prefixes (UInt64), list
/// lengths (Int32), list elements (Int32), the records, and a CRC-32C of all
/// bytes before it.
struct SnapshotImage {
    static let magic = Array("TSIMAGE3".utf8)

    /// What ties an image to its snapshot.
    struct Binding: Equatable {
        var token: Int64
        var snapshotBytes: Int64
        var snapshotCRC: UInt32
        var fingerprint: [UInt8]
        /// The snapshot file itself, as `fstat` saw it.
        var file: FileIdentity
    }

    struct Header {
        var binding: Binding
        var historyStart: Int64
        var historyCount: Int64
        var rows: Int64
        var lists: Int64
        var listElements: Int64
        var recordBytes: Int64

        static let byteCount = 8 + 8 + 8 + 4 + 16 + 8 * 4 + 8 * 6

        func encoded() -> [UInt8] {
            var out = SnapshotImage.magic
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
            put(binding.token); put(binding.snapshotBytes); put(binding.snapshotCRC)
            out.append(contentsOf: binding.fingerprint.prefix(16) + Array(repeating: 0, count: max(0, 16 - binding.fingerprint.count)))
            put(binding.file.device); put(binding.file.inode); put(binding.file.modified); put(binding.file.changed)
            put(historyStart); put(historyCount); put(rows); put(lists); put(listElements); put(recordBytes)
            return out
        }

        static func decode(_ b: [UInt8]) -> Header? {
            guard b.count == byteCount, Array(b[0..<8]) == SnapshotImage.magic else { return nil }
            var at = 8
            func get<T: FixedWidthInteger>(_: T.Type) -> T {
                var v: T = 0
                withUnsafeMutableBytes(of: &v) { $0.copyBytes(from: b[at..<(at + MemoryLayout<T>.size)]) }
                at += MemoryLayout<T>.size
                return T(littleEndian: v)
            }
            let token = get(Int64.self), size = get(Int64.self), crc = get(UInt32.self)
            let fp = Array(b[at..<(at + 16)])
            at += 16
            let file = FileIdentity(device: get(UInt64.self), inode: get(UInt64.self), size: size,
                                    modified: get(Int64.self), changed: get(Int64.self))
            return Header(binding: Binding(token: token, snapshotBytes: size, snapshotCRC: crc, fingerprint: fp, file: file),
                          historyStart: get(Int64.self), historyCount: get(Int64.self), rows: get(Int64.self),
                          lists: get(Int64.self), listElements: get(Int64.self), recordBytes: get(Int64.self))
        }
    }

    static func fingerprint(_ schema: Schema) -> [UInt8] {
        let b = Array(schema.fingerprint.utf8.prefix(16))
        return b + Array(repeating: 0, count: 16 - b.count)
    }
}

extension ObjectTable {
    /// How each slot is renumbered in an image: relationship slots hold rows
    /// and list numbers that change with the new row order.
    private enum ImageSlot {
        case attribute
        case toOne
        /// Stored sides keep their order; derived sides are sorted, as loading the JSON makes them.
        case toMany(derived: Bool)
    }

    /// Writes the image of the table with `order` as the new row order (the
    /// snapshot's id order) to `fd`; the bytes written.
    func writeImage(order: [RowID], header: SnapshotImage.Header, to fd: Int32, path: String) throws {
        let plans: [[ImageSlot]] = schema.entities.map { e in
            e.properties.map { p in
                guard let r = p.relationship else { return .attribute }
                return r.isToMany ? .toMany(derived: !r.isStoredSide) : .toOne
            }
        }
        var newRow = [RowID](repeating: -1, count: rowCount)
        for (i, r) in order.enumerated() { newRow[Int(r)] = RowID(i) }
        var entities: [Int16] = []
        var offsets: [Int64] = []
        var prefixes: [UInt64] = []
        var listLengths: [Int32] = [0]
        var listElements: [Int32] = []
        entities.reserveCapacity(order.count)
        offsets.reserveCapacity(order.count)
        prefixes.reserveCapacity(order.count)
        var records = RecordBuffer(capacity: max(4096, arena.totalBytes - arena.unusedBytes + 4096))
        for r in order {
            let e = Int(entityOfRow[Int(r)])
            entities.append(Int16(e))
            offsets.append(Int64(records.count))
            let record = self.record(r)
            let (id, firstSlot) = RecordReader.id(record)
            prefixes.append(ObjectTable.prefix(id))
            let length = RecordReader.length(record, count: plans[e].count)
            let at = records.count
            records.bytes(UnsafeRawBufferPointer(start: record, count: length))
            // The copy has the same layout: patch its relationship slots in place.
            var value = firstSlot
            for plan in plans[e] {
                defer { value = RecordReader.skip(value) }
                let tag = value.load(as: UInt8.self)
                let patchAt = at + (value - record) + 1
                switch plan {
                case .attribute: continue
                case .toOne:
                    guard tag == RecordTag.toOne else { continue }
                    let target = Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))
                    records.patchInt32(newRow[Int(target)], at: patchAt)
                case .toMany(let derived):
                    guard let n = RecordReader.listNumber(value), n != 0 else { continue }
                    let first = listElements.count
                    for t in lists[n] { listElements.append(newRow[Int(t)]) }
                    if derived { listElements[first...].sort() }
                    records.patchInt32(Int32(listLengths.count), at: patchAt)
                    listLengths.append(Int32(listElements.count - first))
                }
            }
        }
        var h = header
        h.rows = Int64(order.count)
        h.lists = Int64(listLengths.count)
        h.listElements = Int64(listElements.count)
        h.recordBytes = Int64(records.count)
        var crc: UInt32 = 0
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            crc = CRC32C.checksum(bytes, continuing: crc)
            try FileIO.writeAll(fd, bytes, path: path)
        }
        try h.encoded().withUnsafeBytes(write)
        try entities.withUnsafeBytes(write)
        try offsets.withUnsafeBytes(write)
        try prefixes.withUnsafeBytes(write)
        try listLengths.withUnsafeBytes(write)
        try listElements.withUnsafeBytes(write)
        CrashPoint.hit("image-mid-write")
        try write(records.contents)
        var end = crc.littleEndian
        try withUnsafeBytes(of: &end) { try FileIO.writeAll(fd, $0, path: path) }
    }

    /// Loads an image into this empty table and returns its header; nil (and
    /// the table untouched) when the image does not fit `binding`, `accept`
    /// refuses its header, or it fails a check.
    func loadImage(fd: Int32, binding: SnapshotImage.Binding, accept: (SnapshotImage.Header) -> Bool) -> SnapshotImage.Header? {
        var at = 0
        var crc: UInt32 = 0
        func read(_ buffer: UnsafeMutableRawBufferPointer) -> Bool {
            guard FileIO.read(fd, into: buffer, at: at) == buffer.count else { return false }
            crc = CRC32C.checksum(UnsafeRawBufferPointer(buffer), continuing: crc)
            at += buffer.count
            return true
        }
        var headerBytes = [UInt8](repeating: 0, count: SnapshotImage.Header.byteCount)
        guard headerBytes.withUnsafeMutableBytes(read), let h = SnapshotImage.Header.decode(headerBytes), h.binding == binding, accept(h),
              h.rows >= 0, h.rows < Int64(Int32.max), h.lists >= 1, h.lists <= Int64(Int32.max),
              h.listElements >= 0, h.recordBytes >= 0, h.recordBytes < (1 << RecordArena.offsetBits) else { return nil }
        let rows = Int(h.rows)
        // Every count must fit the file before anything is allocated for it.
        var expected = SnapshotImage.Header.byteCount + 4
        for (count, width) in [(h.rows, 18), (h.lists, 4), (h.listElements, 4), (h.recordBytes, 1)] {
            let (bytes, o1) = Int(count).multipliedReportingOverflow(by: width)
            let (sum, o2) = expected.addingReportingOverflow(bytes)
            guard !o1, !o2 else { return nil }
            expected = sum
        }
        guard (try? FileIO.size(fd, path: "")) == expected else { return nil }
        func array<T>(_: T.Type, _ n: Int) -> [T]? {
            var ok = false
            let a = [T](unsafeUninitializedCapacity: n) { buf, count in
                ok = read(UnsafeMutableRawBufferPointer(buf))
                count = n
            }
            return ok ? a : nil
        }
        guard let entities = array(Int16.self, rows), let offsets = array(Int64.self, rows),
              let prefixes = array(UInt64.self, rows), let lengths = array(Int32.self, Int(h.lists)),
              let elements = array(Int32.self, Int(h.listElements)) else { return nil }
        let recordBytes = Int(h.recordBytes)
        // The records are mapped, not read: no copy, no zeroed pages. The
        // mapping is private, so patching a record never reaches the file.
        // The file must hold all of it (a mapped page past its end is a crash,
        // not an error); it is never truncated in place, only replaced.
        guard (try? FileIO.size(fd, path: "")) == at + recordBytes + 4 else { return nil }
        let page = FileIO.pageSize
        let mapFrom = at / page * page, skip = at - mapFrom
        let mapLength = skip + recordBytes + 4
        guard let mapped = FileIO.mapPrivate(fd, length: mapLength, offset: mapFrom) else { return nil }
        var keep = false
        defer { if !keep { FileIO.unmap(mapped, length: mapLength) } }
        let block = mapped + skip
        // The checksum on one core while the other checks every record's bounds,
        // the references and the id order; nothing is used unless both pass.
        let smallSections = crc
        let records = SharedBytes(UnsafeRawBufferPointer(start: block, count: recordBytes + 4))
        let storedCRC = UInt32(littleEndian: (UnsafeRawPointer(block) + recordBytes).loadUnaligned(as: UInt32.self))
        let schema = self.schema
        let listCount = lengths.count
        let sound = Parallel.map(2) { k in
            let bytes = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(records.buffer)[0..<recordBytes])
            if k == 0 { return CRC32C.checksum(bytes, continuing: smallSections) == storedCRC }
            return ObjectTable.imageRecordsAreSound(bytes, schema: schema, entities: entities, offsets: offsets,
                                                    prefixes: prefixes, lists: listCount)
        }
        guard sound.allSatisfy({ $0 }) else { return nil }
        var lists: [[RowID]] = []
        lists.reserveCapacity(lengths.count)
        var e = 0
        for n in lengths {
            guard n >= 0, e + Int(n) <= elements.count else { return nil }
            let list = Array(elements[e..<(e + Int(n))])
            guard list.allSatisfy({ $0 >= 0 && Int($0) < rows }) else { return nil }
            lists.append(list)
            e += Int(n)
        }
        guard lists.first?.isEmpty == true,
              ObjectTable.imageValuesAreSound(UnsafeRawPointer(block), schema: schema, entities: entities, offsets: offsets, lists: lists)
        else { return nil }
        keep = true
        let base = arena.adoptMapping(start: mapped, length: mapLength, skip: skip, count: recordBytes)
        adoptImage(entities: entities, locators: offsets.map { base | $0 }, prefixes: prefixes, lists: lists)
        return h
    }

    /// Every value of an image fits its slot as the schema declares it: the
    /// tag of each attribute's type (nil only where optional, an enum value
    /// one of its cases), a reference or list in each relationship slot, and
    /// every related row an object of the relationship's type. Walks the
    /// records without decoding them (the bounds were checked first).
    static func imageValuesAreSound(_ block: UnsafeRawPointer, schema: Schema, entities: [Int16], offsets: [Int64],
                                    lists: [[RowID]]) -> Bool {
        let kinds: [[Bool]] = schema.entities.map { e in schema.entities.map { schema.isKind(e.id, of: $0.id) } }
        // Per entity and slot, what may stand there, as plain values.
        let plans: [[ImageSlotCheck]] = schema.entities.map { e in e.properties.map(ImageSlotCheck.init) }
        let shared = SharedBytes(UnsafeRawBufferPointer(start: block, count: 1))
        let parts = entities.count >= 65_536 ? 2 : 1
        let results = Parallel.map(parts) { k -> Bool in
            let block = UnsafeRawPointer(shared.buffer.baseAddress!)
            for i in Parallel.ranges(entities.count, parts: parts)[k] {
                let entity = Int(entities[i])
                var p = RecordReader.id(block + Int(offsets[i])).1
                for check in plans[entity] {
                    let value = p
                    p = RecordReader.skip(p)
                    let tag = value.load(as: UInt8.self)
                    if check.destination >= 0 {
                        switch tag {
                        case RecordTag.noReference: continue
                        case RecordTag.toOne where !check.toMany:
                            let t = Int(Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self)))
                            guard t >= 0, t < entities.count, kinds[Int(entities[t])][check.destination] else { return false }
                        case RecordTag.toMany where check.toMany:
                            guard let n = RecordReader.listNumber(value), n >= 0, n < lists.count else { return false }
                            for t in lists[n] where !kinds[Int(entities[Int(t)])][check.destination] { return false }
                        default: return false
                        }
                        continue
                    }
                    if tag == RecordTag.null {
                        guard check.optional else { return false }
                        continue
                    }
                    guard check.tags.contains(tag) else { return false }
                    if let cases = check.cases {
                        var q = value + 1
                        let n = RecordReader.varint(&q)
                        let bytes = UnsafeRawBufferPointer(start: q, count: n)
                        guard cases.contains(where: { $0.elementsEqual(bytes) }) else { return false }
                    }
                }
            }
            return true
        }
        return results.allSatisfy { $0 }
    }

    /// Every record of an image within its bytes, pointing only at rows and
    /// lists that exist, with ids in strictly increasing order.
    private static func imageRecordsAreSound(_ records: UnsafeRawBufferPointer, schema: Schema, entities: [Int16], offsets: [Int64],
                                             prefixes: [UInt64], lists: Int) -> Bool {
        guard let block = records.baseAddress else { return entities.isEmpty }
        let recordBytes = records.count
        let rows = entities.count
        let bounds = RecordBounds(rows: rows, lists: lists, bytes: recordBytes)
        var previousID: UnsafeRawBufferPointer?
        for i in 0..<rows {
            let entity = Int(entities[i])
            let end = i + 1 < rows ? Int(offsets[i + 1]) : recordBytes
            guard entity >= 0, entity < schema.entities.count, offsets[i] >= 0, Int(offsets[i]) <= end, end <= recordBytes,
                  bounds.check(block + Int(offsets[i]), end: block + end, slots: schema.entities[entity].properties.count) else {
                return false
            }
            // Lookups by binary search rely on the order and on the prefixes.
            let id = RecordReader.id(block + Int(offsets[i])).0
            guard prefixes[i] == ObjectTable.prefix(id), previousID.map({ ObjectTable.less($0, id) }) ?? true else { return false }
            previousID = id
        }
        return true
    }
}

/// Checks that a record read from an image stays within its bytes and points
/// only at rows and lists that exist.
struct RecordBounds {
    let rows: Int
    let lists: Int
    let bytes: Int

    func check(_ start: UnsafeRawPointer, end: UnsafeRawPointer, slots: Int) -> Bool {
        var p = start
        guard let idLength = varint(&p, end), idLength > 0, p + idLength <= end else { return false }
        p += idLength
        for _ in 0..<slots {
            guard value(&p, end, topLevel: true) else { return false }
        }
        return p == end
    }

    private func varint(_ p: inout UnsafeRawPointer, _ end: UnsafeRawPointer) -> Int? {
        var result = 0, shift = 0
        while p < end && shift < 35 {
            let b = p.load(as: UInt8.self)
            p += 1
            result |= Int(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
        return nil
    }

    private func value(_ p: inout UnsafeRawPointer, _ end: UnsafeRawPointer, topLevel: Bool) -> Bool {
        guard p < end else { return false }
        let tag = p.load(as: UInt8.self)
        p += 1
        switch tag {
        case RecordTag.null, RecordTag.boolTrue, RecordTag.boolFalse: return true
        case RecordTag.int, RecordTag.double, RecordTag.date:
            guard end - p >= 8 else { return false }
            p += 8
            return true
        case RecordTag.string:
            guard let n = varint(&p, end), end - p >= n else { return false }
            p += n
            return true
        case RecordTag.array, RecordTag.embedded:
            guard let n = varint(&p, end), end - p >= n else { return false }
            let stop = p + n
            guard let count = varint(&p, stop) else { return false }
            for _ in 0..<count where !value(&p, stop, topLevel: false) { return false }
            return p == stop
        case RecordTag.toOne, RecordTag.toMany, RecordTag.noReference:
            guard topLevel, end - p >= 4 else { return false }
            let n = Int(Int32(littleEndian: p.loadUnaligned(as: Int32.self)))
            p += 4
            if tag == RecordTag.toOne { return n >= 0 && n < rows }
            if tag == RecordTag.toMany { return n >= 0 && n < lists }
            return true
        default:
            return false
        }
    }
}

/// What may stand in one slot of an image's record, as plain values.
struct ImageSlotCheck: Sendable {
    /// For a relationship: its destination entity (else -1) and whether it is to-many.
    var destination = -1
    var toMany = false
    /// For an attribute: the record tags its type allows, nil's place, an enum's cases.
    var tags: [UInt8] = []
    var optional = false
    var cases: [[UInt8]]?

    init(_ p: Property) {
        if let r = p.relationship {
            destination = r.destination
            toMany = r.isToMany
        } else if let a = p.attribute {
            optional = a.isOptional
            switch a.type {
            case .string: tags = [RecordTag.string]
            case .int: tags = [RecordTag.int]
            case .double: tags = [RecordTag.double, RecordTag.int]
            case .bool: tags = [RecordTag.boolTrue, RecordTag.boolFalse]
            case .date: tags = [RecordTag.date]
            case .array: tags = [RecordTag.array]
            case .embedded: tags = [RecordTag.embedded]
            case .enumeration(let e):
                tags = [RecordTag.string]
                cases = e.cases.map { Array($0.utf8) }
            }
        }
    }
}
