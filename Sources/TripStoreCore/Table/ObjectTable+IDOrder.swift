import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ObjectTable {
    // MARK: Byte order of ids

    /// The first eight bytes as a big-endian integer (byte order is integer order).
    @inline(__always) static func prefix(_ p: UnsafeRawBufferPointer) -> UInt64 {
        var v: UInt64 = 0
        for k in 0..<8 { v = v << 8 | UInt64(k < p.count ? p[k] : 0) }
        return v
    }

    @inline(__always) static func less(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = min(a.count, b.count)
        if n > 0 {
            let c = memcmp(a.baseAddress!, b.baseAddress!, n)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }

    @inline(__always) static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.count == 0 || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    /// Byte order of two strings' UTF-8.
    static func byteLess(_ a: String, _ b: String) -> Bool {
        var a = a, b = b
        return a.withUTF8 { pa in b.withUTF8 { pb in less(UnsafeRawBufferPointer(pa), UnsafeRawBufferPointer(pb)) } }
    }

    /// Finds the rows of a snapshot's references with one or two cache misses
    /// each instead of a binary search's twenty; built for loading only.
    struct LoadHash {
        /// Per slot: 32 bits of the id's hash above the row; 0 is empty
        /// (rows are stored plus one). The hash bits spare most wrong rows a
        /// look at their id.
        private var slots: [UInt64]
        private let mask: Int

        init(_ prefixes: [UInt64]) {
            var capacity = 1024
            while capacity < prefixes.count * 2 { capacity *= 2 }
            mask = capacity - 1
            slots = Array(repeating: 0, count: capacity)
            for (row, p) in prefixes.enumerated() {
                let h = LoadHash.hash(p)
                var i = h & mask
                while slots[i] != 0 { i = (i + 1) & mask }
                slots[i] = LoadHash.tag(h) | UInt64(row + 1)
            }
        }

        @inline(__always) static func hash(_ p: UInt64) -> Int {
            var x = p ^ (p >> 29)
            x = x &* 0xBF58476D1CE4E5B9
            x ^= x >> 32
            return Int(truncatingIfNeeded: x)
        }

        @inline(__always) static func tag(_ h: Int) -> UInt64 { UInt64(truncatingIfNeeded: h) & 0xFFFF_FFFF_0000_0000 }

        /// The row whose id is `key` (every row is live while loading).
        @inline(__always) func row(_ key: UnsafeRawBufferPointer, in table: ReadView) -> RowID? {
            row(key) { row in table.withID(row) { ObjectTable.equal($0, key) } }
        }

        /// The row whose id is `key`, where `matches` says whether a row's id is `key`.
        @inline(__always) func row(_ key: UnsafeRawBufferPointer, matches: (RowID) -> Bool) -> RowID? {
            let h = LoadHash.hash(ObjectTable.prefix(key))
            let tag = LoadHash.tag(h)
            var i = h & mask
            while true {
                let s = slots[i]
                if s == 0 { return nil }
                if s & 0xFFFF_FFFF_0000_0000 == tag {
                    let row = RowID(truncatingIfNeeded: (s & 0xFFFF_FFFF) - 1)
                    if matches(row) { return row }
                }
                i = (i + 1) & mask
            }
        }
    }
}
