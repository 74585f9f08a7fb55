import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every live object of a store, by row and by id.
///
/// Each object is one compact record in a `RecordArena` (see `RecordCoding`),
/// not a Swift value per field: a store takes less memory than its JSON
/// and loads without an allocation per value. `object(at:)` decodes a record
/// when asked; `value(at:slot:)` decodes one slot.
///
/// Rows are assigned as objects are created and never reused while the store
/// is open, so a row held by an index or a relationship stays meaningful.
///
/// The arrays the hot loops read are `@exclusivity(unchecked)` (here, in
/// `RecordArena`, `StoreIndexes` and `ValueIndex`): a table is changed by one
/// thread, and parallel workers only read it while nothing changes it
/// (`Parallel.map` returns before the caller goes on), so no access can
/// overlap a write; the run-time checks cost about a third of a load from JSON.
package final class ObjectTable: ObjectLookup {
    package let schema: Schema
    /// The entity of each row, or -1 where no object lives.
    @exclusivity(unchecked) private(set) var entityOfRow: [Int16] = []
    /// Where each row's record is in the arena (kept after a delete, so the id stays readable).
    @exclusivity(unchecked) private(set) var locators: [Int64] = []
    let arena = RecordArena()
    /// The to-many relationship lists; a record's to-many slot holds a number
    /// here. List 0 is the shared empty list, never changed in place.
    @exclusivity(unchecked) private(set) var lists: [[RowID]] = [[]]
    @exclusivity(unchecked) private var scratch = RecordBuffer(capacity: 4096)
    /// The first eight bytes of each id-ordered row's id, for binary search.
    @exclusivity(unchecked) private(set) var idPrefixes: [UInt64] = []
    /// Rows below this were loaded from a snapshot, which is sorted by id:
    /// among them, row order is id order.
    @exclusivity(unchecked) var idOrderedRows = 0
    /// Rows from `idOrderedRows` up to `laterIDsCover`, by id; extended when an id is looked up.
    @exclusivity(unchecked) private var laterIDs: [String: RowID] = [:]
    @exclusivity(unchecked) private var laterIDsCover = 0
    /// Live objects per concrete entity.
    @exclusivity(unchecked) package private(set) var countByEntity: [Int]
    /// Who refers to each object through relationships without an inverse.
    let oneWay: OneWayReferences
    /// Per entity, the slots that hold relationships.
    let relationshipSlots: [[Int]]

    package init(schema: Schema) {
        self.schema = schema
        self.oneWay = OneWayReferences(schema: schema)
        self.relationshipSlots = schema.entities.map { e in e.properties.compactMap { $0.relationship == nil ? nil : $0.slot } }
        self.countByEntity = Array(repeating: 0, count: schema.entities.count)
    }

    /// The number of live objects.
    @exclusivity(unchecked) package private(set) var count = 0
    /// One past the highest row ever used.
    package var rowCount: Int { entityOfRow.count }

    /// Bytes of object records in memory, and how many of them are no longer used.
    package var recordBytes: (total: Int, unused: Int) { (arena.totalBytes, arena.unusedBytes) }

    // MARK: Reading

    /// The entity of the object at a row, if one lives there.
    @inline(__always) package func entity(at row: RowID) -> Int? {
        let i = Int(row)
        guard i >= 0, i < entityOfRow.count, entityOfRow[i] >= 0 else { return nil }
        return Int(entityOfRow[i])
    }

    @inline(__always) func record(_ row: RowID) -> UnsafeRawPointer {
        UnsafeRawPointer(arena.pointer(locators[Int(row)]))
    }

    package func object(at row: RowID) -> StoredObject? {
        guard let e = entity(at: row) else { return nil }
        let r = record(row)
        let (id, _) = RecordReader.id(r)
        return StoredObject(entity: e, id: String(decoding: id, as: UTF8.self),
                            values: RecordReader.values(r, count: schema.entities[e].properties.count, lists: lists))
    }

    package func id(at row: RowID) -> String? {
        guard entity(at: row) != nil else { return nil }
        return String(decoding: RecordReader.id(record(row)).0, as: UTF8.self)
    }

    /// One slot of a live row (`.null` for a row with no object).
    @inline(__always) package func value(at row: RowID, slot: Int) -> Value {
        guard entity(at: row) != nil else { return .null }
        return RecordReader.value(RecordReader.slot(record(row), slot), lists: lists)
    }

    /// The id a row has or had: also for a deleted row, whose record stays.
    package func recordedID(_ row: RowID) -> String? {
        guard row >= 0, Int(row) < rowCount, locators[Int(row)] >= 0 else { return nil }
        return withID(row) { String(decoding: $0, as: UTF8.self) }
    }

    /// Calls `body` with a row's id bytes (also for a deleted row).
    @inline(__always) func withID<R>(_ row: RowID, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        body(RecordReader.id(record(row)).0)
    }

    // MARK: Finding by id

    package func row(for id: String) -> RowID? {
        let id = Identifier.normalized(id)
        if let r = sortedRow(for: id) { return r }
        extendLaterIDs()
        return laterIDs[id]
    }

    private func extendLaterIDs() {
        laterIDsCover = max(laterIDsCover, idOrderedRows)
        guard laterIDsCover < rowCount else { return }
        for i in laterIDsCover..<rowCount where entityOfRow[i] >= 0 {
            laterIDs[String(decoding: RecordReader.id(record(RowID(i))).0, as: UTF8.self)] = RowID(i)
        }
        laterIDsCover = rowCount
    }

    /// The live row of an id among the id-ordered rows, by binary search.
    func sortedRow(for id: String) -> RowID? {
        var id = id
        return id.withUTF8 { key in sortedRow(UnsafeRawBufferPointer(key)) }
    }

    func sortedRow(_ key: UnsafeRawBufferPointer) -> RowID? {
        let k = ObjectTable.prefix(key)
        var lo = 0, hi = idPrefixes.count
        idPrefixes.withUnsafeBufferPointer { p in
            while lo < hi {
                let mid = (lo + hi) / 2
                if p[mid] < k { lo = mid + 1 } else { hi = mid }
            }
        }
        while lo < idPrefixes.count && idPrefixes[lo] == k {
            if entityOfRow[lo] >= 0 && withID(RowID(lo), { ObjectTable.equal($0, key) }) { return RowID(lo) }
            lo += 1
        }
        return nil
    }

    /// Finds the rows of a snapshot's references with one or two cache misses
    /// each instead of a binary search's twenty; built for loading only.
    struct LoadHash {
        /// Per slot: 32 bits of the id's hash above the row; 0 is empty
        /// (rows are stored plus one). The hash bits spare most wrong rows a
        /// look at their id.
        private var slots: [UInt64]
        private let mask: Int

        init(_ prefixes: [UInt64]) {
            var capacity = 1024
            while capacity < prefixes.count * 2 { capacity *= 2 }
            mask = capacity - 1
            slots = Array(repeating: 0, count: capacity)
            for (row, p) in prefixes.enumerated() {
                let h = LoadHash.hash(p)
                var i = h & mask
                while slots[i] != 0 { i = (i + 1) & mask }
                slots[i] = LoadHash.tag(h) | UInt64(row + 1)
            }
        }

        @inline(__always) static func hash(_ p: UInt64) -> Int {
            var x = p ^ (p >> 29)
            x = x &* 0xBF58476D1CE4E5B9
            x ^= x >> 32
            return Int(truncatingIfNeeded: x)
        }

        @inline(__always) static func tag(_ h: Int) -> UInt64 { UInt64(truncatingIfNeeded: h) & 0xFFFF_FFFF_0000_0000 }

        /// The row whose id is `key` (every row is live while loading).
        @inline(__always) func row(_ key: UnsafeRawBufferPointer, in table: ReadView) -> RowID? {
            let h = LoadHash.hash(ObjectTable.prefix(key))
            let tag = LoadHash.tag(h)
            var i = h & mask
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if s & 0xFFFF_FFFF_0000_0000 == tag {
                    let row = RowID(truncatingIfNeeded: (s & 0xFFFF_FFFF) - 1)
                    if table.withID(row, { ObjectTable.equal($0, key) }) { return row }
                }
                i = (i + 1) & mask
            }
        }
    }

    /// A `LoadHash` over the id-ordered rows.
    func loadHash() -> LoadHash { LoadHash(idPrefixes) }

    /// Checks that all rows (just loaded from a snapshot) are in strictly
    /// increasing id order, so ids are unique and a row can be found by binary
    /// search; the first row out of order otherwise.
    func adoptSnapshotOrder() -> Int? {
        var prefixes: [UInt64] = []
        prefixes.reserveCapacity(rowCount)
        for i in 0..<rowCount {
            guard entityOfRow[i] >= 0 else { return i }
            let ok = withID(RowID(i)) { id -> Bool in
                prefixes.append(ObjectTable.prefix(id))
                return i == 0 || withID(RowID(i - 1)) { ObjectTable.less($0, id) }
            }
            if !ok { return i }
        }
        idPrefixes = prefixes
        idOrderedRows = rowCount
        return nil
    }

    /// Takes the rows of a snapshot image (in id order) into this empty table.
    func adoptImage(entities: [Int16], locators: [Int64], prefixes: [UInt64], lists: [[RowID]]) {
        entityOfRow = entities
        self.locators = locators
        idPrefixes = prefixes
        self.lists = lists
        idOrderedRows = entities.count
        laterIDsCover = entities.count
        count = entities.count
        for e in entities { countByEntity[Int(e)] += 1 }
    }

    // MARK: Changing

    package func reserve(_ n: Int) {
        entityOfRow.reserveCapacity(rowCount + n)
        locators.reserveCapacity(rowCount + n)
    }

    /// Adds an object at the next row; the caller has checked that its id is new.
    @discardableResult
    func append(_ object: StoredObject) -> RowID {
        let row = RowID(rowCount)
        entityOfRow.append(Int16(object.entity))
        locators.append(encode(object, reusing: nil))
        countByEntity[object.entity] += 1
        count += 1
        return row
    }

    /// Adds a record already encoded (loading a snapshot); to-many slots hold `noReference` until linked.
    func appendRecord(entity: Int, locator: Int64) {
        entityOfRow.append(Int16(entity))
        locators.append(locator)
        countByEntity[entity] += 1
        count += 1
    }

    /// Puts an object at a row reserved for it (`row == rowCount`) or replaces one.
    func set(_ object: StoredObject, at row: RowID) {
        let i = Int(row)
        if i == rowCount {
            append(object)
            return
        }
        let old: UnsafeRawPointer? = locators[i] >= 0 ? record(row) : nil
        if entityOfRow[i] < 0 {
            countByEntity[object.entity] += 1
            count += 1
            entityOfRow[i] = Int16(object.entity)
        } else if let old {
            arena.forget(RecordReader.length(old, count: schema.entities[object.entity].properties.count))
        }
        locators[i] = encode(object, reusing: old)
    }

    /// Uses up a row for an object created and deleted in the same transaction.
    func appendEmpty() {
        entityOfRow.append(-1)
        locators.append(-1)
    }

    /// Where a row's slot is in its record, to be filled in place.
    @inline(__always) func slotPointer(_ row: RowID, _ slot: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(mutating: RecordReader.slot(record(row), slot))
    }

    /// Fills a relationship slot (of a record just loaded) in place.
    @inline(__always) func fill(_ p: UnsafeMutableRawPointer, toMany: Bool, _ targets: Slice<UnsafeBufferPointer<RowID>>) {
        if !toMany {
            if let t = targets.first { fill(p, toOne: t) }
        } else if targets.isEmpty {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(0), as: Int32.self)
        } else {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(lists.count).littleEndian, as: Int32.self)
            lists.append(Array(targets))
        }
    }

    @inline(__always) func fill(_ p: UnsafeMutableRawPointer, toOne target: RowID) {
        p.storeBytes(of: RecordTag.toOne, as: UInt8.self)
        (p + 1).storeBytes(of: target.littleEndian, as: Int32.self)
    }

    func appendReference(_ target: RowID, to row: RowID, slot: Int) {
        let p = slotPointer(row, slot)
        if let n = RecordReader.listNumber(p), n != 0 {
            lists[n].append(target)
        } else {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(lists.count).littleEndian, toByteOffset: 0, as: Int32.self)
            lists.append([target])
        }
    }

    func setValue(_ value: Value, row: RowID, slot: Int) {
        guard let e = entity(at: row) else { return }
        guard schema.entities[e].properties[slot].relationship != nil else {
            var o = object(at: row)!
            o.values[slot] = value
            set(o, at: row)
            return
        }
        let p = UnsafeMutableRawPointer(mutating: RecordReader.slot(record(row), slot))
        switch value {
        case .toOne(let r):
            p.storeBytes(of: RecordTag.toOne, as: UInt8.self)
            (p + 1).storeBytes(of: r.littleEndian, as: Int32.self)
        case .toMany(let l):
            if let n = RecordReader.listNumber(p), n != 0 {
                lists[n] = l
            } else if l.isEmpty {
                p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
                (p + 1).storeBytes(of: Int32(0), as: Int32.self)
            } else {
                p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
                (p + 1).storeBytes(of: Int32(lists.count).littleEndian, as: Int32.self)
                lists.append(l)
            }
        default:
            p.storeBytes(of: RecordTag.noReference, as: UInt8.self)
        }
    }

    func remove(_ row: RowID) {
        guard let e = entity(at: row) else { return }
        if Int(row) >= idOrderedRows && Int(row) < laterIDsCover {
            laterIDs[String(decoding: RecordReader.id(record(row)).0, as: UTF8.self)] = nil
        }
        arena.forget(RecordReader.length(record(row), count: schema.entities[e].properties.count))
        countByEntity[e] -= 1
        count -= 1
        entityOfRow[Int(row)] = -1
    }

    /// Writes an object's record; to-many slots keep the list numbers of `old`.
    private func encode(_ object: StoredObject, reusing old: UnsafeRawPointer?) -> Int64 {
        scratch.removeAll()
        RecordWriter.id(object.id, to: &scratch)
        var oldSlot = old.map { RecordReader.id($0).1 }
        for p in schema.entities[object.entity].properties {
            let v = object.values[p.slot]
            let reuse = oldSlot.flatMap { RecordReader.listNumber($0) }.flatMap { $0 == 0 ? nil : $0 }
            if let o = oldSlot { oldSlot = RecordReader.skip(o) }
            guard p.relationship != nil else {
                RecordWriter.attribute(v, to: &scratch)
                continue
            }
            switch v {
            case .toOne(let r): RecordWriter.reference(tag: RecordTag.toOne, r, to: &scratch)
            case .toMany(let l):
                let n: Int
                if let reuse {
                    n = reuse
                    lists[n] = l
                } else if l.isEmpty {
                    n = 0
                } else {
                    n = lists.count
                    lists.append(l)
                }
                RecordWriter.reference(tag: RecordTag.toMany, Int32(n), to: &scratch)
            default: RecordWriter.reference(tag: RecordTag.noReference, 0, to: &scratch)
            }
        }
        return arena.append(scratch.contents)
    }

    // MARK: Walking

    /// Live rows ordered by id, byte by byte (the snapshot's order).
    package func rowsSortedByID() -> [RowID] {
        let later = (idOrderedRows..<rowCount).filter { entityOfRow[$0] >= 0 }
        if later.isEmpty { return liveRows }
        // Sort by the ids' first eight bytes (big-endian, so integer order is
        // byte order), and compare whole ids only where those are equal.
        var keyed: [(prefix: UInt64, row: RowID)] = []
        keyed.reserveCapacity(count)
        for i in 0..<rowCount where entityOfRow[i] >= 0 {
            keyed.append((withID(RowID(i), ObjectTable.prefix), RowID(i)))
        }
        keyed.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return withID(a.row) { x in withID(b.row) { y in ObjectTable.less(x, y) } }
        }
        return keyed.map(\.row)
    }

    /// Calls `body` with each live row and its entity, in row order.
    func forEachEntity(_ body: (RowID, Int) -> Void) {
        for i in entityOfRow.indices where entityOfRow[i] >= 0 { body(RowID(i), Int(entityOfRow[i])) }
    }

    /// Live rows in row order.
    package var liveRows: [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(count)
        for i in entityOfRow.indices where entityOfRow[i] >= 0 { out.append(RowID(i)) }
        return out
    }

    // MARK: Byte order of ids

    /// The first eight bytes as a big-endian integer (byte order is integer order).
    @inline(__always) static func prefix(_ p: UnsafeRawBufferPointer) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v = v << 8 | UInt64(k < p.count ? p[k] : 0) }
        return v
    }

    @inline(__always) static func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }

    @inline(__always) static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// Byte order of two strings' UTF-8.
    static func byteLess(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in less(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) } }
    }
}
