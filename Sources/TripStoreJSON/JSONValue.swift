/// A parsed JSON document: the tree the envelope codec reads from.
///
/// Objects keep their members in file order (a store file stays diffable and
/// an error can name the first offending member).
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer literal without fraction or exponent that fits in 64 bits.
    case int(Int64)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object, its members in order.
    case object([JSONMember])

    /// The value of the first member named `key`, if this is an object that has one.
    public subscript(key: String) -> JSONValue? {
        guard case .object(let members) = self else { return nil }
        for m in members where m.key == key { return m.value }
        return nil
    }

    /// A short name of the JSON type, for error messages ("a string", "an array").
    public var kindDescription: String {
        switch self {
        case .null: return "null"
        case .bool: return "a boolean"
        case .int, .double: return "a number"
        case .string: return "a string"
        case .array: return "an array"
        case .object: return "an object"
        }
    }

    /// The numeric value of `.int` or `.double`.
    public var doubleValue: Double? {
        switch self {
        case .int(let i): return Double(i)
        case .double(let d): return d
        default: return nil
        }
    }
}

/// One `"key": value` member of a JSON object.
public struct JSONMember: Sendable, Hashable {
    /// The member's name.
    public var key: String
    /// The member's value.
    public var value: JSONValue
    /// A member named `key` holding `value`.
    public init(_ key: String, _ value: JSONValue) {
        self.key = key
        self.value = value
    }
}
