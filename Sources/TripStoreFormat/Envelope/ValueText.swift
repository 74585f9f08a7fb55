import TripStoreJSON
import TripStoreSystem
/// Reads a value typed on a command line (`update --set key=value`) in an
/// attribute's type: quotes optional for strings, `null` for nil, dates as in
/// queries, arrays and embedded values as JSON.
package enum ValueText {
    package static func parse(_ text: String, as a: AttributeDescription) throws(EnvelopeError) -> Value {
        let t = text.trimmed(" ")
        if t == "null" || t == "nil" {
            guard a.isOptional else {
                throw EnvelopeError(.wrongType, property: a.name, "'\(a.name)' is not optional; expected \(ValueDecoding.expectation(a.type))")
            }
            return .null
        }
        let json: JSONValue
        switch a.type {
        case .string, .enumeration, .date:
            json = .string(unquote(t))
        case .int, .double:
            guard let v = try? JSONReader.parse(t), v.doubleValue != nil else {
                throw EnvelopeError(.wrongType, property: a.name, "expected \(ValueDecoding.expectation(a.type)), found '\(t)'")
            }
            json = v
        case .bool:
            guard t == "true" || t == "false" else {
                throw EnvelopeError(.wrongType, property: a.name, "expected true or false, found '\(t)'")
            }
            json = .bool(t == "true")
        case .array, .embedded:
            guard let v = try? JSONReader.parse(t) else {
                throw EnvelopeError(.wrongType, property: a.name, "expected \(ValueDecoding.expectation(a.type)) written as JSON, found '\(t)'")
            }
            json = v
        }
        do {
            return try ValueDecoding.decode(json, as: a.type, optional: a.isOptional)
        } catch {
            throw EnvelopeError(error.kind, property: a.name, error.message)
        }
    }

    /// Removes one pair of surrounding quotes, reading the escapes inside.
    static func unquote(_ s: String) -> String {
        guard s.count >= 2, let f = s.first, f == s.last, f == "\"" || f == "'" else { return s }
        if let v = try? JSONReader.parse("\"" + s.dropFirst().dropLast().replacingSingleQuotes(f) + "\""), case .string(let out) = v {
            return out
        }
        return String(s.dropFirst().dropLast())
    }
}

extension Substring {
    func replacingSingleQuotes(_ quote: Character) -> String {
        guard quote == "'" else { return String(self) }
        var out = ""
        var escaped = false
        for c in self {
            if escaped { out += c == "'" ? "'" : "\\" + String(c); escaped = false; continue }
            if c == "\\" { escaped = true; continue }
            out += c == "\"" ? "\\\"" : String(c)
        }
        return out
    }
}
