extension JSONReader {
    /// Reads a string starting at the opening quote. Validates UTF-8 as it goes.
    package mutating func parseString() throws(JSONSyntaxError) -> String {
        index += 1
        let start = index
        // Fast path: no escapes.
        while index < buffer.count {
            let b = buffer[index]
            if b == UInt8(ascii: "\"") {
                let s = String(decoding: UnsafeBufferPointer(rebasing: buffer[start..<index]), as: UTF8.self)
                index += 1
                return s
            }
            if b == UInt8(ascii: "\\") { break }
            if b < 0x20 { throw error("unescaped control character in string") }
            if b < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        guard index < buffer.count else { throw error("unterminated string", at: start - 1) }
        // Slow path: decode escapes into a byte buffer.
        var bytes = Array(UnsafeBufferPointer(rebasing: buffer[start..<index]))
        while index < buffer.count {
            let b = buffer[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return String(decoding: bytes, as: UTF8.self)
            }
            if b == UInt8(ascii: "\\") {
                try parseEscape(into: &bytes)
            } else if b < 0x20 {
                throw error("unescaped control character in string")
            } else if b < 0x80 {
                bytes.append(b)
                index += 1
            } else {
                let s = index
                try skipUTF8Sequence()
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[s..<index]))
            }
        }
        throw error("unterminated string", at: start - 1)
    }

    /// Validates one multi-byte UTF-8 sequence (no overlongs, no surrogates, ≤ U+10FFFF).
    package mutating func skipUTF8Sequence() throws(JSONSyntaxError) {
        let b0 = buffer[index]
        var need: Int
        var lower: UInt8 = 0x80
        var upper: UInt8 = 0xBF
        switch b0 {
        case 0xC2...0xDF: need = 1
        case 0xE0: need = 2; lower = 0xA0
        case 0xE1...0xEC, 0xEE...0xEF: need = 2
        case 0xED: need = 2; upper = 0x9F
        case 0xF0: need = 3; lower = 0x90
        case 0xF1...0xF3: need = 3
        case 0xF4: need = 3; upper = 0x8F
        default: throw error("invalid UTF-8 byte 0x\(String(b0, radix: 16, uppercase: true)) in string")
        }
        guard index + need < buffer.count else { throw error("truncated UTF-8 sequence in string") }
        let b1 = buffer[index + 1]
        guard b1 >= lower && b1 <= upper else { throw error("invalid UTF-8 sequence in string") }
        var k = 2
        while k <= need {
            let bk = buffer[index + k]
            guard bk & 0xC0 == 0x80 else { throw error("invalid UTF-8 sequence in string") }
            k += 1
        }
        index += need + 1
    }

    mutating func parseEscape(into bytes: inout [UInt8]) throws(JSONSyntaxError) {
        let escapeStart = index
        index += 1
        guard index < buffer.count else { throw error("unterminated escape in string", at: escapeStart) }
        let c = buffer[index]
        index += 1
        switch c {
        case UInt8(ascii: "\""): bytes.append(0x22)
        case UInt8(ascii: "\\"): bytes.append(0x5C)
        case UInt8(ascii: "/"): bytes.append(0x2F)
        case UInt8(ascii: "b"): bytes.append(0x08)
        case UInt8(ascii: "f"): bytes.append(0x0C)
        case UInt8(ascii: "n"): bytes.append(0x0A)
        case UInt8(ascii: "r"): bytes.append(0x0D)
        case UInt8(ascii: "t"): bytes.append(0x09)
        case UInt8(ascii: "u"):
            let unit = try readHex4(escapeStart: escapeStart)
            var scalarValue = UInt32(unit)
            if unit >= 0xD800 && unit <= 0xDBFF {
                // A high surrogate must be followed by an escaped low surrogate.
                guard index + 1 < buffer.count, buffer[index] == UInt8(ascii: "\\"),
                      buffer[index + 1] == UInt8(ascii: "u") else {
                    throw error("lone high surrogate \\u\(hex4(unit)) in string", at: escapeStart)
                }
                index += 2
                let low = try readHex4(escapeStart: index - 2)
                guard low >= 0xDC00 && low <= 0xDFFF else {
                    throw error("high surrogate \\u\(hex4(unit)) is not followed by a low surrogate", at: escapeStart)
                }
                scalarValue = 0x10000 + ((UInt32(unit) - 0xD800) << 10) + (UInt32(low) - 0xDC00)
            } else if unit >= 0xDC00 && unit <= 0xDFFF {
                throw error("lone low surrogate \\u\(hex4(unit)) in string", at: escapeStart)
            }
            guard let scalar = Unicode.Scalar(scalarValue) else {
                throw error("invalid escape in string", at: escapeStart)
            }
            UTF8.encode(scalar) { bytes.append($0) }
        default:
            throw error("invalid escape '\\\(Character(Unicode.Scalar(c)))' in string", at: escapeStart)
        }
    }

    mutating func readHex4(escapeStart: Int) throws(JSONSyntaxError) -> UInt16 {
        guard index + 4 <= buffer.count else { throw error("incomplete \\u escape in string", at: escapeStart) }
        var v: UInt16 = 0
        for _ in 0..<4 {
            let h = buffer[index]
            let d: UInt8
            switch h {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): d = h - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): d = h - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): d = h - UInt8(ascii: "A") + 10
            default: throw error("invalid hex digit in \\u escape", at: escapeStart)
            }
            v = v << 4 | UInt16(d)
            index += 1
        }
        return v
    }

    func hex4(_ v: UInt16) -> String {
        let s = String(v, radix: 16, uppercase: true)
        return String(repeating: "0", count: 4 - s.count) + s
    }
}

