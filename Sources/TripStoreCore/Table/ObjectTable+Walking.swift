import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ObjectTable {
    // MARK: Walking

    /// Live rows ordered by id, byte by byte (the snapshot's order).
    package func rowsSortedByID() -> [RowID] {
        let later = (idOrderedRows..<rowCount).filter { rawEntity($0) >= 0 }
        if later.isEmpty { return liveRows }
        // Sort by the ids' first eight bytes (big-endian, so integer order is
        // byte order), and compare whole ids only where those are equal.
        var keyed: [(prefix: UInt64, row: RowID)] = []
        keyed.reserveCapacity(count)
        for i in 0..<rowCount where rawEntity(i) >= 0 {
            keyed.append((RecordReader.idPrefix(record(RowID(i))), RowID(i)))
        }
        keyed.sort { a, b in
            if a.prefix != b.prefix { return a.prefix < b.prefix }
            return RecordReader.idLess(record(a.row), record(b.row))
        }
        return keyed.map(\.row)
    }

    /// Calls `body` with each live row and its entity, in row order.
    func forEachEntity(_ body: (RowID, Int) -> Void) {
        for i in 0..<rowCount {
            let e = rawEntity(i)
            if e >= 0 { body(RowID(i), Int(e)) }
        }
    }

    /// Live rows in row order.
    package var liveRows: [RowID] {
        var out: [RowID] = []
        out.reserveCapacity(count)
        for i in 0..<rowCount where rawEntity(i) >= 0 { out.append(RowID(i)) }
        return out
    }
}
