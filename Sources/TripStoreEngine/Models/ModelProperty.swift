import TripStoreCore
import TripStoreFormat
import TripStoreJSON
// Sendable although it holds closures over model instances: the closures
// capture only key paths (immutable, thread-safe values), and a model instance
// reaches them only as an argument, on the thread of the context that owns it.
/// One declared property of a model class: its stored name, its key path,
/// what it is in the schema, and how to read and write it on an instance.
public struct ModelProperty: @unchecked Sendable {
    /// A relationship's value on an instance.
    enum Related {
        case one(PersistentModel?)
        case many([PersistentModel])
    }

    enum Kind {
        case attribute(AttributeDescription, get: (PersistentModel) -> Value, set: (PersistentModel, Value) -> Bool)
        case relationship(RelationshipDescription, destination: PersistentModel.Type,
                          get: (PersistentModel) -> Related, set: (PersistentModel, Related) -> Void)
    }

    /// The stored name.
    public let name: String
    /// The key path it was declared with.
    public let keyPath: AnyKeyPath
    let kind: Kind
    /// Writes the property's value back to itself: under the context's
    /// `.faulting` access that makes it a fault, under `.filling` it clears one.
    let touch: (PersistentModel) -> Void

    init<M: PersistentModel, V>(name: String, keyPath: ReferenceWritableKeyPath<M, V>, kind: Kind) {
        self.name = name
        self.keyPath = keyPath
        self.kind = kind
        touch = { m in
            let m = m as! M
            m[keyPath: keyPath] = m[keyPath: keyPath]
        }
    }

    /// How the property is declared in its class (for error messages).
    var wrapperName: String {
        if case .relationship = kind { return "@Relationship" }
        return "@Attribute"
    }

    /// An attribute: `.attribute("name", \Trip.name, options: [.preserveOnDeletion, .indexed])`.
    ///
    /// For a migration (SwiftData's `@Attribute(originalName:)`):
    /// `originalName` is the name it had in the store before, and
    /// `defaultValue` what objects that lack it get (a new required
    /// attribute): `.attribute("place", \Trip.place, originalName: "destination")`.
    public static func attribute<M: PersistentModel, V: ModelValue>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<M, V>, options: AttributeOptions = [],
        originalName: String? = nil, defaultValue: V? = nil
    ) -> ModelProperty {
        let description = AttributeDescription(name, V.valueType, optional: V.isOptional, options: options, originalName: originalName,
                                               defaultValue: defaultValue.map { EnvelopeEncoder.jsonAttribute($0.storedValue, type: V.valueType) })
        return ModelProperty(name: name, keyPath: keyPath, kind: .attribute(description, get: { m in
            (m as! M)[keyPath: keyPath].storedValue
        }, set: { m, v in
            guard let value = V(storedValue: v) else { return false }
            (m as! M)[keyPath: keyPath] = value
            return true
        }))
    }

    /// An attribute of any `Codable` type without a `ModelValue` conformance
    /// (an enum with associated values, a struct), stored as its JSON text.
    @_disfavoredOverload
    public static func attribute<M: PersistentModel, V: Codable>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<M, V>, options: AttributeOptions = []
    ) -> ModelProperty {
        let description = AttributeDescription(name, .string, optional: false, options: options)
        return ModelProperty(name: name, keyPath: keyPath, kind: .attribute(description, get: { m in
            CodableAttribute<V>.stored((m as! M)[keyPath: keyPath])
        }, set: { m, v in
            guard let value = CodableAttribute<V>.value(v) else { return false }
            (m as! M)[keyPath: keyPath] = value
            return true
        }))
    }

    /// An optional attribute of any `Codable` type, stored as its JSON text (nil as null).
    @_disfavoredOverload
    public static func attribute<M: PersistentModel, V: Codable>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<M, V?>, options: AttributeOptions = []
    ) -> ModelProperty {
        let description = AttributeDescription(name, .string, optional: true, options: options)
        return ModelProperty(name: name, keyPath: keyPath, kind: .attribute(description, get: { m in
            (m as! M)[keyPath: keyPath].map { CodableAttribute<V>.stored($0) } ?? .null
        }, set: { m, v in
            if case .null = v {
                (m as! M)[keyPath: keyPath] = nil
                return true
            }
            guard let value = CodableAttribute<V>.value(v) else { return false }
            (m as! M)[keyPath: keyPath] = value
            return true
        }))
    }

    /// A to-one relationship: `.toOne("livingAccommodation", \Trip.livingAccommodation, inverse: "trip", deleteRule: .cascade)`.
    public static func toOne<M: PersistentModel, T: PersistentModel>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<M, T?>, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
        originalName: String? = nil
    ) -> ModelProperty {
        let description = RelationshipDescription(name, to: T.entityName, toMany: false, inverse: inverse, deleteRule: deleteRule,
                                                  originalName: originalName)
        return ModelProperty(name: name, keyPath: keyPath, kind: .relationship(description, destination: T.self, get: { m in
            .one((m as! M)[keyPath: keyPath])
        }, set: { m, related in
            if case .one(let target) = related { (m as! M)[keyPath: keyPath] = target as? T }
        }))
    }

    /// A to-many relationship: `.toMany("bucketList", \Trip.bucketList, inverse: "trip", deleteRule: .cascade)`.
    public static func toMany<M: PersistentModel, T: PersistentModel>(
        _ name: String, _ keyPath: ReferenceWritableKeyPath<M, [T]>, inverse: String? = nil, deleteRule: DeleteRule = .nullify,
        originalName: String? = nil
    ) -> ModelProperty {
        let description = RelationshipDescription(name, to: T.entityName, toMany: true, inverse: inverse, deleteRule: deleteRule,
                                                  originalName: originalName)
        return ModelProperty(name: name, keyPath: keyPath, kind: .relationship(description, destination: T.self, get: { m in
            .many((m as! M)[keyPath: keyPath])
        }, set: { m, related in
            if case .many(let targets) = related { (m as! M)[keyPath: keyPath] = targets.compactMap { $0 as? T } }
        }))
    }
}
