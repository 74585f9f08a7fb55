import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

// Sendable: every stored property is a `let` set in `init` and never changed
// (immutable after construction), so sharing it across threads is safe.
/// The model classes of an app, listed once, and the `Schema` they make.
///
/// ```swift
/// let schema = try ModelSchema([Trip.self, BusinessTrip.self, PersonalTrip.self, BucketListItem.self])
/// ```
public final class ModelSchema: @unchecked Sendable {
    /// The engine schema made from the classes.
    public let schema: Schema
    let types: [PersistentModel.Type]
    /// Every property of each entity, in slot order (inherited first).
    let properties: [[ModelProperty]]
    private let names: [AnyKeyPath: String]
    /// The entity of each model class.
    private let entityIDs: [ObjectIdentifier: Int]
    /// Each entity's slot for every declared key path it has (inherited ones
    /// under the key path of the class that declares them).
    private let slotsByKeyPath: [[AnyKeyPath: Int]]

    /// The app's name for this version of its models (`"2.0.0"`), if given.
    public var version: String? { schema.version }

    /// The schema of model classes: the roots and their subclasses, once
    /// each; `version` names this version of them (SwiftData's `VersionedSchema`),
    /// for a `MigrationPlan` and for refusing a store of a later version.
    ///
    /// - Throws: `SchemaError` for a class that declares a property twice,
    ///   an undeclared stored property, a key path that does not match its name,
    ///   or a subclass whose superclass is not listed.
    public init(_ types: [PersistentModel.Type], version: String? = nil) throws {
        var descriptions: [EntityDescription] = []
        let names = types.map { $0.entityName }
        var ownProperties: [[ModelProperty]] = []
        for t in types {
            var d = EntityDescription(t.entityName, originalName: t.originalEntityName)
            // The superclass, from a throwaway instance's mirror (no macro tells us).
            let superType = Mirror(reflecting: t.init()).superclassMirror?.subjectType as? PersistentModel.Type
            if let superType, superType != PersistentModel.self {
                guard names.contains(superType.entityName) else {
                    throw SchemaError.unknownParent(entity: t.entityName, parent: superType.entityName)
                }
                d.parent = superType.entityName
            }
            let own = ModelSchema.ordered(ModelSchema.ownProperties(of: t, superType: superType))
            try ModelSchema.checkDeclarations(of: t, own)
            ownProperties.append(own)
            for p in own {
                switch p.kind {
                case .attribute(let a, _, _): d.attributes.append(a)
                case .relationship(let r, _, _, _): d.relationships.append(r)
                }
            }
            descriptions.append(d)
        }
        schema = try Schema(descriptions, version: version)
        self.types = types
        var byEntity: [[ModelProperty]] = []
        var keyPaths: [AnyKeyPath: String] = [:]
        var slots: [[AnyKeyPath: Int]] = []
        for e in schema.entities {
            var chain: [Int] = []
            var c: Int? = e.id
            while let x = c { chain.insert(x, at: 0); c = schema.entities[x].parent }
            let props = chain.flatMap { ownProperties[$0] }
            byEntity.append(props)
            slots.append(Dictionary(props.enumerated().map { ($1.keyPath, $0) }, uniquingKeysWith: { a, _ in a }))
            for p in ownProperties[e.id] { keyPaths[p.keyPath] = p.name }
        }
        properties = byEntity
        self.names = keyPaths
        slotsByKeyPath = slots
        let built = schema
        entityIDs = Dictionary(types.compactMap { t in
            built.entity(named: t.entityName).map { (ObjectIdentifier(t), $0.id) }
        }, uniquingKeysWith: { a, _ in a })
    }

    /// Attributes first, then relationships: the order of an entity's slots.
    static func ordered(_ ps: [ModelProperty]) -> [ModelProperty] {
        ps.filter { if case .attribute = $0.kind { return true } else { return false } }
            + ps.filter { if case .relationship = $0.kind { return true } else { return false } }
    }

    /// The stored name of a model key path (Swift does not say it for non-final classes).
    public func propertyName(_ keyPath: AnyKeyPath) -> String? {
        if let n = names[keyPath] { return n }
        lock.lock()
        defer { lock.unlock() }
        if let cached = probed[keyPath] { return cached }
        let name = probe(keyPath)
        probed[keyPath] = name
        return name
    }

    private let lock = NSLock()
    private var probed: [AnyKeyPath: String?] = [:]

    /// A key path rooted at a subclass (`\PersonalTrip.startDate`) is not equal to
    /// the declared one (`\Trip.startDate`): read it on an instance whose
    /// attributes all hold distinct values, and see whose value comes back.
    private func probe(_ keyPath: AnyKeyPath) -> String? {
        guard let root = type(of: keyPath).rootType as? PersistentModel.Type,
              let entity = schema.entity(named: root.entityName) else { return nil }
        let instance = root.init()
        var markers: [(String, Value)] = []
        for (slot, p) in properties[entity.id].enumerated() {
            guard case .attribute(let a, _, let set) = p.kind, let marker = ModelSchema.marker(a.type, slot) else { continue }
            if set(instance, marker) { markers.append((p.name, marker)) }
        }
        guard let read = instance[keyPath: keyPath] as? any ModelValue else { return nil }
        let value = read.storedValue
        let matches = markers.filter { $0.1 == value }
        return matches.count == 1 ? matches[0].0 : nil
    }

    /// The stored path of a key path through one to-one relationship to an
    /// attribute (`\Trip.livingAccommodation?.name` is
    /// `livingAccommodation.name`), for sorting; nil for anything else.
    public func propertyPath(_ keyPath: AnyKeyPath) -> String? {
        if let name = propertyName(keyPath) { return name }
        lock.lock()
        defer { lock.unlock() }
        if let cached = probedPaths[keyPath] { return cached }
        let path = probePath(keyPath)
        probedPaths[keyPath] = path
        return path
    }

    private var probedPaths: [AnyKeyPath: String?] = [:]

    /// Sets each to-one relationship in turn to an object whose attributes
    /// hold distinct values, and sees which value the key path reads.
    private func probePath(_ keyPath: AnyKeyPath) -> String? {
        guard let root = type(of: keyPath).rootType as? PersistentModel.Type,
              let entity = schema.entity(named: root.entityName) else { return nil }
        for p in properties[entity.id] {
            guard case .relationship(let r, let destination, _, let set) = p.kind, !r.isToMany,
                  let target = schema.entity(named: destination.entityName) else { continue }
            let instance = root.init(), related = destination.init()
            var markers: [(String, Value)] = []
            for (slot, q) in properties[target.id].enumerated() {
                guard case .attribute(let a, _, let setValue) = q.kind, let marker = ModelSchema.marker(a.type, slot) else { continue }
                if setValue(related, marker) { markers.append((q.name, marker)) }
            }
            set(instance, .one(related))
            guard let read = instance[keyPath: keyPath] as? any ModelValue else { continue }
            let matches = markers.filter { $0.1 == read.storedValue }
            if matches.count == 1 { return p.name + "." + matches[0].0 }
        }
        return nil
    }

    static func marker(_ type: ValueType, _ slot: Int) -> Value? {
        switch type {
        case .string: return .string("\u{1}probe \(slot)")
        case .int: return .int(Int64(1_000_003 + slot))
        case .double: return .double(1_000_003.5 + Double(slot))
        case .date: return .date(1_000_003 + Double(slot))
        case .bool: return .bool(slot % 2 == 0)
        case .enumeration(let e): return .string(e.cases[slot % e.cases.count])
        case .array(let inner): return marker(inner, slot).map { .array([$0]) }
        case .embedded: return nil
        }
    }

    func entity(of model: PersistentModel) -> Entity? {
        entityID(of: model).map { schema.entities[$0] }
    }

    /// The entity of an instance's class; nil for a class not in the schema.
    func entityID(of model: PersistentModel) -> Int? {
        entityIDs[ObjectIdentifier(type(of: model))]
    }

    /// The slot a model field's key path has in an entity.
    func slot(of keyPath: AnyKeyPath, in entity: Int) -> Int? {
        slotsByKeyPath[entity][keyPath]
    }
}
