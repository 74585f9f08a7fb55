import TripStoreFormat
import TripStoreSystem

/// One value index written in the image's form (`SavedValueIndex` reads it):
/// its bytes and the fields of its directory entry.
struct SavedIndexBytes {
    var bytes: [UInt8]
    /// In `SavedValueIndex.Field` order; the offset is filled in by the writer.
    var fields: [Int64]

    init(_ o: ValueIndex.Ordered, nulls: [RowID], text: Bool) {
        var keyBytes: [UInt8] = []
        var offsets: [Int64] = [0]
        offsets.reserveCapacity(o.keys.count + 1)
        // Each string key folded, back to back (see `TrigramBuckets(bytes:ends:)`).
        var folded: [UInt8] = [], foldedEnds: [Int] = []
        for k in o.keys {
            switch k {
            case .bool(let b): keyBytes.append(b ? 1 : 0)
            case .integer(let i):
                keyBytes.append(4)
                withUnsafeBytes(of: i.littleEndian) { keyBytes.append(contentsOf: $0) }
            case .number(let d):
                keyBytes.append(2)
                withUnsafeBytes(of: d.bitPattern.littleEndian) { keyBytes.append(contentsOf: $0) }
            case .string(let s):
                keyBytes.append(3)
                keyBytes.append(contentsOf: s.utf8)
                if text {
                    folded += TextFolding.fold(s).utf8
                    foldedEnds.append(folded.count)
                }
            }
            offsets.append(Int64(keyBytes.count))
        }
        let counts = o.counts.map { Int64($0) }
        let rowHashes = o.keys.indices.map { i in o.flat[o.counts[i]..<o.counts[i + 1]].withUnsafeBytes { PageHash.hash($0, seed: UInt64(i)) } }
        let buckets = text ? TrigramBuckets(bytes: folded, ends: foldedEnds) : nil
        let shift = SavedValueIndex.groupShift

        // Per group of values: offsets and counts (one past the group too), the rows' checksums, key bytes.
        var groupHashes: [UInt64] = []
        for g in 0..<SavedValueIndex.groups(o.keys.count) {
            let first = g << shift, stop = min(o.keys.count, first + (1 << shift))
            var h = offsets[first...stop].withUnsafeBytes { PageHash.hash($0, seed: UInt64(g)) }
            h = counts[first...stop].withUnsafeBytes { PageHash.hash($0, seed: h) }
            h = rowHashes[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: h) }
            h = keyBytes[Int(offsets[first])..<Int(offsets[stop])].withUnsafeBytes { PageHash.hash($0, seed: h) }
            groupHashes.append(h)
        }
        var bucketHashes: [UInt64] = []
        if let buckets {
            for g in 0..<SavedValueIndex.groups(buckets.bucketCount) {
                let first = g << shift, stop = min(buckets.bucketCount, first + (1 << shift))
                var h = buckets.starts[first...stop].withUnsafeBytes { PageHash.hash($0, seed: ~UInt64(g)) }
                h = buckets.postings[Int(buckets.starts[first])..<Int(buckets.starts[stop])].withUnsafeBytes { PageHash.hash($0, seed: h) }
                bucketHashes.append(h)
            }
        }
        var bytes: [UInt8] = []
        func add<T>(_ a: [T]) {
            a.withUnsafeBytes { bytes.append(contentsOf: $0) }
            while bytes.count % 8 != 0 { bytes.append(0) }
        }
        add(groupHashes)
        add(bucketHashes)
        add(nulls)
        let head = bytes.withUnsafeBytes { PageHash.hash($0) }
        add(offsets)
        add(counts)
        add(rowHashes)
        add(o.flat)
        add(keyBytes)
        if let buckets {
            add(buckets.starts)
            add(buckets.postings)
        }
        self.bytes = bytes
        fields = [0, Int64(bytes.count), Int64(bitPattern: head), Int64(o.keys.count), Int64(o.flat.count), Int64(nulls.count),
                  Int64(keyBytes.count), Int64(buckets?.bucketCount ?? 0), Int64(buckets?.postings.count ?? 0)]
    }
}
