import TripStoreJSON
import TripStoreSystem
/// An envelope that does not fit the schema: which record, which property,
/// and what was expected.
public struct EnvelopeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The kind of mismatch, for programs that react to it.
    public enum Kind: Sendable, Equatable {
        /// The record is not `{"type", "id", "data"}`.
        case notAnEnvelope
        /// The type tag names no model.
        case unknownType
        /// `data` holds a name the model does not have.
        case unknownProperty
        /// A required attribute is missing.
        case missingAttribute
        /// A value of the wrong JSON type, or past its type's range.
        case wrongType
        /// Text that is not an ISO 8601 date.
        case badDate
        /// Text that is no case of the enum.
        case badEnumCase
        /// A reference to an id that does not exist.
        case danglingReference
        /// An id given twice (or listed twice in one relationship).
        case duplicateID
        /// A reference or upsert whose type does not match.
        case typeConflict
        /// An id already in the store (insert mode).
        case existingID
        /// Bytes that are not JSON.
        case syntax
    }

    /// What kind of mismatch.
    public var kind: Kind
    /// The top-level record, when known.
    public var location: RecordLocation?
    /// Where inside the record, for nested objects (`data.bucketList[1]`); empty at the top.
    public var path: String
    /// The entity whose property is wrong, when there is one.
    public var entity: String?
    /// The property, when there is one.
    public var property: String?
    /// What was expected and what was found.
    public var message: String

    /// An error naming the record, the path inside it, the entity and the property.
    public init(_ kind: Kind, location: RecordLocation? = nil, path: String = "", entity: String? = nil,
                property: String? = nil, _ message: String) {
        self.kind = kind
        self.location = location
        self.path = path
        self.entity = entity
        self.property = property
        self.message = message
    }

    /// "record 3 at data.bucketList[0]: property 'title' of BucketListItem: …".
    public var description: String {
        var parts: [String] = []
        if let l = location { parts.append(l.description) }
        if !path.isEmpty { parts.append("at \(path)") }
        var head = parts.joined(separator: " ")
        if let p = property {
            head += (head.isEmpty ? "" : ": ") + "property '\(p)'" + (entity.map { " of \($0)" } ?? "")
        } else if let e = entity {
            head += (head.isEmpty ? "" : ": ") + e
        }
        return head.isEmpty ? message : head + ": " + message
    }

    /// A short description of a JSON value for "found …".
    static func describe(_ v: JSONValue) -> String {
        switch v {
        case .string(let s):
            let short = s.count > 40 ? String(s.prefix(40)) + "…" : s
            return "\"\(short)\""
        case .int(let i): return String(i)
        case .double(let d): return String(d)
        case .bool(let b): return String(b)
        case .null: return "null"
        case .array: return "an array"
        case .object: return "an object"
        }
    }
}

/// Several envelopes that do not fit the schema (from a validation that goes on after the first).
public struct EnvelopeErrors: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every error found, in input order.
    public var errors: [EnvelopeError]

    /// A list of errors.
    public init(_ errors: [EnvelopeError]) {
        self.errors = errors
    }

    /// One error a line.
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
