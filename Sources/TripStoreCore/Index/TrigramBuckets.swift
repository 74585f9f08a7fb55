import TripStoreFormat
import TripStoreSystem

/// The text index of `~` and `^=`: each trigram (three consecutive bytes) of
/// an index's folded string values hashed to a bucket, and per bucket the
/// positions of the values that hold one of its trigrams, ascending.
///
/// A needle of three bytes or more is in a value only if each of its
/// trigrams is, so intersecting the needle's buckets keeps every match; the
/// candidates are then tested exactly (a bucket shared by two trigrams only
/// adds candidates). A lookup reads the needle's few buckets, not every value.
package struct TrigramBuckets: Sendable {
    /// Bucket `b`'s positions are `postings[starts[b]..<starts[b + 1]]`.
    package private(set) var starts: [Int64]
    package private(set) var postings: [Int32]

    package var bucketCount: Int { starts.count - 1 }

    static let minimumBuckets = 256
    static let maximumBuckets = 1 << 20

    /// Whether `n` is a bucket count a saved index may have.
    static func isValidBucketCount(_ n: Int) -> Bool {
        n >= minimumBuckets && n <= maximumBuckets && n & (n - 1) == 0
    }

    @inline(__always) static func bucket(_ a: UInt8, _ b: UInt8, _ c: UInt8, buckets: Int) -> Int {
        let t = UInt32(a) | UInt32(b) << 8 | UInt32(c) << 16
        // Fibonacci hashing: the top bits of the product spread nearby trigrams.
        return Int((t &* 0x9E37_79B1) >> UInt32(32 - buckets.trailingZeroBitCount))
    }

    /// The distinct buckets of a folded needle's trigrams; empty when it is shorter than three bytes.
    static func buckets(of needle: [UInt8], buckets: Int) -> [Int] {
        guard needle.count >= 3 else { return [] }
        var out: [Int] = []
        for i in 0...(needle.count - 3) {
            let b = bucket(needle[i], needle[i + 1], needle[i + 2], buckets: buckets)
            if !out.contains(b) { out.append(b) }
        }
        return out
    }

    /// Buckets over `folded` (value `i`'s folded UTF-8 bytes at position `i`),
    /// about two per distinct trigram, a power of two.
    init(folded: [[UInt8]]) {
        var bytes: [UInt8] = [], ends: [Int] = []
        ends.reserveCapacity(folded.count)
        for f in folded {
            bytes += f
            ends.append(bytes.count)
        }
        self.init(bytes: bytes, ends: ends)
    }

    /// Buckets over values laid back to back: value `i` is
    /// `bytes[ends[i - 1]..<ends[i]]` (from 0 for the first).
    init(bytes: [UInt8], ends: [Int]) {
        // Raw pointers in the loops: they run over every trigram of every distinct value, twice.
        var starts: [Int64] = [], postings: [Int32] = []
        bytes.withUnsafeBufferPointer { f in
            ends.withUnsafeBufferPointer { ends in
                func eachTrigram(_ body: (_ position: Int32, _ trigram: Int) -> Void) {
                    var from = 0
                    for (position, end) in ends.enumerated() {
                        defer { from = end }
                        guard end - from >= 3 else { continue }
                        for i in from...(end - 3) {
                            body(Int32(position), Int(f[i]) | Int(f[i + 1]) << 8 | Int(f[i + 2]) << 16)
                        }
                    }
                }
                var seen = [UInt64](repeating: 0, count: (1 << 24) / 64)
                var distinct = 0
                seen.withUnsafeMutableBufferPointer { seen in
                    eachTrigram { _, t in
                        if seen[t >> 6] & (1 << UInt64(t & 63)) == 0 {
                            seen[t >> 6] |= 1 << UInt64(t & 63)
                            distinct += 1
                        }
                    }
                }
                var n = TrigramBuckets.minimumBuckets
                while n < distinct * 2 && n < TrigramBuckets.maximumBuckets { n <<= 1 }
                let shift = UInt32(32 - n.trailingZeroBitCount)
                // Each value once per bucket of its trigrams (as `bucket(_:_:_:buckets:)`).
                func eachBucket(_ body: (_ bucket: Int, _ position: Int32) -> Void) {
                    var last = [Int32](repeating: -1, count: n)
                    last.withUnsafeMutableBufferPointer { last in
                        eachTrigram { position, t in
                            let b = Int((UInt32(t) &* 0x9E37_79B1) >> shift)
                            if last[b] != position {
                                last[b] = position
                                body(b, position)
                            }
                        }
                    }
                }
                // Two passes: count each value once per bucket, then place it.
                var counts = [Int64](repeating: 0, count: n + 1)
                counts.withUnsafeMutableBufferPointer { counts in
                    eachBucket { b, _ in counts[b + 1] += 1 }
                }
                for b in 0..<n { counts[b + 1] += counts[b] }
                starts = counts
                var next = counts
                postings = [Int32](repeating: 0, count: Int(counts[n]))
                postings.withUnsafeMutableBufferPointer { postings in
                    next.withUnsafeMutableBufferPointer { next in
                        eachBucket { b, position in
                            postings[Int(next[b])] = position
                            next[b] += 1
                        }
                    }
                }
            }
        }
        self.starts = starts
        self.postings = postings
    }

    /// Positions that may hold `needle` (folded), ascending; nil when the
    /// needle is too short for trigrams to narrow anything.
    func candidates(_ needle: [UInt8]) -> [Int]? {
        let wanted = TrigramBuckets.buckets(of: needle, buckets: bucketCount)
        guard !wanted.isEmpty else { return nil }
        return postings.withUnsafeBufferPointer { p in
            TrigramBuckets.intersect(wanted.map { b in
                UnsafeBufferPointer(rebasing: p[Int(starts[b])..<Int(starts[b + 1])])
            })
        }
    }

    /// The positions in every list (each ascending), ascending.
    static func intersect(_ lists: [UnsafeBufferPointer<Int32>]) -> [Int] {
        let sorted = lists.sorted { $0.count < $1.count }
        guard let first = sorted.first else { return [] }
        var out = first.map { Int($0) }
        for list in sorted.dropFirst() {
            var kept: [Int] = []
            var j = 0
            for p in out {
                // Galloping would help skewed lists; buckets are short next to the values.
                while j < list.count && Int(list[j]) < p { j += 1 }
                if j < list.count && Int(list[j]) == p { kept.append(p) }
            }
            out = kept
            if out.isEmpty { break }
        }
        return out
    }
}
