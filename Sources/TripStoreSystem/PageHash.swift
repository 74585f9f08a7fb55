/// A fast 64-bit checksum for the snapshot image's pages and sections.
///
/// The image is a cache checked piece by piece as a process first touches it,
/// so the check must cost far less than reading the JSON: four independent
/// multiply–rotate lanes over 8-byte words keep the core's multipliers busy
/// in parallel, where CRC-32C's table lookups wait on one another. It finds
/// damage (any changed word changes the result, since every step is a
/// bijection of the lane's state), not forgery: an image is
/// kept from a foreign snapshot by its binding, and from crashing the program
/// by the structural checks that follow the checksum.
package enum PageHash {
    private static let k1: UInt64 = 0x9E37_79B1_85EB_CA87
    private static let k2: UInt64 = 0xC2B2_AE3D_27D4_EB4F

    /// The checksum of `bytes`, continuing from `seed`.
    package static func hash(_ bytes: UnsafeRawBufferPointer, seed: UInt64 = 0) -> UInt64 {
        let n = bytes.count
        var a = seed ^ k1, b = seed ^ k2, c = seed &+ k1, d = seed &- k2
        var i = 0
        if let base = bytes.baseAddress {
            while i + 32 <= n {
                a = step(a, base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                b = step(b, base.loadUnaligned(fromByteOffset: i + 8, as: UInt64.self))
                c = step(c, base.loadUnaligned(fromByteOffset: i + 16, as: UInt64.self))
                d = step(d, base.loadUnaligned(fromByteOffset: i + 24, as: UInt64.self))
                i += 32
            }
            while i + 8 <= n {
                a = step(a, base.loadUnaligned(fromByteOffset: i, as: UInt64.self))
                i += 8
            }
            var last: UInt64 = 0
            var shift: UInt64 = 0
            while i < n {
                last |= UInt64(base.load(fromByteOffset: i, as: UInt8.self)) << shift
                shift += 8
                i += 1
            }
            b = step(b, last ^ UInt64(n))
        }
        var h = (a ^ rotate(b, 17)) &* k1 ^ (rotate(c, 31) ^ rotate(d, 47)) &* k2 ^ UInt64(n)
        h ^= h >> 33
        h = h &* k2
        h ^= h >> 29
        return h
    }

    @inline(__always) private static func step(_ lane: UInt64, _ word: UInt64) -> UInt64 {
        rotate((lane ^ word) &* k1, 31) &* k2
    }

    @inline(__always) private static func rotate(_ x: UInt64, _ r: UInt64) -> UInt64 { (x << r) | (x >> (64 - r)) }
}
