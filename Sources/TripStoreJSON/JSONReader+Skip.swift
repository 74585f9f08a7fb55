extension JSONReader {
    /// Checks that `bytes` are exactly one JSON value, as strictly as `parse`
    /// (same grammar, UTF-8 and depth rules, same errors) but without building
    /// anything: the reader's own speed, and a cheap first pass over input.
    package static func validate(_ bytes: UnsafeBufferPointer<UInt8>) throws(JSONSyntaxError) {
        var reader = JSONReader(buffer: bytes)
        try reader.skipValue()
        reader.skipWhitespace()
        if reader.index < bytes.count {
            throw reader.error("unexpected \(reader.describeByte(at: reader.index)) after the JSON value")
        }
    }

    /// Reads past the next value, skipping white space before it.
    package mutating func skipValue() throws(JSONSyntaxError) {
        skipWhitespace()
        guard index < buffer.count else { throw error("expected a JSON value but the input ended") }
        switch buffer[index] {
        case UInt8(ascii: "{"): try skipContainer(close: UInt8(ascii: "}"))
        case UInt8(ascii: "["): try skipContainer(close: UInt8(ascii: "]"))
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "t"): try expectLiteral("true")
        case UInt8(ascii: "f"): try expectLiteral("false")
        case UInt8(ascii: "n"): try expectLiteral("null")
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
        default: throw error("expected a JSON value but found \(describeByte(at: index))")
        }
    }

    /// An object or an array, its nesting counted as `parse` counts it; the
    /// loop (not recursion) walks members, values recurse up to the depth limit.
    private mutating func skipContainer(close: UInt8) throws(JSONSyntaxError) {
        let isObject = close == UInt8(ascii: "}")
        try enter()
        index += 1
        skipWhitespace()
        if index < buffer.count, buffer[index] == close {
            index += 1
            depth -= 1
            return
        }
        while true {
            if isObject {
                skipWhitespace()
                guard index < buffer.count else { throw error("expected a member name but the input ended") }
                guard buffer[index] == UInt8(ascii: "\"") else {
                    throw error("expected a member name in double quotes but found \(describeByte(at: index))")
                }
                try skipString()
                skipWhitespace()
                guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                    throw error("expected ':' after object member name")
                }
                index += 1
            }
            try skipValue()
            skipWhitespace()
            let what = isObject ? "'}'" : "']'"
            guard index < buffer.count else { throw error("expected ',' or \(what) but the input ended") }
            let b = buffer[index]
            index += 1
            if b == UInt8(ascii: ",") { continue }
            if b == close { break }
            index -= 1
            throw error("expected ',' or \(what) after \(isObject ? "object member" : "array element")")
        }
        depth -= 1
    }

    /// A string from its opening quote: escapes and UTF-8 checked, nothing copied.
    package mutating func skipString() throws(JSONSyntaxError) {
        index += 1
        let start = index
        var scratch: [UInt8] = []
        while index < buffer.count {
            let b = buffer[index]
            if b == UInt8(ascii: "\"") {
                index += 1
                return
            }
            if b == UInt8(ascii: "\\") {
                // Rare: checked by the decoding path, into a scratch buffer.
                scratch.removeAll(keepingCapacity: true)
                try parseEscape(into: &scratch)
            } else if b < 0x20 {
                throw error("unescaped control character in string")
            } else if b < 0x80 {
                index += 1
            } else {
                try skipUTF8Sequence()
            }
        }
        throw error("unterminated string", at: start - 1)
    }
}
