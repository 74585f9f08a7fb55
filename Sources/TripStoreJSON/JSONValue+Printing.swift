/// A value prints as itself, the way a Swift value of its kind does: a
/// string as its text (`A Wizard of Earthsea`), a number, `true`, `null`,
/// an array or object as its JSON. In a debug view (an optional, an array
/// of values) it is its JSON text, so a string shows its quotes, as a
/// Swift `String` does there.
extension JSONValue: CustomStringConvertible, CustomDebugStringConvertible {
    /// The value as text: a string unquoted, anything else as JSON.
    public var description: String {
        if case .string(let s) = self { return s }
        return debugDescription
    }

    /// The value as JSON text.
    public var debugDescription: String {
        var w = JSONWriter()
        w.value(self)
        return w.string
    }

    /// The text of a `.string`; nil for any other kind.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The integer of an `.int`, or of a `.double` that is a whole number in range; nil otherwise.
    public var intValue: Int64? {
        switch self {
        case .int(let i): return i
        case .double(let d): return Int64(exactly: d)
        default: return nil
        }
    }

    /// The truth value of a `.bool`; nil for any other kind.
    public var boolValue: Bool? {
        if case .bool(let b) = self { return b }
        return nil
    }
}

extension JSONMember: CustomStringConvertible {
    /// `"key": value`, as JSON.
    public var description: String {
        var w = JSONWriter()
        w.beginObject()
        w.key(key)
        w.value(value)
        w.endObject()
        return String(w.string.dropFirst().dropLast())
    }
}
