import TripStoreSystem

extension MappedImage {
    /// Maps into the page tables the pages that finding the row whose id
    /// begins with `prefix`, and reading its record, will touch: its chunk
    /// of the row group table, its group's columns and its record. For a
    /// thread that takes those page faults ahead of a journal's replay on
    /// the other core (see `JournalTouchAhead`); returns a sum of the bytes
    /// it read, so that the reads are made.
    ///
    /// Nothing read here is believed: the fences, prefixes and offsets it
    /// searches with are not checked yet, so every number read from the
    /// file only chooses pages within the mapping, and the replay checks
    /// all it reads as it always does. It reads only what no one writes
    /// (the directory, offsets, prefixes and unit checksums); the entities
    /// and records, which the table may change in place meanwhile, are
    /// mapped without being read.
    func touchRow(prefix k: UInt64) -> UInt64 {
        let chunks = layout.rowChunks, groups = layout.rowGroups, entry = SnapshotImage.Layout.rowGroupEntry
        guard rows > 0, chunks > 0, groups > 0 else { return 0 }
        let chunkTable = UnsafeRawPointer(base + layout.rowChunkTable)
        var lo = 0, hi = chunks
        while lo < hi {
            let mid = (lo + hi) / 2
            if chunkTable.load(fromByteOffset: mid * 16 + 8, as: UInt64.self) < k { lo = mid + 1 } else { hi = mid }
        }
        let (from, to) = SnapshotImage.chunk(max(0, lo - 1), of: groups)
        guard from < to else { return 0 }
        let groupTable = UnsafeRawPointer(base + layout.rowGroupTable)
        // The chunk's entries are all hashed when it is first checked.
        var sum = Self.readPages(groupTable + from * entry, bytes: (to - from) * entry)
        var a = from, b = to
        while a < b {
            let mid = (a + b) / 2
            if groupTable.load(fromByteOffset: mid * entry + 8, as: UInt64.self) < k { a = mid + 1 } else { b = mid }
        }
        let g = max(0, a - 1)
        let first = g << SnapshotImage.groupShift, stop = min(rows, first + SnapshotImage.groupSize)
        guard first < stop else { return sum }
        // The group's columns are all hashed when it is first checked.
        MemoryTuning.mapForReading(entities + first, bytes: (stop - first) * 2)
        sum &+= unitHashes[first >> SnapshotImage.unitShift]
        var i = first, j = stop
        while i < j {
            let mid = (i + j) / 2
            if prefixes[mid] < k { i = mid + 1 } else { j = mid }
        }
        let r = min(i, stop - 1)
        let groupStart = g == 0 ? 0 : groupTable.load(fromByteOffset: (g - 1) * entry + 16, as: Int64.self)
        let start = groupStart &+ Int64(offsets[r]), recordBytes = header.recordBytes
        guard start >= 0, start < recordBytes else { return sum }
        // The record's unit is hashed when first read: a few hundred bytes.
        MemoryTuning.mapForReading(records + Int(start), bytes: Int(min(recordBytes - start, 512)))
        return sum &+ prefixes[r]
    }

    /// A byte of each page of `bytes` bytes from `start`, summed.
    private static func readPages(_ start: UnsafeRawPointer, bytes: Int) -> UInt64 {
        guard bytes > 0 else { return 0 }
        var sum: UInt64 = 0, at = 0
        while at < bytes {
            sum &+= UInt64(start.load(fromByteOffset: at, as: UInt8.self))
            at += 4096
        }
        return sum &+ UInt64(start.load(fromByteOffset: bytes - 1, as: UInt8.self))
    }
}
