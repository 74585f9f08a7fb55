import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

// Foundation's value types as attributes, stored as text that reads back
// exactly and that a person can read in the JSON files.

extension UUID: ModelValue {
    /// Stored as its canonical text (`E621E1F8-C36C-495A-93FC-0C247A3E6E5F`).
    public static var valueType: ValueType { .string }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue, let u = UUID(uuidString: s) else { return nil }
        self = u
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(uuidString) }
}

extension URL: ModelValue {
    /// Stored as its absolute string.
    public static var valueType: ValueType { .string }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue, let u = URL(string: s) else { return nil }
        self = u
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(absoluteString) }
}

extension Data: ModelValue {
    /// Stored as Base64 text.
    public static var valueType: ValueType { .string }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue, let d = Data(base64Encoded: s) else { return nil }
        self = d
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(base64EncodedString()) }
}

extension Decimal: ModelValue {
    /// Stored as its exact decimal text (a Double would round it).
    public static var valueType: ValueType { .string }
    /// The value from its stored form; nil when the form does not fit.
    public init?(storedValue: Value) {
        guard case .string(let s) = storedValue, let d = Decimal(string: s, locale: Locale(identifier: "en_US_POSIX")) else { return nil }
        self = d
    }
    /// The value in its stored form.
    public var storedValue: Value { .string(description) }
}

/// Any `Codable` enum or struct as an attribute, without a conformance of
/// its own: stored as its JSON text (`JSONEncoder` with sorted keys, so equal
/// values store equal text). Types that conform to `ModelValue`,
/// `ModelEnum` or `ModelEmbedded` keep their own, faster and queryable form.
struct CodableAttribute<V: Codable> {
    static func stored(_ v: V) -> Value {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // The store's own date text (docs/format.md): every digit a `Date` needs to
        // read back equal, where `.iso8601` would drop the fraction.
        encoder.dateEncodingStrategy = .custom { date, encoder in
            var c = encoder.singleValueContainer()
            try c.encode(ISODate.format(date.timeIntervalSinceReferenceDate))
        }
        guard let data = try? encoder.encode(v) else { return .null }
        return .string(String(decoding: data, as: UTF8.self))
    }

    static func value(_ stored: Value) -> V? {
        guard case .string(let s) = stored else { return nil }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .custom { decoder in
            let c = try decoder.singleValueContainer()
            let text = try c.decode(String.self)
            guard let t = ISODate.parse(text) else {
                throw DecodingError.dataCorruptedError(in: c, debugDescription: "not an ISO 8601 date: \(text)")
            }
            return Date(timeIntervalSinceReferenceDate: t)
        }
        return try? decoder.decode(V.self, from: Data(s.utf8))
    }
}
