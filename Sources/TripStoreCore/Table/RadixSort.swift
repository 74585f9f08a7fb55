/// A stable least-significant-digit radix sort of (key, item) pairs: for
/// the millions of ids a bulk import sorts, and the numbers an image's index
/// orders, where comparing costs more than dealing out by bytes.
enum RadixSort {
    /// Sorts `keys` by the low `bits` bits of their keys, a byte a pass (a
    /// pass skipped where every key has the same byte), back and forth with
    /// `scratch`; pairs with equal keys keep their order. True when the
    /// result is in `scratch`.
    static func byKey(_ keys: UnsafeMutableBufferPointer<(prefix: UInt64, g: Int32)>,
                      scratch: UnsafeMutableBufferPointer<(prefix: UInt64, g: Int32)>, bits: UInt64) -> Bool {
        let n = keys.count
        guard n > 1 else { return false }
        var counts = [Int](repeating: 0, count: 256)
        var inScratch = false
        counts.withUnsafeMutableBufferPointer { counts in
            for shift in stride(from: UInt64(0), to: bits, by: 8) {
                let (from, to) = inScratch ? (scratch, keys) : (keys, scratch)
                counts.update(repeating: 0)
                for e in from { counts[Int((e.prefix >> shift) & 0xFF)] += 1 }
                if counts.contains(n) { continue }
                var total = 0
                for d in 0..<256 {
                    let c = counts[d]
                    counts[d] = total
                    total += c
                }
                for e in from {
                    let d = Int((e.prefix >> shift) & 0xFF)
                    to[counts[d]] = e
                    counts[d] += 1
                }
                inScratch.toggle()
            }
        }
        return inScratch
    }

    /// `pairs` sorted by key, equal keys in the order given.
    static func sorted(_ pairs: consuming [(prefix: UInt64, g: Int32)]) -> [(prefix: UInt64, g: Int32)] {
        var a = consume pairs
        let n = a.count
        // Scratch: every element is written before it is read (none at
        // all for 0, which would write to the empty array threads share).
        var b = n == 0 ? [] : [(prefix: UInt64, g: Int32)](unsafeUninitializedCapacity: n) { _, count in count = n }
        let inScratch = a.withUnsafeMutableBufferPointer { a in b.withUnsafeMutableBufferPointer { byKey(a, scratch: $0, bits: 64) } }
        return inScratch ? b : a
    }

    /// A key that orders doubles as `<` does (not NaN), with -0 and 0 one key.
    @inline(__always) static func key(_ d: Double) -> UInt64 {
        let bits = (d == 0 ? 0.0 : d).bitPattern
        return bits >> 63 == 0 ? bits | (1 << 63) : ~bits
    }

    /// The double of a `key` (0 for the key of -0 and 0).
    @inline(__always) static func double(_ key: UInt64) -> Double {
        Double(bitPattern: key >> 63 == 1 ? key & ~(1 << 63) : ~key)
    }
}
