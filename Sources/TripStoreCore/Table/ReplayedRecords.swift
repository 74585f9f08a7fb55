/// The records a journal's replay state holds for image rows (see
/// `JournalState`), or that their objects were deleted: the newest of each
/// row, sorted by row, in the bytes of the state as read. A table takes a row's record when the image's checks
/// of that row's unit run, so an open that takes a state copies, checks
/// and indexes nothing for the rows it never reads.
struct ReplayedRecords {
    struct Entry {
        var row: Int32
        var entity: Int16
        /// Where the record is in `bytes`, and its length: 0 when the row's object was deleted.
        var offset: Int
        var count: Int
        var isDelete: Bool { count == 0 }
    }

    /// The state file's bytes.
    let bytes: [UInt8]
    /// Sorted by row, one per row.
    let entries: [Entry]

    static let none = ReplayedRecords(bytes: [], entries: [])

    /// The newest entry of each row among `entries`, given oldest first,
    /// sorted by row; nil when a row has an entry after its delete (a row
    /// the image holds is never used again once its object is deleted).
    init?(bytes: [UInt8], newestLast entries: [Entry]) {
        // Sorted by row, and by place within a row: the last of each row is its newest.
        let keys = entries.indices.map { UInt64(UInt32(bitPattern: entries[$0].row)) << 32 | UInt64($0) }.sorted()
        var newest: [Entry] = []
        newest.reserveCapacity(keys.count)
        for (k, key) in keys.enumerated() {
            let entry = entries[Int(key & 0xFFFF_FFFF)]
            guard k + 1 == keys.count || keys[k + 1] >> 32 != key >> 32 else {
                if entry.isDelete { return nil }
                continue
            }
            newest.append(entry)
        }
        self.init(bytes: bytes, entries: newest)
    }

    private init(bytes: [UInt8], entries: [Entry]) {
        self.bytes = bytes
        self.entries = entries
    }

    /// The entries of rows in `rows`.
    func entries(in rows: Range<Int>) -> ArraySlice<Entry> {
        var lo = 0, hi = entries.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if Int(entries[mid].row) < rows.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        var end = lo
        while end < entries.count && Int(entries[end].row) < rows.upperBound { end += 1 }
        return entries[lo..<end]
    }
}
