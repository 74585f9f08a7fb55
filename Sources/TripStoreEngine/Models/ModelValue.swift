import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// A Swift type that can be a model attribute: how it is stored and read back.
public protocol ModelValue {
    /// The type the schema records for this Swift type.
    static var valueType: ValueType { get }
    /// Whether nil is a value (true for `Optional`).
    static var isOptional: Bool { get }
    /// The value from its stored form; nil when the form does not fit.
    init?(storedValue: Value)
    /// The value in its stored form.
    var storedValue: Value { get }
}

extension ModelValue {
    /// Whether nil is a value of this type.
    public static var isOptional: Bool { false }
}

extension String: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .string }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue else { return nil }
        self = s
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(self) }
}

extension Int: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .int }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .int(let i) = storedValue else { return nil }
        self = Int(i)
    }
    /// The value in its stored form.
    public var storedValue: Value { .int(Int64(self)) }
}

extension Double: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .double }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        switch storedValue {
        case .double(let d): self = d
        case .int(let i): self = Double(i)
        default: return nil
        }
    }
    /// The value in its stored form.
    public var storedValue: Value { .double(self) }
}

extension Bool: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .bool }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .bool(let b) = storedValue else { return nil }
        self = b
    }
    /// The value in its stored form.
    public var storedValue: Value { .bool(self) }
}

extension Date: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .date }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .date(let d) = storedValue else { return nil }
        self = Date(timeIntervalSinceReferenceDate: d)
    }
    /// The value in its stored form.
    public var storedValue: Value { .date(timeIntervalSinceReferenceDate) }
}

extension Optional: ModelValue where Wrapped: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { Wrapped.valueType }
    /// Whether nil is a value of this type.
    public static var isOptional: Bool { true }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        if case .null = storedValue {
            self = .none
            return
        }
        guard let w = Wrapped(storedValue: storedValue) else { return nil }
        self = .some(w)
    }
    /// The value in its stored form.
    public var storedValue: Value { map(\.storedValue) ?? .null }
}

extension Array: ModelValue where Element: ModelValue {
    /// The stored type.
    public static var valueType: ValueType { .array(Element.valueType) }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .array(let items) = storedValue else { return nil }
        var out: [Element] = []
        for item in items {
            guard let e = Element(storedValue: item) else { return nil }
            out.append(e)
        }
        self = out
    }
    /// The value in its stored form.
    public var storedValue: Value { .array(map(\.storedValue)) }
}

/// A Swift enum stored by its raw value: conform and the rest is provided.
///
/// ```swift
/// enum Reason: String, ModelEnum { case family, vacation }
/// ```
///
/// It is `Codable` and `Sendable` (Swift provides both for such an enum),
/// which `#Predicate` asks of a value it compares: `$0.reason == wanted`
/// works as declared. As in SwiftData, the predicate compares with a value
/// captured from outside it (`let wanted = Reason.family`), not with a
/// case named inside it.
public protocol ModelEnum: ModelValue, RawRepresentable, CaseIterable, Codable, Sendable where RawValue == String {}

extension ModelEnum {
    /// The stored type.
    public static var valueType: ValueType {
        .enumeration(EnumDescription(String(describing: self), cases: allCases.map(\.rawValue)))
    }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue, let v = Self(rawValue: s) else { return nil }
        self = v
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(rawValue) }
}

/// A value type stored inside its owner, field by field.
public protocol ModelEmbedded: ModelValue {
    /// The stored fields, in order.
    static var embeddedDescription: EmbeddedDescription { get }
    /// The value from its stored fields; nil when they do not fit.
    init?(fields: [Value])
    /// The stored fields, in declaration order.
    var fields: [Value] { get }
}

extension ModelEmbedded {
    /// The stored type.
    public static var valueType: ValueType { .embedded(embeddedDescription) }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .embedded(let f) = storedValue else { return nil }
        self.init(fields: f)
    }
    /// The value in its stored form.
    public var storedValue: Value { .embedded(fields) }
}
