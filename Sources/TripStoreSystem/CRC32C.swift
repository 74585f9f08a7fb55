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

    package static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    /// Eight lower-case hex digits.
    package static func hex(_ v: UInt32) -> String {
        let s = String(v, radix: 16)
        return String(repeating: "0", count: 8 - s.count) + s
    }
}
