import TripStoreJSON
import TripStoreSystem
/// The type of an attribute's value.
public indirect enum ValueType: Sendable, Hashable {
    /// Text.
    case string
    /// A whole number (`Int`).
    case int
    /// A floating-point number.
    case double
    /// A Boolean.
    case bool
    /// An instant, written as ISO 8601 in UTC.
    case date
    /// A Swift enum stored by its raw value.
    case enumeration(EnumDescription)
    /// An array of values, like `[String]`.
    case array(ValueType)
    /// A value type stored inside its owner, like a `Codable` struct property.
    case embedded(EmbeddedDescription)

    /// How the type reads in messages and `tripstore schema` ("String", "[String]", "Reason").
    /// The name with "a" or "an" before it ("an Int", "a String").
    public var withArticle: String {
        let name = displayName
        return (name.first.map { "AEIOU".contains($0) } ?? false ? "an " : "a ") + name
    }

    public var displayName: String {
        switch self {
        case .string: return "String"
        case .int: return "Int"
        case .double: return "Double"
        case .bool: return "Bool"
        case .date: return "Date"
        case .enumeration(let e): return e.name
        case .array(let t): return "[\(t.displayName)]"
        case .embedded(let e): return e.name
        }
    }
}

/// An enum attribute's type: its name and raw values.
public struct EnumDescription: Sendable, Hashable {
    /// The enum's Swift name.
    public var name: String
    /// Its raw values, in declaration order.
    public var cases: [String]
    /// An enum stored by raw value.
    public init(_ name: String, cases: [String]) {
        self.name = name
        self.cases = cases
    }
}

/// A value type embedded in a model, with its own fields.
public struct EmbeddedDescription: Sendable, Hashable {
    /// The value type's Swift name.
    public var name: String
    /// Its stored fields, in declaration order.
    public var fields: [AttributeDescription]
    /// A value type stored inside its owner.
    public init(_ name: String, fields: [AttributeDescription]) {
        self.name = name
        self.fields = fields
    }
}

/// Options of an attribute, as SwiftData's `@Attribute(...)` and `#Index` give them.
public struct AttributeOptions: OptionSet, Sendable, Hashable {
    /// The option bits.
    public let rawValue: Int
    /// Options from their bits.
    public init(rawValue: Int) { self.rawValue = rawValue }
    /// The value is kept in the delete tombstone (SwiftData's `.preserveValueOnDeletion`).
    public static let preserveOnDeletion = AttributeOptions(rawValue: 1)
    /// The attribute has an index (SwiftData's `#Index`), used for `==`, `in`, ranges, sorting and `~`.
    public static let indexed = AttributeOptions(rawValue: 2)
}

/// A stored attribute of an entity.
///
/// ```swift
/// AttributeDescription("startDate", .date, options: [.preserveOnDeletion, .indexed])
/// AttributeDescription("notes", .string, optional: true)
/// ```
public struct AttributeDescription: Sendable, Hashable {
    /// The attribute's name in envelopes and queries.
    public var name: String
    /// What it holds.
    public var type: ValueType
    /// Whether it may be nil.
    public var isOptional: Bool
    /// Preserved on deletion, indexed.
    public var options: AttributeOptions
    /// The name it had before a migration renamed it (SwiftData's
    /// `@Attribute(originalName:)`); not part of the fingerprint.
    public var originalName: String?
    /// The value a migration gives objects that lack it (a new attribute, or
    /// one that became required); not part of the fingerprint.
    public var defaultValue: JSONValue?

    /// An attribute of a model.
    public init(_ name: String, _ type: ValueType, optional: Bool = false, options: AttributeOptions = [],
                originalName: String? = nil, defaultValue: JSONValue? = nil) {
        self.name = name
        self.type = type
        self.isOptional = optional
        self.options = options
        self.originalName = originalName
        self.defaultValue = defaultValue
    }

    /// Whether a delete's tombstone keeps its value.
    public var preservesOnDeletion: Bool { options.contains(.preserveOnDeletion) }
    /// Whether queries on it use an index.
    public var isIndexed: Bool { options.contains(.indexed) }
}

/// What deleting an object does to the objects its relationship points at.
public enum DeleteRule: String, Sendable, Hashable, CaseIterable {
    /// Delete the related objects too.
    case cascade
    /// Remove the deleted object from the related objects' inverse.
    case nullify
    /// Refuse to delete while the relationship is not empty.
    case deny
    /// Leave the related objects as they are.
    case noAction
}

/// A relationship from one entity to another (or to itself).
///
/// ```swift
/// RelationshipDescription("bucketList", to: "BucketListItem", toMany: true, inverse: "trip", deleteRule: .cascade)
/// ```
public struct RelationshipDescription: Sendable, Hashable {
    /// The relationship's name in envelopes and queries.
    public var name: String
    /// The related model's name.
    public var destination: String
    /// An array of objects rather than one optional object.
    public var isToMany: Bool
    /// The relationship on the destination that mirrors this one, if declared.
    public var inverse: String?
    /// What deleting the owner does to the related objects.
    public var deleteRule: DeleteRule
    /// The name it had before a migration renamed it; not part of the fingerprint.
    public var originalName: String?

    /// A relationship of a model.
    public init(_ name: String, to destination: String, toMany: Bool = false, inverse: String? = nil,
                deleteRule: DeleteRule = .nullify, originalName: String? = nil) {
        self.name = name
        self.destination = destination
        self.isToMany = toMany
        self.inverse = inverse
        self.deleteRule = deleteRule
        self.originalName = originalName
    }
}

/// One model class: its name, its superclass (if any), and the properties it declares.
public struct EntityDescription: Sendable, Hashable {
    /// The model's name: its type tag in envelopes.
    public var name: String
    /// The model it inherits from, if any.
    public var parent: String?
    /// The attributes it declares (not the inherited ones).
    public var attributes: [AttributeDescription]
    /// The relationships it declares (not the inherited ones).
    public var relationships: [RelationshipDescription]
    /// The name it had before a migration renamed it; not part of the fingerprint.
    public var originalName: String?

    /// A model of the hierarchy.
    public init(_ name: String, parent: String? = nil, attributes: [AttributeDescription] = [],
                relationships: [RelationshipDescription] = [], originalName: String? = nil) {
        self.name = name
        self.parent = parent
        self.attributes = attributes
        self.relationships = relationships
        self.originalName = originalName
    }
}
