#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every live object of a store, by row and by id.
///
/// Rows are assigned as objects are created and never reused while the store
/// is open, so a row held by an index or a relationship stays meaningful.
public final class ObjectTable: ObjectLookup {
    public let schema: Schema
    private(set) var rows: [StoredObject?] = []
    /// Rows by id, built the first time an id is looked up (a query that
    /// never names an id does not pay for it).
    private var idIndex: [String: RowID]?
    /// The first eight bytes of each id-ordered row's id, for binary search while loading.
    private var idPrefixes: [UInt64] = []
    /// Rows below this were loaded from a snapshot, which is sorted by id:
    /// among them, row order is id order.
    var idOrderedRows = 0
    /// Live objects per concrete entity.
    public private(set) var countByEntity: [Int]

    public init(schema: Schema) {
        self.schema = schema
        self.countByEntity = Array(repeating: 0, count: schema.entities.count)
    }

    /// The number of live objects.
    public private(set) var count = 0
    /// One past the highest row ever used.
    public var rowCount: Int { rows.count }

    public func object(at row: RowID) -> StoredObject? {
        Int(row) < rows.count ? rows[Int(row)] : nil
    }

    public func row(for id: String) -> RowID? {
        if idIndex == nil { buildIDIndex() }
        return idIndex![id]
    }

    private func buildIDIndex() {
        var index: [String: RowID] = [:]
        index.reserveCapacity(count)
        for (i, o) in rows.enumerated() {
            if let o { index[o.id] = RowID(i) }
        }
        idIndex = index
    }

    public func reserve(_ n: Int) {
        rows.reserveCapacity(rows.count + n)
        idIndex?.reserveCapacity(count + n)
    }

    /// Adds an object at the next row; the caller has checked that its id is new.
    @discardableResult
    func append(_ object: StoredObject) -> RowID {
        let row = RowID(rows.count)
        rows.append(object)
        if idIndex != nil { idIndex![object.id] = row }
        countByEntity[object.entity] += 1
        count += 1
        return row
    }

    /// Checks that the rows loaded from a snapshot are in strictly increasing
    /// id order (so ids are unique and a row can be found by binary search);
    /// the first row out of order otherwise.
    func adoptSnapshotOrder() -> Int? {
        var prefixes: [UInt64] = []
        prefixes.reserveCapacity(rows.count)
        var previous: String?
        for (i, o) in rows.enumerated() {
            guard let o else { return i }
            if let p = previous, !ObjectTable.byteLess(p, o.id) { return i }
            previous = o.id
            prefixes.append(ObjectTable.prefix(o.id))
        }
        idPrefixes = prefixes
        idOrderedRows = rows.count
        return nil
    }

    /// The row of an id among the id-ordered rows, by binary search.
    func sortedRow(for id: String) -> RowID? {
        let key = ObjectTable.prefix(id)
        var lo = 0, hi = idPrefixes.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if idPrefixes[mid] < key { lo = mid + 1 } else { hi = mid }
        }
        while lo < idPrefixes.count && idPrefixes[lo] == key {
            if rows[lo]?.id == id { return RowID(lo) }
            lo += 1
        }
        return nil
    }

    /// Forgets the binary-search helper once loading is done.
    func dropSnapshotOrder() {
        idPrefixes = []
    }

    /// The first eight bytes of a string's UTF-8 as a big-endian integer (byte order is integer order).
    static func prefix(_ s: String) -> UInt64 {
        var s = s
        return s.withUTF8 { p -> UInt64 in
            var v: UInt64 = 0
            for k in 0..<8 { v = v << 8 | UInt64(k < p.count ? p[k] : 0) }
            return v
        }
    }

    /// Puts an object at a row reserved for it (`row == rowCount`) or replaces one.
    func set(_ object: StoredObject, at row: RowID) {
        if Int(row) == rows.count {
            append(object)
            return
        }
        if rows[Int(row)] == nil {
            if idIndex != nil { idIndex![object.id] = row }
            countByEntity[object.entity] += 1
            count += 1
        }
        rows[Int(row)] = object
    }

    /// Uses up a row for an object created and deleted in the same transaction.
    func appendEmpty() {
        rows.append(nil)
    }

    func appendReference(_ target: RowID, to row: RowID, slot: Int) {
        if case .toMany(var list) = rows[Int(row)]!.values[slot] {
            rows[Int(row)]!.values[slot] = .null
            list.append(target)
            rows[Int(row)]!.values[slot] = .toMany(list)
        } else {
            rows[Int(row)]!.values[slot] = .toMany([target])
        }
    }

    func setValue(_ value: Value, row: RowID, slot: Int) {
        rows[Int(row)]!.values[slot] = value
    }

    func remove(_ row: RowID) {
        guard let o = rows[Int(row)] else { return }
        if idIndex != nil { idIndex![o.id] = nil }
        countByEntity[o.entity] -= 1
        count -= 1
        rows[Int(row)] = nil
    }

    /// Live rows ordered by id, byte by byte (the snapshot's order).
    public func rowsSortedByID() -> [RowID] {
        // Sort by the ids' first eight bytes (big-endian, so integer order is
        // byte order), and compare whole ids only where those are equal.
        var keyed: [(prefix: UInt64, row: RowID)] = []
        keyed.reserveCapacity(count)
        for (i, o) in rows.enumerated() {
            guard let o else { continue }
            keyed.append((ObjectTable.prefix(o.id), RowID(i)))
        }
        keyed.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return ObjectTable.byteLess(rows[Int(a.row)]!.id, rows[Int(b.row)]!.id)
        }
        return keyed.map(\.row)
    }

    /// Byte order of two strings' UTF-8.
    @inline(__always) static func byteLess(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in
            b.withUTF8 { pb in
                let n = min(pa.count, pb.count)
                if n > 0 {
                    let c = memcmp(pa.baseAddress!, pb.baseAddress!, n)
                    if c != 0 { return c < 0 }
                }
                return pa.count < pb.count
            }
        }
    }

    /// Calls `body` with each live row and its entity, in row order.
    func forEachEntity(_ body: (RowID, Int) -> Void) {
        for i in rows.indices {
            if let e = rows[i]?.entity { body(RowID(i), e) }
        }
    }

    /// Live rows in row order.
    public var liveRows: [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(count)
        for (i, o) in rows.enumerated() where o != nil { out.append(RowID(i)) }
        return out
    }
}
