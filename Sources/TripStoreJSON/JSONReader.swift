#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A strict RFC 8259 reader over a byte buffer.
///
/// One pass over the bytes: UTF-8 is validated as strings are scanned, strings
/// without escapes are made in one copy, and line and column are only worked
/// out when an error is thrown.
///
/// ```swift
/// let value = try JSONReader.parse(Array(#"{"a": [1, 2.5, "x"]}"#.utf8))
/// ```
public struct JSONReader {
    /// Deeper documents are rejected rather than risking the stack.
    package static let maximumDepth = 512

    @usableFromInline package let buffer: UnsafeBufferPointer<UInt8>
    @usableFromInline package var index: Int
    package var depth = 0

    /// A reader positioned at `start` within `buffer` (which must outlive it).
    package init(buffer: UnsafeBufferPointer<UInt8>, start: Int = 0) {
        self.buffer = buffer
        self.index = start
    }

    /// Parses `bytes` as exactly one JSON value (surrounding white space allowed).
    public static func parse(_ bytes: [UInt8]) throws(JSONSyntaxError) -> JSONValue {
        try bytes.withUnsafeBufferPointer { (buf) throws(JSONSyntaxError) -> JSONValue in
            var reader = JSONReader(buffer: buf)
            return try reader.parseDocument()
        }
    }

    /// Parses `text` as exactly one JSON value.
    public static func parse(_ text: String) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8))
    }

    /// Reads one value and requires only white space after it.
    package mutating func parseDocument() throws(JSONSyntaxError) -> JSONValue {
        let value = try parseValue()
        skipWhitespace()
        if index < buffer.count {
            throw error("unexpected \(describeByte(at: index)) after the JSON value")
        }
        return value
    }

    /// Reads the next value, skipping white space before it.
    package mutating func parseValue() throws(JSONSyntaxError) -> JSONValue {
        skipWhitespace()
        guard index < buffer.count else { throw error("expected a JSON value but the input ended") }
        switch buffer[index] {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw error("expected a JSON value but found \(describeByte(at: index))")
        }
    }

    /// Calls `body` with each element of the array that starts at the reader's
    /// position, without keeping the elements (for streaming large imports).
    /// `body` receives the element's 0-based position and its start offset.
    package mutating func forEachArrayElement(
        _ body: (Int, Int, JSONValue) throws -> Void
    ) throws -> Void {
        skipWhitespace()
        guard index < buffer.count, buffer[index] == UInt8(ascii: "[") else {
            throw error("expected '[' to start an array")
        }
        index += 1
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            return
        }
        var position = 0
        while true {
            skipWhitespace()
            let start = index
            let value = try parseValue()
            try body(position, start, value)
            position += 1
            skipWhitespace()
            guard index < buffer.count else { throw error("expected ',' or ']' but the input ended") }
            if buffer[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            if buffer[index] == UInt8(ascii: "]") {
                index += 1
                return
            }
            throw error("expected ',' or ']' after array element")
        }
    }

    // MARK: - Structure

    @inlinable package mutating func skipWhitespace() {
        while index < buffer.count {
            switch buffer[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    package mutating func enter() throws(JSONSyntaxError) {
        depth += 1
        if depth > JSONReader.maximumDepth {
            throw error("nesting deeper than \(JSONReader.maximumDepth) levels")
        }
    }

    mutating func parseObject() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var members: [JSONMember] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "}") {
            index += 1
            depth -= 1
            return .object(members)
        }
        while true {
            skipWhitespace()
            guard index < buffer.count else { throw error("expected a member name but the input ended") }
            guard buffer[index] == UInt8(ascii: "\"") else {
                throw error("expected a member name in double quotes but found \(describeByte(at: index))")
            }
            let key = try parseString()
            skipWhitespace()
            guard index < buffer.count, buffer[index] == UInt8(ascii: ":") else {
                throw error("expected ':' after object member name")
            }
            index += 1
            let value = try parseValue()
            members.append(JSONMember(key, value))
            skipWhitespace()
            guard index < buffer.count else { throw error("expected ',' or '}' but the input ended") }
            let b = buffer[index]
            index += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "}") { break }
            index -= 1
            throw error("expected ',' or '}' after object member")
        }
        depth -= 1
        return .object(members)
    }

    mutating func parseArray() throws(JSONSyntaxError) -> JSONValue {
        try enter()
        index += 1
        var elements: [JSONValue] = []
        skipWhitespace()
        if index < buffer.count, buffer[index] == UInt8(ascii: "]") {
            index += 1
            depth -= 1
            return .array(elements)
        }
        while true {
            elements.append(try parseValue())
            skipWhitespace()
            guard index < buffer.count else { throw error("expected ',' or ']' but the input ended") }
            let b = buffer[index]
            index += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "]") { break }
            index -= 1
            throw error("expected ',' or ']' after array element")
        }
        depth -= 1
        return .array(elements)
    }

    package mutating func expectLiteral(_ word: StaticString) throws(JSONSyntaxError) {
        let n = word.utf8CodeUnitCount
        let p = word.utf8Start
        guard index + n <= buffer.count else { throw error("invalid literal; expected \(word)") }
        for k in 0..<n where buffer[index + k] != p[k] {
            throw error("invalid literal; expected \(word)")
        }
        index += n
    }

    // MARK: - Errors

    package func error(_ message: String, at offset: Int? = nil) -> JSONSyntaxError {
        JSONSyntaxError(message, offset: offset ?? index, in: buffer)
    }

    package func describeByte(at i: Int) -> String {
        guard i < buffer.count else { return "the end of the input" }
        let b = buffer[i]
        if b >= 0x21 && b < 0x7F { return "'\(Character(Unicode.Scalar(b)))'" }
        return "byte 0x" + String(b, radix: 16, uppercase: true)
    }
}
