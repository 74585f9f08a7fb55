import TripStoreFormat
import TripStoreSystem

/// One value index as a snapshot image saved it, used in place: a query
/// reads the values and rows it needs, and each group of 256 values (their
/// key bytes, running counts and the checksums of their rows), each value's
/// rows, and each group of 256 text buckets passes its checksum and checks
/// the first time it is touched. A piece that fails reads as empty and notes
/// the damage, so the command answers from the JSON.
///
/// Its bytes (every part 8-byte aligned):
///
/// | part | contents |
/// |---|---|
/// | value group checksums | `UInt64` per 256 values |
/// | bucket group checksums | `UInt64` per 256 text buckets (string indexes) |
/// | rows without a value | `Int32`, ascending |
/// | key offsets | `Int64` per value and one more: value `i` is `keys[offsets[i]..<offsets[i + 1]]` |
/// | counts | `Int64` per value and one more: rows before value `i` |
/// | row checksums | `UInt64` per value: the checksum of its rows |
/// | rows | `Int32`, grouped by value, ascending within each |
/// | keys | a tag byte (0 false, 1 true, 2 a double, 3 a string, 4 an integer) and the value's bytes |
/// | bucket starts | `Int64` per bucket and one more (see `TrigramBuckets`) |
/// | postings | `Int32` value positions |
///
/// The parts up to the rows without a value are covered by the directory
/// entry's checksum, checked when the index is first used.
final class SavedValueIndex: SortedEntries {
    static let groupShift = 8

    let keyCount: Int
    let rowCount: Int
    let bucketCount: Int
    /// Rows without a value, checked when the index is first used.
    let nulls: [RowID]

    private let image: MappedImage
    private let name: String
    private let keyTag: UInt8
    /// Entities whose objects the index covers.
    private let covers: [Bool]
    private let groupHashes: UnsafePointer<UInt64>
    private let bucketGroupHashes: UnsafePointer<UInt64>
    private let offsets: UnsafePointer<Int64>
    private let counts: UnsafePointer<Int64>
    private let rowHashes: UnsafePointer<UInt64>
    private let flat: UnsafePointer<Int32>
    private let keyBytes: UnsafeRawPointer
    private let keyByteCount: Int
    private let starts: UnsafePointer<Int64>
    private let postings: UnsafePointer<Int32>
    private let postingCount: Int
    /// Per group: 0 not checked, 1 good, 2 damaged.
    private let groupState: ZeroedTable
    private let bucketGroupState: ZeroedTable
    /// Per value: whether its rows passed their checks (0 not checked, 1 good, 2 damaged).
    private let valueState: ZeroedTable

    /// Fields of a directory entry, in order.
    enum Field: Int, CaseIterable {
        case offset, bytes, checksum, keys, rows, nulls, keyBytes, buckets, postings
    }

    /// The tag of an attribute's keys (true's 1 counts as false's 0).
    static func keyTag(_ type: ValueType) -> UInt8 {
        switch type {
        case .bool: return 0
        case .int: return 4
        case .double, .date: return 2
        default: return 3
        }
    }

    static func pad(_ n: Int) -> Int { (n + 7) & ~7 }

    static func groups(_ n: Int) -> Int { (n + (1 << groupShift) - 1) >> groupShift }

    /// The size of an index's bytes from its counts, if they are in range.
    static func byteCount(keys: Int, rows: Int, nulls: Int, keyBytes: Int, buckets: Int, postings: Int) -> Int? {
        let limit = 1 << 36
        guard keys >= 0, rows >= 0, nulls >= 0, keyBytes >= 0, postings >= 0, keys < limit, rows < limit, nulls < limit,
              keyBytes < limit, postings < limit, buckets == 0 || TrigramBuckets.isValidBucketCount(buckets) else { return nil }
        return groups(keys) * 8 + groups(buckets) * 8 + pad(nulls * 4) + (keys + 1) * 16 + keys * 8 + pad(rows * 4) + pad(keyBytes)
            + (buckets == 0 ? 0 : (buckets + 1) * 8) + pad(postings * 4)
    }

    /// Index `k` of the image, once its entry is in bounds and its head
    /// (checksums and rows without a value) passes; nil when not.
    init?(image: MappedImage, entry: UnsafeRawPointer, entity: Int, property: Property) {
        func field(_ f: Field) -> Int { Int(entry.load(fromByteOffset: f.rawValue * 8, as: Int64.self)) }
        let at = field(.offset), bytes = field(.bytes)
        keyCount = field(.keys)
        rowCount = field(.rows)
        let nullCount = field(.nulls)
        keyByteCount = field(.keyBytes)
        bucketCount = field(.buckets)
        postingCount = field(.postings)
        let section = image.layout.valueIndexes..<(image.layout.valueIndexes + Int(image.header.valueIndexBytes))
        guard let expected = SavedValueIndex.byteCount(keys: keyCount, rows: rowCount, nulls: nullCount, keyBytes: keyByteCount,
                                                       buckets: bucketCount, postings: postingCount),
              expected == bytes, at % 8 == 0, at >= section.lowerBound, at <= section.upperBound, bytes <= section.upperBound - at,
              let attribute = property.attribute else { return nil }
        keyTag = SavedValueIndex.keyTag(attribute.type)
        guard keyTag == 3 || bucketCount == 0 else { return nil }
        self.image = image
        name = "\(image.schema.entities[entity].name).\(property.name)"
        var covers = [Bool](repeating: false, count: image.schema.entities.count)
        for e in image.schema.entities[entity].closure { covers[e] = true }
        self.covers = covers
        var p = UnsafeRawPointer(image.base + at)
        func take<T>(_ n: Int, _: T.Type) -> UnsafePointer<T> {
            defer { p += SavedValueIndex.pad(n * MemoryLayout<T>.stride) }
            return p.bindMemory(to: T.self, capacity: n)
        }
        let head = p
        groupHashes = take(SavedValueIndex.groups(keyCount), UInt64.self)
        bucketGroupHashes = take(SavedValueIndex.groups(bucketCount), UInt64.self)
        let nullRows = UnsafeBufferPointer(start: take(nullCount, Int32.self), count: nullCount)
        guard PageHash.hash(UnsafeRawBufferPointer(start: head, count: p - head)) == UInt64(bitPattern: Int64(field(.checksum))) else {
            return nil
        }
        offsets = take(keyCount + 1, Int64.self)
        counts = take(keyCount + 1, Int64.self)
        rowHashes = take(keyCount, UInt64.self)
        flat = take(rowCount, Int32.self)
        keyBytes = p
        p += SavedValueIndex.pad(keyByteCount)
        starts = take(bucketCount == 0 ? 0 : bucketCount + 1, Int64.self)
        postings = take(postingCount, Int32.self)
        groupState = ZeroedTable(count: SavedValueIndex.groups(keyCount))
        bucketGroupState = ZeroedTable(count: SavedValueIndex.groups(bucketCount))
        valueState = ZeroedTable(count: keyCount)
        nulls = Array(nullRows)
        var previous: RowID = -1
        for r in nulls {
            guard r > previous, fits(r) else { return nil }
            previous = r
        }
    }

    /// Whether `r` is a row of the image holding an object the index covers (or one deleted since).
    @inline(__always) private func fits(_ r: RowID) -> Bool {
        guard r >= 0, Int(r) < image.rows else { return false }
        let e = Int(image.entities[Int(r)])
        return e == -1 || (e >= 0 && e < covers.count && covers[e])
    }

    // MARK: Reading

    func key(_ i: Int) -> IndexKey {
        guard i >= 0, i < keyCount, checkGroup(i >> SavedValueIndex.groupShift), let k = decodeKey(i) else { return .bool(false) }
        return k
    }

    func entriesBefore(_ i: Int) -> Int {
        if i >= keyCount { return rowCount }
        guard i >= 0, checkGroup(i >> SavedValueIndex.groupShift) else { return 0 }
        return Int(counts[i])
    }

    func rows(_ positions: Range<Int>) -> [RowID] {
        guard !positions.isEmpty, positions.lowerBound >= 0, positions.upperBound <= keyCount else { return [] }
        let first = positions.lowerBound >> SavedValueIndex.groupShift, last = (positions.upperBound - 1) >> SavedValueIndex.groupShift
        for g in first...last where !checkGroup(g) { return [] }
        for i in positions where !checkRows(i) { return [] }
        let from = Int(counts[positions.lowerBound])
        let to = positions.upperBound == keyCount ? rowCount : Int(counts[positions.upperBound])
        guard from <= to else { return [] }
        return Array(UnsafeBufferPointer(start: flat + from, count: to - from))
    }

    func textCandidates(_ needle: [UInt8]) -> [Int]? {
        guard bucketCount > 0 else { return nil }
        let wanted = TrigramBuckets.buckets(of: needle, buckets: bucketCount)
        guard !wanted.isEmpty else { return nil }
        var lists: [UnsafeBufferPointer<Int32>] = []
        for b in wanted {
            guard checkBucketGroup(b >> SavedValueIndex.groupShift) else { return [] }
            lists.append(UnsafeBufferPointer(start: postings + Int(starts[b]), count: Int(starts[b + 1] - starts[b])))
        }
        return TrigramBuckets.intersect(lists)
    }

    /// The whole index in memory (every group checked; a damaged one left out).
    func ordered() -> ValueIndex.Ordered {
        var out = ValueIndex.Ordered(keys: [], flat: [], counts: [0])
        out.keys.reserveCapacity(keyCount)
        out.flat.reserveCapacity(rowCount)
        for g in 0..<SavedValueIndex.groups(keyCount) where checkGroup(g) {
            let first = g << SavedValueIndex.groupShift, stop = min(keyCount, first + (1 << SavedValueIndex.groupShift))
            for i in first..<stop {
                guard let k = decodeKey(i) else { continue }
                out.keys.append(k)
                out.flat.append(contentsOf: rows(i..<(i + 1)))
                out.counts.append(out.flat.count)
            }
        }
        return out
    }

    /// Checks every group not yet checked; false when one fails.
    func checkAll() -> Bool {
        var ok = true
        for g in groupState.indices where !checkGroup(g) { ok = false }
        for g in bucketGroupState.indices where !checkBucketGroup(g) { ok = false }
        for i in valueState.indices where groupState[i >> SavedValueIndex.groupShift] == 1 && !checkRows(i) { ok = false }
        return ok
    }

    // MARK: Checks

    private func decodeKey(_ i: Int) -> IndexKey? {
        let from = Int(offsets[i]), to = Int(offsets[i + 1])
        guard from >= 0, from < to, to <= keyByteCount else { return nil }
        switch (keyBytes.load(fromByteOffset: from, as: UInt8.self), to - from) {
        case (0, 1): return .bool(false)
        case (1, 1): return .bool(true)
        case (4, 9): return .integer(Int64(littleEndian: keyBytes.loadUnaligned(fromByteOffset: from + 1, as: Int64.self)))
        case (2, 9): return .number(Double(bitPattern: UInt64(littleEndian: keyBytes.loadUnaligned(fromByteOffset: from + 1, as: UInt64.self))))
        case (3, _): return .string(String(decoding: UnsafeRawBufferPointer(start: keyBytes + from + 1, count: to - from - 1), as: UTF8.self))
        default: return nil
        }
    }

    @inline(__always) private func checkGroup(_ g: Int) -> Bool {
        if groupState[g] == 0 {
            groupState[g] = groupIsSound(g) ? 1 : 2
            if groupState[g] == 2 { image.noteDamage("the index of \(name), values \(g << SavedValueIndex.groupShift) and on,") }
        }
        return groupState[g] == 1
    }

    /// Values `first..<stop`: offsets and counts in order and in bounds (also
    /// the first of the next group, so the order holds across groups), the
    /// checksum, and each key of the attribute's kind and after the one before.
    private func groupIsSound(_ g: Int) -> Bool {
        let first = g << SavedValueIndex.groupShift, stop = min(keyCount, first + (1 << SavedValueIndex.groupShift))
        guard g > 0 || (offsets[0] == 0 && counts[0] == 0), stop < keyCount || (Int(offsets[stop]) == keyByteCount && Int(counts[stop]) == rowCount) else {
            return false
        }
        for i in first..<stop {
            guard offsets[i] >= 0, offsets[i] < offsets[i + 1], Int(offsets[i + 1]) <= keyByteCount,
                  counts[i] >= 0, counts[i] <= counts[i + 1], Int(counts[i + 1]) <= rowCount else { return false }
        }
        let keyFrom = Int(offsets[first]), keyTo = Int(offsets[stop])
        var h = PageHash.hash(UnsafeRawBufferPointer(start: offsets + first, count: (stop - first + 1) * 8), seed: UInt64(g))
        h = PageHash.hash(UnsafeRawBufferPointer(start: counts + first, count: (stop - first + 1) * 8), seed: h)
        h = PageHash.hash(UnsafeRawBufferPointer(start: rowHashes + first, count: (stop - first) * 8), seed: h)
        h = PageHash.hash(UnsafeRawBufferPointer(start: keyBytes + keyFrom, count: keyTo - keyFrom), seed: h)
        guard h == groupHashes[g] else { return false }
        var previous: IndexKey?
        // The next group's first value too, so the order holds across groups.
        for i in first..<(stop < keyCount ? stop + 1 : stop) {
            guard let k = decodeKey(i) else { return false }
            let tag = keyBytes.load(fromByteOffset: Int(offsets[i]), as: UInt8.self)
            guard (tag == 1 ? 0 : tag) == keyTag, previous.map({ $0 < k }) ?? true else { return false }
            previous = k
        }
        return true
    }

    /// Value `i`'s rows (its group already checked): their checksum, each a
    /// row of the index's types, ascending.
    private func checkRows(_ i: Int) -> Bool {
        if valueState[i] == 0 {
            let rows = UnsafeBufferPointer(start: flat + Int(counts[i]), count: Int(counts[i + 1] - counts[i]))
            var ok = PageHash.hash(UnsafeRawBufferPointer(rows), seed: UInt64(i)) == rowHashes[i]
            var previous: RowID = -1
            for r in rows where ok {
                ok = r > previous && fits(r)
                previous = r
            }
            valueState[i] = ok ? 1 : 2
            if !ok { image.noteDamage("the index of \(name), the rows of value \(i),") }
        }
        return valueState[i] == 1
    }

    private func checkBucketGroup(_ g: Int) -> Bool {
        if bucketGroupState[g] == 0 {
            bucketGroupState[g] = bucketGroupIsSound(g) ? 1 : 2
            if bucketGroupState[g] == 2 { image.noteDamage("the text index of \(name), buckets \(g << SavedValueIndex.groupShift) and on,") }
        }
        return bucketGroupState[g] == 1
    }

    /// Buckets `first..<stop`: starts in order within the postings, the
    /// checksum, and each posting a value position, ascending within its bucket.
    private func bucketGroupIsSound(_ g: Int) -> Bool {
        let first = g << SavedValueIndex.groupShift, stop = min(bucketCount, first + (1 << SavedValueIndex.groupShift))
        guard g > 0 || starts[0] == 0, stop < bucketCount || Int(starts[stop]) == postingCount else { return false }
        for b in first..<stop {
            guard starts[b] >= 0, starts[b] <= starts[b + 1], Int(starts[b + 1]) <= postingCount else { return false }
        }
        let from = Int(starts[first]), to = Int(starts[stop])
        var h = PageHash.hash(UnsafeRawBufferPointer(start: starts + first, count: (stop - first + 1) * 8), seed: ~UInt64(g))
        h = PageHash.hash(UnsafeRawBufferPointer(start: postings + from, count: (to - from) * 4), seed: h)
        guard h == bucketGroupHashes[g] else { return false }
        for b in first..<stop {
            var previous: Int32 = -1
            for p in UnsafeBufferPointer(start: postings + Int(starts[b]), count: Int(starts[b + 1] - starts[b])) {
                guard p > previous, Int(p) < keyCount else { return false }
                previous = p
            }
        }
        return true
    }
}
