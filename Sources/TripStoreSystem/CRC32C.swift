import TripStoreCRC32C

/// CRC-32C (Castagnoli), as used for journal lines and snapshots: with the
/// processor's instruction where it has one, else slice-by-8 tables.
package enum CRC32C {
    /// Whether the processor computes it (several times the tables' speed:
    /// an open checks every byte of a journal its replay state covers).
    package static let hasInstruction = tripstore_crc32c_has_instruction() != 0

    /// Eight tables of 256 entries back to back: table k gives a byte's
    /// effect k bytes further on.
    static let tables: [UInt32] = {
        var t = [UInt32](repeating: 0, count: 8 * 256)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[i] = c
        }
        for k in 1..<8 {
            for i in 0..<256 { t[k * 256 + i] = (t[(k - 1) * 256 + i] >> 8) ^ t[Int(t[(k - 1) * 256 + i] & 0xFF)] }
        }
        return t
    }()

    /// Below this many bytes one pass; from it on, three interleaved passes.
    static let interleaveFrom = 3 << 12

    /// The checksum of `bytes`, continuing from `crc` (0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        guard hasInstruction else { return tableChecksum(bytes, continuing: crc) }
        guard let base = bytes.baseAddress, !bytes.isEmpty else { return crc }
        return ~tripstore_crc32c_update(~crc, base, bytes.count)
    }

    /// The same, by the tables alone.
    package static func tableChecksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        tables.withUnsafeBufferPointer { tb in
            let t = tb.baseAddress!
            guard bytes.count >= interleaveFrom else { return ~update(~crc, bytes, 0..<bytes.count, t) }
            // Each pass waits on its last step: three over thirds of the
            // bytes keep the core busy, and their checksums make one.
            let third = bytes.count / 24 * 8
            var a = ~crc, b: UInt32 = ~0, c: UInt32 = ~0
            var i = 0
            while i < third {
                a = step(a, bytes, i, t)
                b = step(b, bytes, third + i, t)
                c = step(c, bytes, 2 * third + i, t)
                i += 8
            }
            let joined = combine(combine(~a, ~b, lengthOfB: third), ~c, lengthOfB: third)
            return ~update(~joined, bytes, (3 * third)..<bytes.count, t)
        }
    }

    /// Eight bytes at `at` folded into the running (inverted) checksum `c`.
    @inline(__always) private static func step(_ c: UInt32, _ bytes: UnsafeRawBufferPointer, _ at: Int, _ t: UnsafePointer<UInt32>) -> UInt32 {
        let lo = bytes.loadUnaligned(fromByteOffset: at, as: UInt32.self).littleEndian ^ c
        let hi = bytes.loadUnaligned(fromByteOffset: at + 4, as: UInt32.self).littleEndian
        return t[7 * 256 + Int(lo & 0xFF)] ^ t[6 * 256 + Int((lo >> 8) & 0xFF)] ^ t[5 * 256 + Int((lo >> 16) & 0xFF)] ^ t[4 * 256 + Int(lo >> 24)]
            ^ t[3 * 256 + Int(hi & 0xFF)] ^ t[2 * 256 + Int((hi >> 8) & 0xFF)] ^ t[256 + Int((hi >> 16) & 0xFF)] ^ t[Int(hi >> 24)]
    }

    /// The bytes of `range` folded into the running (inverted) checksum `c`.
    @inline(__always) private static func update(_ c: UInt32, _ bytes: UnsafeRawBufferPointer, _ range: Range<Int>,
                                                 _ t: UnsafePointer<UInt32>) -> UInt32 {
        var c = c, i = range.lowerBound
        while i + 8 <= range.upperBound {
            c = step(c, bytes, i, t)
            i += 8
        }
        while i < range.upperBound {
            c = t[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
            i += 1
        }
        return c
    }

    /// The checksum of A followed by B, from the checksums of each and B's
    /// length: so that parts checksummed on different cores make one.
    package static func combine(_ a: UInt32, _ b: UInt32, lengthOfB: Int) -> UInt32 {
        multiply(xPower8(lengthOfB), a) ^ b
    }

    /// Polynomials modulo the CRC's, bit-reflected (bit 31 is x^0).
    private static func multiply(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var m: UInt32 = 1 << 31, product: UInt32 = 0, b = b
        while m != 0 {
            if a & m != 0 { product ^= b }
            m >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ 0x82F6_3B78 : b >> 1
        }
        return product
    }

    /// x^(2^k) modulo the polynomial, for every k a length's bits reach.
    private static let squares: [UInt32] = {
        var p: UInt32 = 1 << 30  // x^1
        var out: [UInt32] = []
        for _ in 0..<68 {
            out.append(p)
            p = multiply(p, p)
        }
        return out
    }()

    /// x^(8n): the shift of a checksum by n zero bytes.
    private static func xPower8(_ n: Int) -> UInt32 {
        var p: UInt32 = 1 << 31  // x^0
        var n = UInt64(n), k = 3
        while n != 0 {
            if n & 1 != 0 { p = multiply(squares[k], p) }
            n >>= 1
            k += 1
        }
        return p
    }

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Eight lower-case hex digits.
    package static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }
}
