import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A set of rows as bits, for intersecting index results.
struct RowBitset {
    private var words: [UInt64]

    init(_ rows: [RowID], capacity: Int) {
        words = Array(repeating: 0, count: (capacity + 63) / 64)
        for r in rows { words[Int(r) >> 6] |= 1 << UInt64(Int(r) & 63) }
    }

    @inline(__always) func contains(_ r: RowID) -> Bool {
        let i = Int(r) >> 6
        return i < words.count && words[i] & (1 << UInt64(Int(r) & 63)) != 0
    }
}
