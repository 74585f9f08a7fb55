import TripStoreFormat

/// The records and relationship lists a journal's replay state holds (see
/// `JournalState`): the newest of each row, sorted by row, and of each list,
/// sorted by number, in the bytes of the state as read. A table takes an
/// image row's record when the image's checks of that row's unit run, so an
/// open that takes a state copies, checks and indexes nothing for the image
/// rows it never reads; rows and lists past the image's are taken at open.
struct ReplayedRecords {
    struct Entry {
        var row: Int32
        var entity: Int16
        /// Where the record is in `bytes`, and its length: 0 when the row holds no object.
        var offset: Int
        var count: Int
        var isEmpty: Bool { count == 0 }
    }

    struct ListEntry {
        var number: Int32
        /// Where its rows are in `bytes` (4 bytes each), and how many.
        var offset: Int
        var count: Int
    }

    /// The state file's bytes.
    let bytes: StateFileBytes
    /// Sorted by row, one per row.
    let entries: [Entry]
    /// Sorted by number, one per list.
    let lists: [ListEntry]
    /// The table's rows and lists once the covered lines are applied.
    let rowCount: Int
    let listCount: Int

    static let none = ReplayedRecords(bytes: .empty, entries: [], lists: [], rowCount: 0, listCount: 0)

    /// The newest entry of each row and list among those given, oldest
    /// first; nil unless they hold every row past `imageRows` up to
    /// `rowCount` and every list past `imageLists` up to `listCount`, or
    /// when a row has an entry after it was emptied (a row is never used
    /// again once its object is deleted).
    init?(bytes: StateFileBytes, newestLast entries: [Entry], lists: [ListEntry], rowCount: Int, listCount: Int, imageRows: Int, imageLists: Int) {
        var emptiedEarlier = false
        let rows = Self.newestOfEach(entries.map { Int($0.row) }) { if entries[$0].isEmpty { emptiedEarlier = true } }
        let numbers = Self.newestOfEach(lists.map { Int($0.number) }) { _ in }
        guard !emptiedEarlier,
              rows.count - rows.partitionPoint({ Int(entries[$0].row) >= imageRows }) == rowCount - imageRows,
              numbers.count - numbers.partitionPoint({ Int(lists[$0].number) >= imageLists }) == listCount - imageLists else { return nil }
        self.init(bytes: bytes, entries: rows.map { entries[$0] }, lists: numbers.map { lists[$0] }, rowCount: rowCount, listCount: listCount)
    }

    private init(bytes: StateFileBytes, entries: [Entry], lists: [ListEntry], rowCount: Int, listCount: Int) {
        self.bytes = bytes
        self.entries = entries
        self.lists = lists
        self.rowCount = rowCount
        self.listCount = listCount
    }

    /// The index of the newest of each key in `keys` (oldest first), sorted
    /// by key; `superseded` is called with each index that a newer one of its key replaces.
    private static func newestOfEach(_ keys: [Int], superseded: (Int) -> Void) -> [Int] {
        // Sorted by key, and by place within a key: the last of each key is its newest.
        let sorted = keys.indices.map { UInt64(UInt32(truncatingIfNeeded: keys[$0])) << 32 | UInt64($0) }.sorted()
        var newest: [Int] = []
        newest.reserveCapacity(sorted.count)
        for (k, key) in sorted.enumerated() {
            if k + 1 < sorted.count && sorted[k + 1] >> 32 == key >> 32 {
                superseded(Int(key & 0xFFFF_FFFF))
            } else {
                newest.append(Int(key & 0xFFFF_FFFF))
            }
        }
        return newest
    }

    /// The entries of rows in `rows`.
    func entries(in rows: Range<Int>) -> ArraySlice<Entry> {
        let lo = entries.partitionPoint { Int($0.row) >= rows.lowerBound }
        let hi = entries.partitionPoint { Int($0.row) >= rows.upperBound }
        return entries[lo..<max(lo, hi)]
    }

    /// A list's rows.
    func rows(of list: ListEntry) -> [RowID] {
        bytes.withUnsafeBytes { raw in (0..<list.count).map { RowID(bitPattern: raw.loadLE(UInt32.self, at: list.offset + 4 * $0)) } }
    }
}

extension Collection {
    /// The first index whose element satisfies `belongsToSecondPart`, in a
    /// collection where every such element follows every other (binary search).
    func partitionPoint(_ belongsToSecondPart: (Element) -> Bool) -> Index {
        var lo = startIndex, n = count
        while n > 0 {
            let half = n / 2, mid = index(lo, offsetBy: half)
            if belongsToSecondPart(self[mid]) {
                n = half
            } else {
                lo = index(after: mid)
                n -= half + 1
            }
        }
        return lo
    }
}
