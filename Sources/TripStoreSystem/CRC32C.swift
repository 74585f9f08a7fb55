/// CRC-32C (Castagnoli), slice-by-8, as used for journal lines and snapshots.
package enum CRC32C {
    static let tables: [[UInt32]] = {
        var t = Array(repeating: Array(repeating: UInt32(0), count: 256), count: 8)
        for i in 0..<256 {
            var c = UInt32(i)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
            t[0][i] = c
        }
        for i in 0..<256 {
            for k in 1..<8 { t[k][i] = (t[k - 1][i] >> 8) ^ t[0][Int(t[k - 1][i] & 0xFF)] }
        }
        return t
    }()

    /// The checksum of `bytes`, continuing from `crc` (0 to start).
    package static func checksum(_ bytes: UnsafeRawBufferPointer, continuing crc: UInt32 = 0) -> UInt32 {
        var c = ~crc
        let n = bytes.count
        var i = 0
        tables.withUnsafeBufferPointer { tb in
            let t0 = tb[0], t1 = tb[1], t2 = tb[2], t3 = tb[3], t4 = tb[4], t5 = tb[5], t6 = tb[6], t7 = tb[7]
            t0.withUnsafeBufferPointer { t0 in
            t1.withUnsafeBufferPointer { t1 in
            t2.withUnsafeBufferPointer { t2 in
            t3.withUnsafeBufferPointer { t3 in
            t4.withUnsafeBufferPointer { t4 in
            t5.withUnsafeBufferPointer { t5 in
            t6.withUnsafeBufferPointer { t6 in
            t7.withUnsafeBufferPointer { t7 in
                while i + 8 <= n {
                    let lo = bytes.loadUnaligned(fromByteOffset: i, as: UInt32.self).littleEndian ^ c
                    let hi = bytes.loadUnaligned(fromByteOffset: i + 4, as: UInt32.self).littleEndian
                    c = t7[Int(lo & 0xFF)] ^ t6[Int((lo >> 8) & 0xFF)] ^ t5[Int((lo >> 16) & 0xFF)] ^ t4[Int(lo >> 24)]
                        ^ t3[Int(hi & 0xFF)] ^ t2[Int((hi >> 8) & 0xFF)] ^ t1[Int((hi >> 16) & 0xFF)] ^ t0[Int(hi >> 24)]
                    i += 8
                }
                while i < n {
                    c = t0[Int((c ^ UInt32(bytes[i])) & 0xFF)] ^ (c >> 8)
                    i += 1
                }
            }}}}}}}}
        }
        return ~c
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
