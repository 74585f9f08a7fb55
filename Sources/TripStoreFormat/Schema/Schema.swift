import TripStoreJSON
import TripStoreSystem
/// A validated model hierarchy: the entities with their inherited properties
/// laid out in slots, subclass closures for deep queries, and a fingerprint.
///
/// ```swift
/// let schema = try Schema([
///     EntityDescription("Production", attributes: [AttributeDescription("title", .string)]),
///     EntityDescription("TVSpecial", parent: "Production"),
/// ])
/// schema.entity(named: "Production")?.closure  // Production and TVSpecial
/// ```
public struct Schema: Sendable {
    /// The entities, in declaration order; an entity's `id` is its index here.
    public let entities: [Entity]
    /// The descriptions the schema was built from.
    public let descriptions: [EntityDescription]
    /// A stable hash of the schema's canonical JSON, as 16 hex digits. It
    /// covers the shape only: not the version, original names or defaults.
    public let fingerprint: String
    /// The app's name for this version of its models (`"1.2.0"`), free text;
    /// recorded with the store and shown by `schema` and `stats`.
    public let version: String?
    private let indexByName: [String: Int]

    /// A schema from its model descriptions (roots and subclasses, any order).
    /// An inverse declared on one side of a pair only (as SwiftData allows)
    /// is completed on the other side.
    ///
    /// - Throws: `SchemaError` for an unknown parent or destination, a duplicate
    ///   or clashing name, or an inverse that does not mirror its relationship.
    public init(_ declared: [EntityDescription], version: String? = nil) throws(SchemaError) {
        let descriptions = SchemaValidator.completingInverses(declared)
        try SchemaValidator.validate(descriptions)
        self.version = version
        var indexByName: [String: Int] = [:]
        for (i, d) in descriptions.enumerated() { indexByName[d.name] = i }
        self.descriptions = descriptions
        self.indexByName = indexByName
        self.entities = SchemaLayout.resolve(descriptions, indexByName: indexByName)
        self.fingerprint = SchemaCoding.fingerprint(of: descriptions)
    }

    /// The same schema with entity objects of its own, for work on another core.
    package func privateCopy() -> Schema {
        (try? Schema(descriptions, version: version)) ?? self
    }

    /// The entity of that name, if the schema has one.
    public func entity(named name: String) -> Entity? {
        indexByName[name].map { entities[$0] }
    }

    /// The entities without a parent, in declaration order.
    public var roots: [Entity] { entities.filter { $0.parent == nil } }

    /// True when `entity` is `ancestor` or one of its subclasses.
    public func isKind(_ entity: Int, of ancestor: Int) -> Bool {
        var e: Int? = entity
        while let current = e {
            if current == ancestor { return true }
            e = entities[current].parent
        }
        return false
    }
}

/// A resolved entity (a class, so that handing one around costs one retain).
public final class Entity: Sendable {
    /// Its index in `Schema.entities`.
    public let id: Int
    /// The model's name: its type tag.
    public let name: String
    /// The parent entity's index, if any.
    public let parent: Int?
    /// The direct subclasses.
    public let children: [Int]
    /// This entity and all its subclasses at any depth (what `is T` matches).
    public let closure: [Int]
    /// The root of this entity's hierarchy.
    public let root: Int
    /// Every property, inherited ones first; a property's slot is its index here,
    /// so an inherited property has the same slot in every subclass.
    public let properties: [Property]
    let slotByName: [String: Int]
    /// A new object's values: nil, and empty to-many relationships.
    public let emptyValues: [Value]
    /// The name it had before a migration renamed it, as declared.
    public let originalName: String?

    init(id: Int, name: String, parent: Int?, children: [Int], closure: [Int], root: Int,
         properties: [Property], slotByName: [String: Int], emptyValues: [Value], originalName: String?) {
        self.id = id
        self.originalName = originalName
        self.name = name
        self.parent = parent
        self.children = children
        self.closure = closure
        self.root = root
        self.properties = properties
        self.slotByName = slotByName
        self.emptyValues = emptyValues
    }

    /// The property of that name, declared here or inherited.
    public func property(named name: String) -> Property? {
        slotByName[name].map { properties[$0] }
    }
}

/// An attribute or relationship of a resolved entity.
public final class Property: Sendable {
    /// An attribute or a relationship.
    public enum Kind: Sendable {
        /// An attribute, as declared.
        case attribute(AttributeDescription)
        /// A relationship, resolved.
        case relationship(Relationship)
    }

    /// The property's name.
    public let name: String
    /// Its position in `StoredObject.values` (inherited properties first).
    public let slot: Int
    /// The entity that declares it (an ancestor for an inherited property).
    public let declaringEntity: Int
    /// What it is.
    public let kind: Kind

    init(name: String, slot: Int, declaringEntity: Int, kind: Kind) {
        self.name = name
        self.slot = slot
        self.declaringEntity = declaringEntity
        self.kind = kind
    }

    /// The attribute, when it is one.
    public var attribute: AttributeDescription? {
        if case .attribute(let a) = kind { return a }
        return nil
    }

    /// The relationship, when it is one.
    public var relationship: Relationship? {
        if case .relationship(let r) = kind { return r }
        return nil
    }

    /// The name it had before a migration renamed it, as declared.
    public var originalName: String? {
        switch kind {
        case .attribute(let a): return a.originalName
        case .relationship(let r): return r.description.originalName
        }
    }
}

/// A resolved relationship: its destination entity and inverse slot.
public struct Relationship: Sendable {
    /// As declared.
    public let description: RelationshipDescription
    /// The destination entity's index.
    public let destination: Int
    /// The slot of the inverse relationship in the destination entity.
    public let inverseSlot: Int?
    /// Whether snapshots write this side. Of a to-one/to-many pair only the
    /// to-many side (which keeps the order) is written; the other is derived
    /// when the snapshot is loaded. Of a one-to-one pair, one side.
    public let isStoredSide: Bool
    /// An array of objects.
    public var isToMany: Bool { description.isToMany }
    /// What deleting the owner does.
    public var deleteRule: DeleteRule { description.deleteRule }
}

enum SchemaLayout {
    static func resolve(_ descriptions: [EntityDescription], indexByName: [String: Int]) -> [Entity] {
        func inverseOf(_ r: RelationshipDescription) -> (owner: String, RelationshipDescription)? {
            guard let name = r.inverse, var i = indexByName[r.destination] else { return nil }
            while true {
                if let inv = descriptions[i].relationships.first(where: { $0.name == name }) { return (descriptions[i].name, inv) }
                guard let p = descriptions[i].parent, let pi = indexByName[p] else { return nil }
                i = pi
            }
        }
        func storedSide(_ r: RelationshipDescription, owner: String) -> Bool {
            guard let (invOwner, inv) = inverseOf(r) else { return true }
            switch (r.isToMany, inv.isToMany) {
            case (true, _): return true
            case (false, true): return false
            case (false, false):
                let mine = r.deleteRule == .cascade, theirs = inv.deleteRule == .cascade
                if mine != theirs { return mine }
                return "\(owner).\(r.name)" < "\(invOwner).\(inv.name)"
            }
        }
        let n = descriptions.count
        let parents: [Int?] = descriptions.map { $0.parent.flatMap { indexByName[$0] } }
        var children = Array(repeating: [Int](), count: n)
        for i in 0..<n { if let p = parents[i] { children[p].append(i) } }
        // Walked without recursion (the validator has ruled out cycles):
        // a hierarchy may be deeper than the stack.
        func closure(_ i: Int) -> [Int] {
            var out: [Int] = [], pending = [i]
            while let e = pending.popLast() {
                out.append(e)
                pending.append(contentsOf: children[e].reversed())
            }
            return out
        }
        let chains: [[Int]] = (0..<n).map { i in
            var chain = [i]
            while let p = parents[chain[chain.count - 1]] { chain.append(p) }
            return chain.reversed()
        }

        // Slots first, so inverse slots can be looked up.
        var slotMaps = Array(repeating: [String: Int](), count: n)
        for i in 0..<n {
            var slot = 0
            slotMaps[i].reserveCapacity(chains[i].reduce(0) { $0 + descriptions[$1].attributes.count + descriptions[$1].relationships.count })
            for e in chains[i] {
                for a in descriptions[e].attributes { slotMaps[i][a.name] = slot; slot += 1 }
                for r in descriptions[e].relationships { slotMaps[i][r.name] = slot; slot += 1 }
            }
        }
        return (0..<n).map { i in
            var props: [Property] = []
            for e in chains[i] {
                for a in descriptions[e].attributes {
                    props.append(Property(name: a.name, slot: props.count, declaringEntity: e, kind: .attribute(a)))
                }
                for r in descriptions[e].relationships {
                    let dest = indexByName[r.destination]!
                    let inverseSlot = r.inverse.flatMap { slotMaps[dest][$0] }
                    let rel = Relationship(description: r, destination: dest, inverseSlot: inverseSlot,
                                           isStoredSide: storedSide(r, owner: descriptions[e].name))
                    props.append(Property(name: r.name, slot: props.count, declaringEntity: e, kind: .relationship(rel)))
                }
            }
            let empty: [Value] = props.map { $0.relationship?.isToMany == true ? .toMany([]) : .null }
            return Entity(id: i, name: descriptions[i].name, parent: parents[i], children: children[i],
                          closure: closure(i), root: chains[i][0], properties: props, slotByName: slotMaps[i], emptyValues: empty,
                          originalName: descriptions[i].originalName)
        }
    }
}
