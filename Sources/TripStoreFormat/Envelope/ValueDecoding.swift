import TripStoreJSON
import TripStoreSystem
/// Turns JSON into attribute values of a declared type.
package enum ValueDecoding {
    /// The ids of a relationship value as history and the journal record it
    /// (a reference `{"type","id"}`, an array of them, or null), in NFC; nil
    /// when it holds anything else.
    package static func referenceIDs(_ value: JSONValue) -> [String]? {
        let refs: [JSONValue]
        switch value {
        case .null: return []
        case .array(let items): refs = items
        case .object: refs = [value]
        default: return nil
        }
        var ids: [String] = []
        ids.reserveCapacity(refs.count)
        for ref in refs {
            guard case .string(let id)? = ref["id"], Identifier.problem(id) == nil else { return nil }
            ids.append(Identifier.normalized(id))
        }
        return ids
    }

    /// Why a JSON value does not fit a type: the expectation, for `EnvelopeError.message`.
    package struct Mismatch: Error {
        package var kind: EnvelopeError.Kind
        package var message: String
    }

    package static func expectation(_ t: ValueType) -> String {
        switch t {
        case .string: return "a string"
        case .int: return "an integer"
        case .double: return "a number"
        case .bool: return "true or false"
        case .date: return "an ISO 8601 date such as \"2026-03-02\" or \"2026-03-02T09:30:00Z\""
        case .enumeration(let e): return "one of " + e.cases.map { "\"\($0)\"" }.joined(separator: ", ")
        case .array(let inner): return "an array of \(expectation(inner).replacingPrefix())"
        case .embedded(let e): return "an object (\(e.name)) with " + e.fields.map(\.name).joined(separator: ", ")
        }
    }

    package static func decode(_ v: JSONValue, as t: ValueType, optional: Bool) throws(Mismatch) -> Value {
        if case .null = v {
            if optional { return .null }
            throw Mismatch(kind: .wrongType, message: "expected \(expectation(t)), found null (the attribute is not optional)")
        }
        switch t {
        case .string:
            if case .string(let s) = v { return .string(s) }
        case .int:
            if case .int(let i) = v { return .int(i) }
            // The reader makes every whole number within an Int's range an
            // `.int`, exactly: a Double here is a fraction, a number past
            // the range, or negative zero. Rounding it would keep a number
            // other than the one written.
            if case .double(let d) = v {
                let range = "an integer within the range of an Int (-9223372036854775808 to 9223372036854775807)"
                // From 2^63 on a Double is whole (a fraction within a few
                // hundred of 2^63 rounds up to it, and is named as past it).
                if abs(d) >= 9_223_372_036_854_775_808.0 {
                    throw Mismatch(kind: .wrongType, message: "expected \(range), found a number too \(d < 0 ? "small" : "large")")
                }
                throw Mismatch(kind: .wrongType, message: "expected \(range), found a number with a fraction")
            }
        case .double:
            if case .int(let i) = v { return .double(Double(i)) }
            if case .double(let d) = v {
                // A number past Double's range would be stored as nothing at all.
                guard d.isFinite else {
                    throw Mismatch(kind: .wrongType, message: "expected a number within the range of a Double (about ±1.8e308), found a number too large")
                }
                return .double(d)
            }
        case .bool:
            if case .bool(let b) = v { return .bool(b) }
        case .date:
            if case .string(let s) = v {
                if let d = ISODate.parse(s) {
                    if ISODate.isWritable(d) { return .date(d) }
                    // A time-zone offset or a rounded fraction can carry a date past 9999-12-31 in UTC.
                    throw Mismatch(kind: .badDate, message: "expected a date from 0001-01-01 to 9999-12-31 in UTC, found \(EnvelopeError.describe(v))")
                }
                throw Mismatch(kind: .badDate, message: "expected \(expectation(t)), found \(EnvelopeError.describe(v))")
            }
        case .enumeration(let e):
            if case .string(let s) = v {
                if e.cases.contains(s) { return .string(s) }
                throw Mismatch(kind: .badEnumCase, message: "expected \(expectation(t)), found \(EnvelopeError.describe(v))")
            }
        case .array(let inner):
            if case .array(let items) = v {
                var out: [Value] = []
                out.reserveCapacity(items.count)
                for (i, item) in items.enumerated() {
                    do {
                        out.append(try decode(item, as: inner, optional: false))
                    } catch {
                        throw Mismatch(kind: error.kind, message: "element \(i): \(error.message)")
                    }
                }
                return .array(out)
            }
        case .embedded(let e):
            if case .object(let members) = v {
                var fields = Array(repeating: Value.null, count: e.fields.count)
                var seen = Array(repeating: false, count: e.fields.count)
                for m in members {
                    guard let k = e.fields.firstIndex(where: { $0.name == m.key }) else {
                        throw Mismatch(kind: .unknownProperty,
                                       message: "\(e.name) has no field '\(m.key)' (fields: \(e.fields.map(\.name).joined(separator: ", ")))")
                    }
                    do {
                        fields[k] = try decode(m.value, as: e.fields[k].type, optional: e.fields[k].isOptional)
                    } catch {
                        throw Mismatch(kind: error.kind, message: "field '\(m.key)': \(error.message)")
                    }
                    seen[k] = true
                }
                for (k, f) in e.fields.enumerated() where !seen[k] && !f.isOptional {
                    throw Mismatch(kind: .missingAttribute, message: "field '\(f.name)' is missing (expected \(expectation(f.type)))")
                }
                return .embedded(fields)
            }
        }
        throw Mismatch(kind: .wrongType, message: "expected \(expectation(t)), found \(EnvelopeError.describe(v))")
    }
}

extension String {
    /// "a string" → "strings"-ish phrasing is overkill; keep the article off for nesting.
    func replacingPrefix() -> String {
        if hasPrefix("an ") { return String(dropFirst(3)) }
        if hasPrefix("a ") { return String(dropFirst(2)) }
        return self
    }
}
