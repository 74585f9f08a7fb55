import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// An index over one declared attribute: rows by value, for `==` and `in`;
/// the values in order, for ranges and sorting; and the text index over the
/// folded string values, for `~` and `^=`.
///
/// It has two forms. Read from a snapshot image, it is the saved index used
/// in place with the changes since laid over it (`Overlay`), so a cold query
/// touches only the values and rows it reads. Built here, or once this
/// process changes it, it is held in memory: rows by value, and the values in
/// order made again from those when next needed.
package final class ValueIndex {
    /// The entity that declares the attribute; the index covers its subclasses too.
    package let entity: Int
    package let property: Property
    @exclusivity(unchecked) private var saved: Overlay?
    /// Rows by value, made from the ordered form when first needed (a change).
    @exclusivity(unchecked) private var table: [IndexKey: [RowID]]?
    @exclusivity(unchecked) private(set) var nullRows: [RowID] = []
    @exclusivity(unchecked) private var orderedCache: Ordered?
    /// The text index of the in-memory ordered form, made on first use.
    @exclusivity(unchecked) private var text: (buckets: TrigramBuckets, folded: [String])?
    private var foldedCache: [String: String] = [:]

    /// Below this many values, `~` tests each value instead of making a text index.
    static let textIndexThreshold = 1024

    /// The values in order with their rows, and running row counts: a range
    /// is a slice, its size a subtraction.
    struct Ordered: SortedEntries {
        var keys: [IndexKey]
        /// Every row, grouped by value in value order.
        var flat: [RowID]
        /// `counts[i]` rows have a value before `keys[i]`: the rows of `keys[i]`
        /// are `flat[counts[i]..<counts[i + 1]]`.
        var counts: [Int]

        var keyCount: Int { keys.count }
        func key(_ i: Int) -> IndexKey { keys[i] }
        func entriesBefore(_ i: Int) -> Int { counts[i] }
        func rows(_ positions: Range<Int>) -> [RowID] { Array(flat[counts[positions.lowerBound]..<counts[positions.upperBound]]) }
        func textCandidates(_ needle: [UInt8]) -> [Int]? { nil }
    }

    /// A saved index with the changes since the image laid over it: its
    /// entries less `removed`, plus `added`.
    struct Overlay {
        let base: SavedValueIndex
        /// Entries of `base` that no longer hold (their rows changed since), by value then row.
        let removed: [(key: IndexKey, row: RowID)]
        let removedRows: Set<RowID>
        /// Entries of rows changed or added since, in memory.
        let added: Ordered
        /// Values of `base` left without rows, and values only `added` has, ascending.
        let emptied: [IndexKey]
        let new: [IndexKey]

        /// The rows of `base` at `positions`, less those removed.
        func baseRows(_ positions: Range<Int>) -> [RowID] {
            var rows = base.rows(positions)
            if !removedRows.isEmpty { rows.removeAll { removedRows.contains($0) } }
            return rows
        }
    }

    init(entity: Int, property: Property) {
        self.entity = entity
        self.property = property
    }

    package var name: String { property.name }

    // MARK: Filling

    /// Fills the empty index in one pass: values and rows sorted once, and
    /// the ordered form made in one piece (adding rows one by one would grow
    /// a table and an array per value instead).
    func build(_ entries: [(IndexKey?, RowID)]) {
        // Values repeat (many trips share a destination),
        // and comparing strings is the slow part: only the distinct values
        // are sorted, and the rows placed by their value's rank.
        var rankOf: [IndexKey: Int] = [:]
        var distinct: [IndexKey] = []
        var ranks: [Int] = []
        var rows: [RowID] = []
        var nulls: [RowID] = []
        ranks.reserveCapacity(entries.count)
        rows.reserveCapacity(entries.count)
        for (k, row) in entries {
            guard let k else {
                nulls.append(row)
                continue
            }
            if let known = rankOf[k] {
                ranks.append(known)
            } else {
                rankOf[k] = distinct.count
                ranks.append(distinct.count)
                distinct.append(k)
            }
            rows.append(row)
        }
        build(distinct: distinct, ranks: ranks, rows: rows, nulls: nulls)
    }

    /// Fills the empty index from its values found already: `distinct`
    /// holds each value once (no two equal), and row `rows[i]` has the value
    /// `distinct[ranks[i]]`; `nulls` are the rows without a value.
    func build(distinct: [IndexKey], ranks: [Int], rows: [RowID], nulls: [RowID]) {
        // Text in its normal form, made once per value rather than per comparison.
        let text = distinct.map { key -> [UInt8]? in
            guard case .string(let s) = key else { return nil }
            return IndexKey.normalizedText(s)
        }
        let order = distinct.indices.sorted { a, b in
            guard let x = text[a], let y = text[b] else { return distinct[a] < distinct[b] }
            return x.lexicographicallyPrecedes(y)
        }
        var position = [Int](repeating: 0, count: distinct.count)
        for (p, d) in order.enumerated() { position[d] = p }
        var counts = [Int](repeating: 0, count: distinct.count + 1)
        for r in ranks { counts[position[r] + 1] += 1 }
        for p in 0..<distinct.count { counts[p + 1] += counts[p] }
        var flat = [RowID](repeating: 0, count: rows.count)
        var next = counts
        for (i, r) in ranks.enumerated() {
            flat[next[position[r]]] = rows[i]
            next[position[r]] += 1
        }
        // Each value's rows ascending, as every reader expects.
        for p in 0..<distinct.count where counts[p + 1] - counts[p] > 1 {
            let group = counts[p]..<counts[p + 1]
            if !zip(flat[group], flat[group].dropFirst()).allSatisfy({ $0 < $1 }) { flat[group].sort() }
        }
        adopt(Ordered(keys: order.map { distinct[$0] }, flat: flat, counts: counts), nullRows: nulls.sorted())
    }

    /// Takes a complete ordered form.
    func adopt(_ ordered: Ordered, nullRows: [RowID]) {
        saved = nil
        orderedCache = ordered
        table = nil
        text = nil
        self.nullRows = nullRows
        foldedCache = [:]
    }

    /// Takes a saved index with the entries that changed since: `removed`
    /// and `added` sorted by value then row, `nullRows` as they are now.
    func adoptSaved(_ base: SavedValueIndex, removed: [(key: IndexKey, row: RowID)], added: [(key: IndexKey, row: RowID)], nullRows: [RowID]) {
        let addedForm = Ordered(sorted: added)
        // Which values the changes emptied or brought: the exact value counts a plan reports.
        var emptied: [IndexKey] = []
        var i = 0
        while i < removed.count {
            var j = i + 1
            while j < removed.count && removed[j].key == removed[i].key { j += 1 }
            let key = removed[i].key
            if let p = base.position(of: key), base.entriesBefore(p + 1) - base.entriesBefore(p) == j - i, addedForm.position(of: key) == nil {
                emptied.append(key)
            }
            i = j
        }
        let new = addedForm.keys.filter { base.position(of: $0) == nil }
        saved = Overlay(base: base, removed: removed, removedRows: Set(removed.map(\.row)), added: addedForm, emptied: emptied, new: new)
        orderedCache = nil
        table = nil
        text = nil
        self.nullRows = nullRows
        foldedCache = [:]
    }

    // MARK: Changing (in memory)

    func add(_ row: RowID, _ v: Value) {
        guard let key = IndexKey(v) else {
            nullRows.append(row)
            return
        }
        makeTable()
        orderedCache = nil
        text = nil
        table![key, default: []].append(row)
    }

    func remove(_ row: RowID, _ v: Value) {
        guard let key = IndexKey(v) else {
            if let i = nullRows.firstIndex(of: row) { nullRows.remove(at: i) }
            return
        }
        makeTable()
        orderedCache = nil
        text = nil
        guard var rows = table![key], let i = rows.firstIndex(of: row) else { return }
        rows.remove(at: i)
        table![key] = rows.isEmpty ? nil : rows
    }

    private func makeTable() {
        guard table == nil else { return }
        let o = ordered()
        var t: [IndexKey: [RowID]] = [:]
        t.reserveCapacity(o.keys.count)
        for (i, k) in o.keys.enumerated() { t[k] = o.rows(i..<(i + 1)) }
        table = t
    }

    // MARK: Reading

    /// Rows whose value equals `key`, ascending.
    package func rows(_ key: IndexKey) -> [RowID] {
        if let o = saved {
            var rows = o.base.position(of: key).map { o.baseRows($0..<($0 + 1)) } ?? []
            if let j = o.added.position(of: key) {
                rows.append(contentsOf: o.added.rows(j..<(j + 1)))
                rows.sort()
            }
            return rows
        }
        if let o = orderedCache { return o.position(of: key).map { o.rows($0..<($0 + 1)) } ?? [] }
        return table?[key] ?? []
    }

    /// Rows whose value is nil.
    package var rowsWithoutValue: [RowID] { nullRows }

    /// Rows with a value within `bounds`.
    func count(_ bounds: KeyBounds) -> Int {
        guard let o = saved else {
            let ordered = ordered()
            let r = ordered.positions(bounds)
            return ordered.counts[r.upperBound] - ordered.counts[r.lowerBound]
        }
        let r = o.base.positions(bounds), a = o.added.positions(bounds)
        return o.base.entriesBefore(r.upperBound) - o.base.entriesBefore(r.lowerBound)
            - bounds.positions(o.removed.count, key: { o.removed[$0].key }).count
            + o.added.counts[a.upperBound] - o.added.counts[a.lowerBound]
    }

    /// Distinct values within `bounds`.
    func distinctCount(_ bounds: KeyBounds = .all) -> Int {
        guard let o = saved else {
            // All values: counted without ordering them again after a change.
            if bounds.lower == nil && bounds.upper == nil, orderedCache == nil, let table { return table.count }
            return ordered().positions(bounds).count
        }
        return o.base.positions(bounds).count - bounds.positions(o.emptied.count, key: { o.emptied[$0] }).count
            + bounds.positions(o.new.count, key: { o.new[$0] }).count
    }

    /// Distinct values, for plans.
    package var distinctKeys: Int { distinctCount() }

    /// Rows with a value within `bounds`, grouped by value (in value order
    /// for an in-memory index; a saved one lists the changed rows last).
    func rows(_ bounds: KeyBounds) -> [RowID] {
        guard let o = saved else {
            let ordered = ordered()
            return ordered.rows(ordered.positions(bounds))
        }
        return o.baseRows(o.base.positions(bounds)) + o.added.rows(o.added.positions(bounds))
    }

    /// Calls `body` with each value's rows (ascending), in value order or
    /// its reverse, until it returns false.
    func forEachValue(descending: Bool, _ body: ([RowID]) -> Bool) {
        guard let o = saved else {
            let ordered = ordered()
            for i in descending ? Array((0..<ordered.keys.count).reversed()) : Array(0..<ordered.keys.count) {
                guard body(ordered.rows(i..<(i + 1))) else { return }
            }
            return
        }
        // The saved values and the added ones, merged.
        let step = descending ? -1 : 1
        var i = descending ? o.base.keyCount - 1 : 0, j = descending ? o.added.keyCount - 1 : 0
        while (i >= 0 && i < o.base.keyCount) || (j >= 0 && j < o.added.keyCount) {
            let fromBase = i >= 0 && i < o.base.keyCount ? o.base.key(i) : nil
            let fromAdded = j >= 0 && j < o.added.keyCount ? o.added.keys[j] : nil
            let key: IndexKey
            switch (fromBase, fromAdded) {
            case (let b?, let a?): key = (b < a) != descending ? b : a
            case (let b?, nil): key = b
            case (nil, let a?): key = a
            case (nil, nil): return
            }
            var rows: [RowID] = []
            if fromBase == key {
                rows = o.baseRows(i..<(i + 1))
                i += step
            }
            if fromAdded == key {
                rows.append(contentsOf: o.added.rows(j..<(j + 1)))
                rows.sort()
                j += step
            }
            if !rows.isEmpty && !body(rows) { return }
        }
    }

    /// Distinct string values whose folded form contains `needle` (folded),
    /// or begins with it when `prefix`, ascending.
    func textMatches(_ needle: String, prefix: Bool) -> [IndexKey] {
        let bytes = Array(needle.utf8)
        func matches(_ s: String) -> Bool {
            let f = folded(s)
            return prefix ? TextFolding.hasPrefix(f, needle) : TextFolding.contains(f, needle)
        }
        guard let o = saved else {
            let ordered = ordered()
            guard ordered.keys.count >= ValueIndex.textIndexThreshold, bytes.count >= 3 else {
                return ordered.keys.filter { if case .string(let s) = $0 { return matches(s) } else { return false } }
            }
            if text == nil {
                let folded = ordered.keys.map { k -> String in if case .string(let s) = k { return TextFolding.fold(s) } else { return "" } }
                text = (TrigramBuckets(folded: folded.map { Array($0.utf8) }), folded)
            }
            guard let (buckets, folded) = text, let candidates = buckets.candidates(bytes) else { return [] }
            return candidates.filter {
                prefix ? TextFolding.hasPrefix(folded[$0], needle) : TextFolding.contains(folded[$0], needle)
            }.map { ordered.keys[$0] }
        }
        var out: [IndexKey] = []
        for p in o.base.textCandidates(bytes) ?? Array(0..<o.base.keyCount) {
            let key = o.base.key(p)
            if case .string(let s) = key, matches(s), !o.emptied.contains(key) { out.append(key) }
        }
        for key in o.new { if case .string(let s) = key, matches(s) { out.append(key) } }
        return out.sorted()
    }

    /// Every distinct value, in order.
    package func sortedKeys() -> [IndexKey] { ordered().keys }

    /// Rows by value (for checks).
    var rowsByKey: [IndexKey: [RowID]] {
        makeTable()
        return table ?? [:]
    }

    /// The whole index in order, in memory (a saved index is read entirely and
    /// held in memory from then on).
    func ordered() -> Ordered {
        if let o = orderedCache { return o }
        if let o = saved {
            let changed = o.base.ordered().merging(excluding: { o.removedRows.contains($0) },
                                                   adding: o.added.keys.indices.flatMap { i in o.added.rows(i..<(i + 1)).map { (key: o.added.keys[i], row: $0) } })
            adopt(changed, nullRows: nullRows)
            return changed
        }
        let byKey = table ?? [:]
        let keys = byKey.keys.sorted()
        var flat: [RowID] = []
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

    /// The folded form of a string value, computed once.
    private func folded(_ s: String) -> String {
        if let f = foldedCache[s] { return f }
        let f = TextFolding.fold(s)
        foldedCache[s] = f
        return f
    }
}

extension ValueIndex.Ordered {
    /// The ordered form of entries sorted by value, then row.
    init(sorted keyed: [(key: IndexKey, row: RowID)]) {
        keys = []
        flat = []
        flat.reserveCapacity(keyed.count)
        counts = [0]
        var i = 0
        while i < keyed.count {
            var j = i + 1
            while j < keyed.count && keyed[j].key == keyed[i].key { j += 1 }
            for k in i..<j { flat.append(keyed[k].row) }
            keys.append(keyed[i].key)
            counts.append(flat.count)
            i = j
        }
    }

    /// This ordered form without the rows `excluded` rejects and with `added`
    /// (sorted by key, then row) merged in, in one pass over both.
    func merging(excluding excluded: (RowID) -> Bool, adding added: [(key: IndexKey, row: RowID)]) -> ValueIndex.Ordered {
        var out = ValueIndex.Ordered(keys: [], flat: [], counts: [0])
        out.keys.reserveCapacity(keys.count + added.count)
        out.flat.reserveCapacity(flat.count + added.count)
        var i = 0, a = 0
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
            guard !rows.isEmpty else { continue }
            out.keys.append(key)
            out.flat.append(contentsOf: rows)
            out.counts.append(out.flat.count)
        }
        return out
    }
}
