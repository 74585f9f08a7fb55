import TripStoreFormat

/// An index's entries in value order, as `ValueIndex` reads them: held in
/// memory (`ValueIndex.Ordered`) or used in place from a snapshot image
/// (`SavedValueIndex`, whose pieces are checked as they are touched).
protocol SortedEntries {
    /// Distinct values.
    var keyCount: Int { get }
    /// Value `i` (`0..<keyCount`), ascending.
    func key(_ i: Int) -> IndexKey
    /// How many rows have a value before value `i` (`0...keyCount`).
    func entriesBefore(_ i: Int) -> Int
    /// The rows of values `positions`, grouped by value in value order, ascending within each.
    func rows(_ positions: Range<Int>) -> [RowID]
    /// Positions of values that may hold the folded `needle` (a superset of
    /// those that do), ascending; nil when this form cannot narrow them.
    func textCandidates(_ needle: [UInt8]) -> [Int]?
}

extension SortedEntries {
    /// The position of `key`, if it is a value here.
    func position(of key: IndexKey) -> Int? {
        let i = KeyBounds.partition(keyCount, key: self.key) { $0 < key }
        return i < keyCount && self.key(i) == key ? i : nil
    }

    /// Positions of values within the bounds.
    func positions(_ bounds: KeyBounds) -> Range<Int> { bounds.positions(keyCount, key: key) }
}

/// A range of index values; either end may be open.
struct KeyBounds {
    var lower: IndexKey?
    var lowerInclusive = false
    var upper: IndexKey?
    var upperInclusive = false

    static let all = KeyBounds()

    /// Positions `0..<count` of ascending values (`key(i)`) within these bounds.
    func positions(_ count: Int, key: (Int) -> IndexKey) -> Range<Int> {
        var lo = 0, hi = count
        if let lower { lo = KeyBounds.partition(count, key: key) { lowerInclusive ? $0 < lower : $0 <= lower } }
        if let upper { hi = KeyBounds.partition(count, key: key) { upperInclusive ? $0 <= upper : $0 < upper } }
        return lo < hi ? lo..<hi : lo..<lo
    }

    /// The first position whose value is not `before` (values ascending).
    static func partition(_ count: Int, key: (Int) -> IndexKey, _ before: (IndexKey) -> Bool) -> Int {
        var lo = 0, hi = count
        while lo < hi {
            let mid = (lo + hi) / 2
            if before(key(mid)) { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }
}
