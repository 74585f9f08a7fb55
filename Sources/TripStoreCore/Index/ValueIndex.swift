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
    /// Rows by value, made from the ordered form when first needed (a change,
    /// or a lookup after one); an index read from a snapshot image has only the ordered form.
    @exclusivity(unchecked) private var table: [IndexKey: [RowID]]?
    @exclusivity(unchecked) private(set) var nullRows: [RowID] = []
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
    package var distinctKeys: Int { orderedCache?.keys.count ?? rowsByKey.count }

    /// Rows by value (made from the ordered form if need be).
    var rowsByKey: [IndexKey: [RowID]] {
        if let t = table { return t }
        var t: [IndexKey: [RowID]] = [:]
        if let o = orderedCache {
            t.reserveCapacity(o.keys.count)
            for (i, k) in o.keys.enumerated() { t[k] = Array(o.rows(i..<(i + 1))) }
        }
        table = t
        return t
    }

    /// Fills the empty index in one pass: values and rows sorted once, and
    /// the ordered form made in one piece (adding rows one by one would grow
    /// a table and an array per value instead).
    func build(_ entries: [(IndexKey?, RowID)]) {
        var keyed: [(key: IndexKey, row: RowID)] = []
        keyed.reserveCapacity(entries.count)
        var nulls: [RowID] = []
        for (k, row) in entries {
            if let k { keyed.append((k, row)) } else { nulls.append(row) }
        }
        keyed.sort { $0.key == $1.key ? $0.row < $1.row : $0.key < $1.key }
        var keys: [IndexKey] = []
        var flat: [RowID] = []
        flat.reserveCapacity(keyed.count)
        var counts: [Int] = [0]
        var i = 0
        while i < keyed.count {
            var j = i + 1
            while j < keyed.count && keyed[j].key == keyed[i].key { j += 1 }
            for k in i..<j { flat.append(keyed[k].row) }
            keys.append(keyed[i].key)
            counts.append(flat.count)
            i = j
        }
        adopt(Ordered(keys: keys, flat: flat, counts: counts), nullRows: nulls.sorted())
    }

    /// Takes a complete ordered form (from `build`, or a snapshot image).
    func adopt(_ ordered: Ordered, nullRows: [RowID]) {
        orderedCache = ordered
        table = nil
        self.nullRows = nullRows
        rowCount = ordered.flat.count + nullRows.count
        foldedCache = [:]
    }

    func add(_ row: RowID, _ v: Value) {
        rowCount += 1
        guard let key = IndexKey(v) else {
            nullRows.append(row)
            return
        }
        _ = rowsByKey
        orderedCache = nil
        table![key, default: []].append(row)
    }

    func remove(_ row: RowID, _ v: Value) {
        rowCount -= 1
        guard let key = IndexKey(v) else {
            if let i = nullRows.firstIndex(of: row) { nullRows.remove(at: i) }
            return
        }
        _ = rowsByKey
        orderedCache = nil
        guard var rows = table![key], let i = rows.firstIndex(of: row) else { return }
        rows.remove(at: i)
        table![key] = rows.isEmpty ? nil : rows
    }

    /// Rows whose value equals `key`.
    package func rows(_ key: IndexKey) -> [RowID] {
        if let o = orderedCache {
            let i = partition(o.keys) { $0 < key }
            return i < o.keys.count && o.keys[i] == key ? Array(o.rows(i..<(i + 1))) : []
        }
        return rowsByKey[key] ?? []
    }

    /// Rows whose value is nil.
    package var rowsWithoutValue: [RowID] { nullRows }

    /// Every distinct value, in order.
    package func sortedKeys() -> [IndexKey] { ordered().keys }

    /// The values in order with their rows (made again on first use after a change).
    func ordered() -> Ordered {
        if let o = orderedCache { return o }
        let byKey = rowsByKey
        let keys = byKey.keys.sorted()
        var flat: [RowID] = []
        flat.reserveCapacity(rowCount)
        var counts: [Int] = [0]
        counts.reserveCapacity(keys.count + 1)
        for k in keys {
            flat.append(contentsOf: byKey[k]!)
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

    /// Distinct values whose folded form passes `test`, in order.
    func keysMatchingFolded(_ test: (String) -> Bool) -> [IndexKey] {
        var out: [IndexKey] = []
        for key in ordered().keys {
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

extension ValueIndex.Ordered {
    /// This ordered form without the rows `excluded` rejects and with `added`
    /// (sorted by key, then row) merged in, in one pass over both.
    func merging(excluding excluded: (RowID) -> Bool, adding added: [(key: IndexKey, row: RowID)]) -> ValueIndex.Ordered {
        var out = ValueIndex.Ordered(keys: [], flat: [], counts: [0])
        out.keys.reserveCapacity(keys.count + added.count)
        out.flat.reserveCapacity(flat.count + added.count)
        var i = 0, a = 0
        func emit(_ key: IndexKey, _ rows: [RowID]) {
            guard !rows.isEmpty else { return }
            out.keys.append(key)
            out.flat.append(contentsOf: rows)
            out.counts.append(out.flat.count)
        }
        while i < keys.count || a < added.count {
            let key: IndexKey
            if a >= added.count || (i < keys.count && keys[i] <= added[a].key) { key = keys[i] } else { key = added[a].key }
            var rows: [RowID] = []
            if i < keys.count && keys[i] == key {
                for r in flat[counts[i]..<counts[i + 1]] where !excluded(r) { rows.append(r) }
                i += 1
            }
            var more = false
            while a < added.count && added[a].key == key {
                rows.append(added[a].row)
                a += 1
                more = true
            }
            if more { rows.sort() }
            emit(key, rows)
        }
        return out
    }
}
