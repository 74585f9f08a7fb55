import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// SQL text for PostgreSQL, as `psql` reads it (docs/postgres.md): quoted literals
/// and names, `jsonb` and array literals, and `COPY` text-format fields.
/// Literals are standard-conforming (`'it''s'`), as PostgreSQL reads them
/// by default since 9.1.
public enum SQLText {
    /// `'text'`, with quotes doubled; text with a backslash as `E'…'` with
    /// backslashes doubled too, which reads the same whatever the session's
    /// `standard_conforming_strings` says.
    public static func literal(_ s: String) -> String {
        guard s.contains("\\") else { return "'" + s.replacingOccurrences(of: "'", with: "''") + "'" }
        return "E'" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "''") + "'"
    }

    /// `literal` of UTF-8 bytes, appended a byte at a time (a bulk import's
    /// history row is tens of megabytes).
    public static func appendLiteral(_ bytes: [UInt8], to out: inout [UInt8]) {
        let backslash = bytes.contains(0x5C)
        out.reserveCapacity(out.count + bytes.count + bytes.count / 16 + 4)
        if backslash { out.append(UInt8(ascii: "E")) }
        out.append(0x27)
        for b in bytes {
            if b == 0x27 || (backslash && b == 0x5C) { out.append(b) }
            out.append(b)
        }
        out.append(0x27)
    }

    /// Whether `s` may name a PostgreSQL schema here: ASCII letters, digits
    /// and `_`, not starting with a digit (so that it can go anywhere, quoted).
    public static func isPlainName(_ s: String) -> Bool {
        guard let first = s.unicodeScalars.first, !("0"..."9").contains(first), s.unicodeScalars.count <= 63 else { return false }
        return s.unicodeScalars.allSatisfy { $0 == "_" || ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) }
    }

    /// `"name"`, with quotes doubled: a schema, table or column name.
    public static func name(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// `'…'::jsonb` of a JSON value.
    public static func jsonb(_ v: JSONValue) -> String {
        var w = JSONWriter()
        w.value(v)
        return literal(w.string) + "::jsonb"
    }

    /// `ARRAY['a','b']::text[]`.
    public static func textArray(_ items: [String]) -> String {
        "ARRAY[" + items.map(literal).joined(separator: ",") + "]::text[]"
    }

    /// A field of `COPY … FROM STDIN` in text format: backslash, tab,
    /// newline and carriage return escaped.
    public static func copyField(_ s: String) -> String {
        var out = ""
        out.reserveCapacity(s.utf8.count + 8)
        for c in s.unicodeScalars {
            switch c {
            case "\\": out += "\\\\"
            case "\t": out += "\\t"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            default: out.unicodeScalars.append(c)
            }
        }
        return out
    }

    /// UTF-8 bytes as a `COPY` text-format field (see `copyField`), appended.
    public static func appendCopyEscaped(_ bytes: [UInt8], to out: inout [UInt8]) {
        out.reserveCapacity(out.count + bytes.count + 16)
        for b in bytes {
            switch b {
            case 0x5C: out.append(0x5C); out.append(0x5C)
            case 0x09: out.append(0x5C); out.append(UInt8(ascii: "t"))
            case 0x0A: out.append(0x5C); out.append(UInt8(ascii: "n"))
            case 0x0D: out.append(0x5C); out.append(UInt8(ascii: "r"))
            default: out.append(b)
            }
        }
    }

    /// `appendCopyEscaped` for bytes in place, into a `ByteOutput`.
    static func appendCopyEscaped(_ bytes: UnsafeRawBufferPointer, to out: inout ByteOutput) {
        var from = 0
        for (i, b) in bytes.enumerated() where b == 0x5C || b == 0x09 || b == 0x0A || b == 0x0D {
            out.append(UnsafeRawBufferPointer(rebasing: bytes[from..<i]))
            out.append(0x5C)
            out.append(b == 0x09 ? UInt8(ascii: "t") : b == 0x0A ? UInt8(ascii: "n") : b == 0x0D ? UInt8(ascii: "r") : 0x5C)
            from = i + 1
        }
        out.append(UnsafeRawBufferPointer(rebasing: bytes[from...]))
    }

    /// A `text[]` value in `COPY` text format: `{"a","b"}`.
    public static func copyArray(_ items: [String]) -> String {
        copyField("{" + items.map { "\"" + $0.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\"" }
            .joined(separator: ",") + "}")
    }

    /// The ISO 8601 text of a commit time, as a `timestamptz` literal.
    public static func timestamp(_ seconds: Double) -> String {
        literal(ISODate.format(seconds)) + "::timestamptz"
    }
}
