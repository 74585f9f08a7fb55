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
    private(set) var rowByID: [String: RowID] = [:]
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
    public var count: Int { rowByID.count }
    /// One past the highest row ever used.
    public var rowCount: Int { rows.count }

    public func object(at row: RowID) -> StoredObject? {
        Int(row) < rows.count ? rows[Int(row)] : nil
    }

    public func row(for id: String) -> RowID? { rowByID[id] }

    public func reserve(_ n: Int) {
        rows.reserveCapacity(rows.count + n)
        rowByID.reserveCapacity(rowByID.count + n)
    }

    /// Adds an object at the next row; the caller has checked that its id is new.
    @discardableResult
    func append(_ object: StoredObject) -> RowID {
        let row = RowID(rows.count)
        rows.append(object)
        rowByID[object.id] = row
        countByEntity[object.entity] += 1
        return row
    }

    /// Puts an object at a row reserved for it (`row == rowCount`) or replaces one.
    func set(_ object: StoredObject, at row: RowID) {
        if Int(row) == rows.count {
            append(object)
            return
        }
        if rows[Int(row)] == nil {
            rowByID[object.id] = row
            countByEntity[object.entity] += 1
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
        rowByID[o.id] = nil
        countByEntity[o.entity] -= 1
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
            var id = o.id
            let prefix = id.withUTF8 { p -> UInt64 in
                var v: UInt64 = 0
                for k in 0..<8 { v = v << 8 | UInt64(k < p.count ? p[k] : 0) }
                return v
            }
            keyed.append((prefix, RowID(i)))
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
