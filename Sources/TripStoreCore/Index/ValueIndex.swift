import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// An index over one declared attribute: rows by value, for `==` and `in`;
/// the values in order, for ranges and sorting; and each string value
/// folded once, for `~` and `^=` (a contains-test over distinct values).
package final class ValueIndex {
    /// The entity that declares the attribute; the index covers its subclasses too.
    package let entity: Int
    package let property: Property
    @exclusivity(unchecked) private(set) var rowsByKey: [IndexKey: [RowID]] = [:]
    @exclusivity(unchecked) private(set) var nullRows: [RowID] = []
    @exclusivity(unchecked) private var sortedCache: [IndexKey]?
    @exclusivity(unchecked) private var orderedCache: Ordered?

    /// The values in order with their rows, and running row counts: a range
    /// is a slice, its size a subtraction.
    struct Ordered {
        var keys: [IndexKey]
        /// Every row, grouped by value in value order.
        var flat: [RowID]
        /// `counts[i]` rows have a value before `keys[i]`: the rows of `keys[i]`
        /// are `flat[counts[i]..<counts[i + 1]]`.
        var counts: [Int]

        func rows(_ positions: Range<Int>) -> ArraySlice<RowID> {
            flat[counts[positions.lowerBound]..<counts[positions.upperBound]]
        }
    }
    private var foldedCache: [String: String] = [:]
    package private(set) var rowCount = 0

    init(entity: Int, property: Property) {
        self.entity = entity
        self.property = property
    }

    package var name: String { property.name }
    package var distinctKeys: Int { rowsByKey.count }

    /// Empties the index (before it is built again).
    func clear() {
        rowsByKey = [:]
        nullRows = []
        sortedCache = nil
        orderedCache = nil
        foldedCache = [:]
        rowCount = 0
    }

    /// Fills the empty index in one pass: values and rows sorted once, each
    /// value's rows made in one piece, and the ordered form ready (adding
    /// rows one by one would grow a table and an array per value instead).
    func build(_ entries: [(IndexKey?, RowID)]) {
        var keyed: [(key: IndexKey, row: RowID)] = []
        keyed.reserveCapacity(entries.count)
        for (k, row) in entries {
            if let k { keyed.append((k, row)) } else { nullRows.append(row) }
        }
        keyed.sort { $0.key == $1.key ? $0.row < $1.row : $0.key < $1.key }
        var keys: [IndexKey] = []
        var flat: [RowID] = []
        flat.reserveCapacity(keyed.count)
        var counts: [Int] = [0]
        var table: [IndexKey: [RowID]] = [:]
        var i = 0
        while i < keyed.count {
            var j = i + 1
            while j < keyed.count && keyed[j].key == keyed[i].key { j += 1 }
            for k in i..<j { flat.append(keyed[k].row) }
            table[keyed[i].key] = Array(flat[counts[counts.count - 1]..<flat.count])
            keys.append(keyed[i].key)
            counts.append(flat.count)
            i = j
        }
        nullRows.sort()
        rowsByKey = table
        rowCount = entries.count
        sortedCache = keys
        orderedCache = Ordered(keys: keys, flat: flat, counts: counts)
    }

    func add(_ row: RowID, _ v: Value) {
        rowCount += 1
        orderedCache = nil
        guard let key = IndexKey(v) else {
            nullRows.append(row)
            return
        }
        if rowsByKey[key] == nil { sortedCache = nil }
        rowsByKey[key, default: []].append(row)
    }

    func remove(_ row: RowID, _ v: Value) {
        rowCount -= 1
        orderedCache = nil
        guard let key = IndexKey(v) else {
            if let i = nullRows.firstIndex(of: row) { nullRows.remove(at: i) }
            return
        }
        guard var rows = rowsByKey[key], let i = rows.firstIndex(of: row) else { return }
        rows.remove(at: i)
        if rows.isEmpty {
            rowsByKey[key] = nil
            sortedCache = nil
        } else {
            rowsByKey[key] = rows
        }
    }

    /// Rows whose value equals `key`.
    package func rows(_ key: IndexKey) -> [RowID] { rowsByKey[key] ?? [] }

    /// Rows whose value is nil.
    package var rowsWithoutValue: [RowID] { nullRows }

    /// Every distinct value, in order.
    package func sortedKeys() -> [IndexKey] {
        if let s = sortedCache { return s }
        let s = rowsByKey.keys.sorted()
        sortedCache = s
        return s
    }

    /// The values in order with their rows (built on first use after a change).
    func ordered() -> Ordered {
        if let o = orderedCache { return o }
        let keys = sortedKeys()
        var flat: [RowID] = []
        flat.reserveCapacity(rowCount)
        var counts: [Int] = [0]
        counts.reserveCapacity(keys.count + 1)
        for k in keys {
            flat.append(contentsOf: rowsByKey[k]!)
            counts.append(flat.count)
        }
        let o = Ordered(keys: keys, flat: flat, counts: counts)
        orderedCache = o
        return o
    }

    /// Positions in `ordered().keys` within bounds (either may be open).
    func positions(from lower: IndexKey?, inclusive lowerInclusive: Bool, to upper: IndexKey?, inclusive upperInclusive: Bool) -> Range<Int> {
        let keys = ordered().keys
        var lo = 0, hi = keys.count
        if let lower { lo = partition(keys) { lowerInclusive ? $0 < lower : $0 <= lower } }
        if let upper { hi = partition(keys) { upperInclusive ? $0 <= upper : $0 < upper } }
        return lo < hi ? lo..<hi : lo..<lo
    }

    /// The folded form of a string value, computed once.
    func folded(_ s: String) -> String {
        if let f = foldedCache[s] { return f }
        let f = TextFolding.fold(s)
        foldedCache[s] = f
        return f
    }

    /// Distinct values whose folded form passes `test`.
    func keysMatchingFolded(_ test: (String) -> Bool) -> [IndexKey] {
        var out: [IndexKey] = []
        for key in rowsByKey.keys {
            if case .string(let s) = key, test(folded(s)) { out.append(key) }
        }
        return out
    }

    private func partition(_ keys: [IndexKey], _ before: (IndexKey) -> Bool) -> Int {
        var lo = 0, hi = keys.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(keys[mid]) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
