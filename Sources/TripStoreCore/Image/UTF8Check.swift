/// Whether bytes are well-formed UTF-8 (no overlong forms, surrogates or
/// scalars past U+10FFFF), for a text id the image holds: read back as a
/// `String`, a bad byte would quietly become U+FFFD, an id the snapshot
/// lacks, and a write would name it in the journal.
enum UTF8Check {
    @inline(__always) static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard let base = bytes.baseAddress else { return true }
        // Most text is ASCII: eight bytes at a time up to the first that is not.
        let n = bytes.count
        var i = 0
        while n - i >= 8 && base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
        while i < n && base.load(fromByteOffset: i, as: UInt8.self) < 0x80 { i += 1 }
        return i == n || isValidBeyondASCII(base, from: i, count: n)
    }

    /// From `i`, the start of a scalar.
    private static func isValidBeyondASCII(_ base: UnsafeRawPointer, from start: Int, count n: Int) -> Bool {
        var i = start
        while i < n {
            // Eight ASCII bytes at a time: most text is ASCII.
            if n - i >= 8 && base.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let lead = base.load(fromByteOffset: i, as: UInt8.self)
            if lead < 0x80 {
                i += 1
                continue
            }
            let more: Int, smallest: UInt32
            var scalar: UInt32
            switch lead {
            case 0xC0...0xDF: (more, smallest, scalar) = (1, 0x80, UInt32(lead & 0x1F))
            case 0xE0...0xEF: (more, smallest, scalar) = (2, 0x800, UInt32(lead & 0x0F))
            case 0xF0...0xF7: (more, smallest, scalar) = (3, 0x10000, UInt32(lead & 0x07))
            default: return false
            }
            guard n - i > more else { return false }
            for k in 1...more {
                let b = base.load(fromByteOffset: i + k, as: UInt8.self)
                guard b & 0xC0 == 0x80 else { return false }
                scalar = scalar << 6 | UInt32(b & 0x3F)
            }
            guard scalar >= smallest, scalar <= 0x10FFFF, !(0xD800...0xDFFF).contains(scalar) else { return false }
            i += more + 1
        }
        return true
    }
}
