/// Writes JSON as bytes: compact for files and `jsonl`, or pretty-printed with
/// two-space indents for people.
///
/// ```swift
/// var w = JSONWriter()
/// w.beginObject(); w.key("a"); w.int(1); w.endObject()
/// // w.bytes == Array(#"{"a":1}"#.utf8)
/// ```
public struct JSONWriter: Sendable {
    public var bytes: [UInt8]
    public let pretty: Bool
    /// One entry per open container: whether it already has an element.
    private var hasElement: [Bool] = []
    private var afterKey = false

    public init(pretty: Bool = false, capacity: Int = 256) {
        self.pretty = pretty
        self.bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// The written bytes as a string.
    public var string: String { String(decoding: bytes, as: UTF8.self) }

    // MARK: - Structure

    private mutating func beforeValue() {
        if afterKey {
            afterKey = false
            return
        }
        guard let last = hasElement.last else { return }
        if last { bytes.append(UInt8(ascii: ",")) }
        hasElement[hasElement.count - 1] = true
        if pretty { newline() }
    }

    private mutating func newline() {
        bytes.append(0x0A)
        for _ in 0..<hasElement.count { bytes.append(0x20); bytes.append(0x20) }
    }

    public mutating func beginObject() {
        beforeValue()
        bytes.append(UInt8(ascii: "{"))
        hasElement.append(false)
    }

    public mutating func endObject() {
        let had = hasElement.removeLast()
        if pretty && had { newline() }
        bytes.append(UInt8(ascii: "}"))
    }

    public mutating func beginArray() {
        beforeValue()
        bytes.append(UInt8(ascii: "["))
        hasElement.append(false)
    }

    public mutating func endArray() {
        let had = hasElement.removeLast()
        if pretty && had { newline() }
        bytes.append(UInt8(ascii: "]"))
    }

    /// Writes a member name; the next value written is its value.
    public mutating func key(_ name: String) {
        beforeValue()
        appendQuoted(name)
        bytes.append(UInt8(ascii: ":"))
        if pretty { bytes.append(0x20) }
        afterKey = true
    }

    // MARK: - Scalars

    public mutating func null() {
        beforeValue()
        bytes.append(contentsOf: [0x6E, 0x75, 0x6C, 0x6C])
    }

    public mutating func bool(_ v: Bool) {
        beforeValue()
        bytes.append(contentsOf: v ? Array("true".utf8) : Array("false".utf8))
    }

    public mutating func int(_ v: Int64) {
        beforeValue()
        appendInteger(v)
    }

    /// The shortest form that reads back to the same double (`100`, not `100.0`).
    public mutating func double(_ v: Double) {
        beforeValue()
        appendDouble(v)
    }

    public mutating func appendDouble(_ v: Double) {
        if let integer = JSONEscaping.integerForm(v) { return appendInteger(integer) }
        guard v.isFinite else { return bytes.append(contentsOf: JSONEscaping.null) }  // JSON has no NaN or infinity
        bytes.append(contentsOf: v.description.utf8)
    }

    public mutating func string(_ s: String) {
        beforeValue()
        appendQuoted(s)
    }

    /// An ISO 8601 UTC date string (`2026-03-02T09:30:00Z`, milliseconds kept when present).
    public mutating func date(_ seconds: Double) {
        beforeValue()
        bytes.append(UInt8(ascii: "\""))
        ISODate.append(seconds, to: &bytes)
        bytes.append(UInt8(ascii: "\""))
    }

    /// Writes a parsed JSON value.
    public mutating func value(_ v: JSONValue) {
        switch v {
        case .null: null()
        case .bool(let b): bool(b)
        case .int(let i): int(i)
        case .double(let d): double(d)
        case .string(let s): string(s)
        case .array(let a):
            beginArray()
            for e in a { value(e) }
            endArray()
        case .object(let members):
            beginObject()
            for m in members {
                key(m.key)
                value(m.value)
            }
            endObject()
        }
    }

    /// Writes what goes before a value (a comma, an indent); the caller then
    /// appends the value's bytes itself.
    public mutating func beginRawValue() {
        beforeValue()
    }

    /// Appends already-encoded JSON text as one value.
    public mutating func raw(_ encoded: [UInt8]) {
        beforeValue()
        bytes.append(contentsOf: encoded)
    }

    // MARK: - Encoding

    public mutating func appendInteger(_ v: Int64) {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: JSONEscaping.maxIntegerLength) { text in
            let n = JSONEscaping.writeInteger(v, to: text.baseAddress!)
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[0..<n]))
        }
    }

    /// Whether one of eight bytes is a control character, `"` or `\\`
    /// (exact: a word with none of them never answers true).
    @inline(__always) static func mayNeedEscape(_ word: UInt64) -> Bool {
        JSONReader.escapeMarks(word) != 0
    }

    public mutating func appendQuoted(_ s: String) {
        var s = s
        s.withUTF8 { appendQuoted(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// A string from its UTF-8 bytes, quoted and escaped.
    public mutating func appendQuoted(utf8: UnsafeRawBufferPointer) {
        bytes.append(UInt8(ascii: "\""))
        // Most strings need no escape: those are appended as they are.
        var i = 0
        while i + 8 <= utf8.count && !JSONWriter.mayNeedEscape(utf8.loadUnaligned(fromByteOffset: i, as: UInt64.self)) { i += 8 }
        while i < utf8.count && utf8[i] >= 0x20 && utf8[i] != 0x22 && utf8[i] != 0x5C { i += 1 }
        if i == utf8.count {
            bytes.append(contentsOf: utf8)
        } else {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: JSONEscaping.pieceSize * 6) { text in
                var done = 0
                while done < utf8.count {
                    let piece = UnsafeRawBufferPointer(rebasing: utf8[done..<min(utf8.count, done + JSONEscaping.pieceSize)])
                    let n = JSONEscaping.write(piece, to: text.baseAddress!)
                    bytes.append(contentsOf: UnsafeBufferPointer(rebasing: text[0..<n]))
                    done += piece.count
                }
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}
