import TripStoreJSON
import TripStoreSystem

/// How a store moves from one schema to another by lightweight migration
/// (docs/cli.md, migrate): the plan, one line a change, what cannot be done from the
/// schemas alone, and how each object's values are carried over. The store
/// adds what only its objects can tell (an enum case in use, an object
/// without a value for an attribute that becomes required).
///
/// Entities, attributes and relationships are matched by `originalName`
/// when the old schema has that name and does not already record that
/// rename, else by name; an attribute is matched within the entity that
/// declares it. A rename applies once: the store's schema records each
/// `originalName` it applied, so a later schema that keeps it (as apps keep
/// `@Attribute(originalName:)`) matches by name, and a swap of two names is
/// planned even though the shape, and so the fingerprint, stays the same.
///
/// ```swift
/// let plan = SchemaMigration(from: stored, to: next)
/// plan.steps     // ["rename Trip.destination -> Trip.place", "add BusinessTrip.costCentre = \"none\""]
/// plan.problems  // [] when the schemas allow it
/// ```
public struct SchemaMigration: Sendable {
    /// The store's schema now.
    public let from: Schema
    /// The schema it moves to.
    public let to: Schema
    /// One line per change, in the order `tripstore migrate` prints them.
    public private(set) var steps: [String] = []
    /// Each change that lightweight migration cannot make, as a sentence.
    public package(set) var problems: [String] = []
    /// What the objects make of the changes, as sentences (how many
    /// integers past 2^53 a conversion to `Double` changes): known once
    /// the store checked the plan against its objects, empty before.
    public package(set) var notes: [String] = []
    /// Per entity of `from`: how its objects become objects of `to` (nil: the entity is removed).
    package private(set) var mappings: [EntityMapping?] = []

    /// How the objects of one old entity are carried over.
    package struct EntityMapping: Sendable {
        /// The entity of `to` they become.
        package var entity: Int
        /// Per slot of that entity: where its value comes from.
        package var slots: [SlotSource]
        /// Old slots whose values the migration drops (kept in history), with their old names.
        package var removed: [(slot: Int, name: String)]
        /// New relationship slots whose inverse is new: both sides must already mirror each other.
        package var newInverses: [Int]
    }

    /// Where a new slot's value comes from.
    package enum SlotSource: Sendable {
        /// An attribute's old slot, converted, with what a nil there becomes.
        case attribute(old: Int, conversion: Conversion, whenNil: WhenNil, label: String)
        /// A relationship's old slot; its targets must be of `destinations`
        /// (entities of `to`; nil: no check), else `refusal` says why not.
        case references(old: Int, destinations: Set<Int>?, refusal: String)
        /// A new property: this value for every object.
        case fill(Value)
    }

    /// What happens to an attribute's old value.
    package enum Conversion: Sendable {
        case none
        /// `Int` to `Double`; an integer a `Double` cannot hold exactly keeps its old value in history.
        case intToDouble
        /// Enum cases are gone: no object may hold one of them.
        case removedCases(Set<String>)
    }

    /// What a nil old value becomes.
    package enum WhenNil: Sendable {
        case stays
        /// The attribute became required: the default, or (nil) a problem.
        case becomes(Value?)
    }

    /// The plan from `from` to `to`.
    public init(from: Schema, to: Schema) {
        self.from = from
        self.to = to
        plan()
    }

    /// The renames the plan applies, one line each (also in `steps`).
    public private(set) var renames: [String] = []

    /// Nothing changes: the same shape, and no rename left to apply
    /// (versions and hints aside).
    public var isEmpty: Bool { from.fingerprint == to.fingerprint && renames.isEmpty }

    /// What an entity or property named `name` in the new schema continues
    /// in the store's, looked up by `lookup`: the one its `originalName`
    /// names, unless the store's one of the same name carries that same
    /// `originalName` (an earlier migration applied the rename and recorded
    /// it), else the one of the same name.
    static func continued<T>(_ name: String, originalName: String?, in lookup: (String) -> T?, originalNameOf: (T) -> String?) -> T? {
        let same = lookup(name)
        if let o = originalName, same.map({ originalNameOf($0) != o }) ?? true, let renamed = lookup(o) { return renamed }
        return same
    }

    private mutating func plan() {
        // Entities: by original name when the store has it, else by name.
        var oldOf: [Int?] = []
        var claimed: [Int: String] = [:]
        for e in to.entities {
            if let o = e.originalName, from.entity(named: o) == nil, from.entity(named: e.name) == nil {
                problems.append("entity '\(e.name)': its originalName '\(o)' names no entity of the store's schema")
            }
            let old = Self.continued(e.name, originalName: e.originalName, in: from.entity(named:), originalNameOf: \.originalName)
            if let old, let other = claimed[old.id] {
                problems.append("entities '\(other)' and '\(e.name)' both continue '\(old.name)'")
                oldOf.append(nil)
                continue
            }
            if let old { claimed[old.id] = e.name }
            oldOf.append(old?.id)
        }
        var newOf: [Int?] = Array(repeating: nil, count: from.entities.count)
        for (n, o) in oldOf.enumerated() { if let o { newOf[o] = n } }
        func newName(_ oldEntity: Int) -> String? { newOf[oldEntity].map { to.entities[$0].name } }

        for e in to.entities {
            guard let o = oldOf[e.id] else {
                steps.append("add entity \(e.name)" + (e.parent.map { " (subclass of \(to.entities[$0].name))" } ?? ""))
                continue
            }
            let old = from.entities[o]
            if old.name != e.name { rename("rename \(old.name) -> \(e.name)") }
            let oldParent = old.parent.flatMap(newName)
            let newParent = e.parent.map { to.entities[$0].name }
            if oldParent != newParent || (old.parent != nil) != (e.parent != nil) {
                problems.append("entity '\(e.name)' changes its parent from \(old.parent.map { from.entities[$0].name } ?? "none") to \(newParent ?? "none")")
            }
        }
        for old in from.entities where newOf[old.id] == nil {
            steps.append("remove entity \(old.name)")
        }

        // Declared properties, entity by entity (inherited ones are planned where they are declared).
        // "Entity.property" (new names) -> the slot it continues in the old declaring entity.
        var continues: [String: Int] = [:]
        for e in to.entities {
            guard let o = oldOf[e.id] else { continue }
            let old = from.entities[o]
            let oldOwn = old.properties.filter { $0.declaringEntity == o }
            var used = Set<String>()
            var renamed: [(label: String, from: String, to: String)] = []
            for p in e.properties where p.declaringEntity == e.id {
                let label = "\(e.name).\(p.name)"
                let match = Self.continued(p.name, originalName: p.originalName, in: { n in oldOwn.first { $0.name == n } }, originalNameOf: \.originalName)
                if let o = p.originalName, match == nil {
                    problems.append("\(label): its originalName '\(o)' names no property that \(old.name) declares in the store's schema")
                }
                guard let q = match, used.insert(q.name).inserted else {
                    if let q = match { problems.append("\(label) and another property of \(e.name) both continue '\(old.name).\(q.name)'") }
                    planAdded(p, label: label, oldDestination: p.relationship.flatMap { oldOf[$0.destination] })
                    continue
                }
                let oldLabel = "\(old.name).\(q.name)"
                if q.name != p.name {
                    rename("rename \(oldLabel) -> \(label)")
                    renamed.append((label, q.name, p.name))
                }
                continues[label] = q.slot
                switch (q.kind, p.kind) {
                case (.attribute(let a), .attribute(let b)):
                    planAttribute(a, b, label: label)
                case (.relationship(let r), .relationship(let s)):
                    if r.isToMany != s.isToMany {
                        problems.append("\(label) changes from \(r.isToMany ? "to-many" : "to-one") to \(s.isToMany ? "to-many" : "to-one")")
                    }
                    if newName(r.destination) != to.entities[s.destination].name {
                        steps.append("point \(label) at \(to.entities[s.destination].name) (was \(from.entities[r.destination].name))")
                    }
                    if r.deleteRule != s.deleteRule {
                        steps.append("delete rule of \(label): \(r.deleteRule.rawValue) -> \(s.deleteRule.rawValue)")
                    }
                    let oldInverse = r.inverseSlot.map { from.entities[r.destination].properties[$0].name }
                    let newInverse = s.inverseSlot.map { to.entities[s.destination].properties[$0].name }
                    let renamedInverse = r.inverseSlot.flatMap { slot -> String? in
                        // The old inverse under its new name, when it was renamed.
                        guard let n = newOf[r.destination] else { return nil }
                        let oldProp = from.entities[r.destination].properties[slot]
                        return to.entities[n].properties.first { self.oldProperty(continuedBy: $0, in: from.entities[r.destination])?.slot == oldProp.slot }?.name
                    }
                    if newInverse != (renamedInverse ?? oldInverse) {
                        steps.append("inverse of \(label): \(oldInverse ?? "none") -> \(newInverse ?? "none")")
                    }
                default:
                    problems.append("\(label) changes from \(q.attribute == nil ? "a relationship" : "an attribute") to \(p.attribute == nil ? "a relationship" : "an attribute")")
                }
            }
            // A rename onto a name the store still uses for a property that would go is ambiguous.
            for r in renamed where oldOwn.contains(where: { $0.name == r.to }) && !used.contains(r.to) {
                problems.append("\(r.label): renamed from '\(r.from)', but the store's \(old.name).\(r.to) would be removed; "
                                + "remove or rename that one in a migration of its own first")
            }
            for q in oldOwn where !used.contains(q.name) {
                steps.append("remove \(old.name).\(q.name) (" + (q.attribute == nil ? "references" : "values") + " kept in history)")
            }
        }

        // Per old concrete entity: every slot of the new entity (inherited ones too).
        for old in from.entities {
            guard let n = newOf[old.id] else {
                mappings.append(nil)
                continue
            }
            let e = to.entities[n]
            var slots: [SlotSource] = []
            var usedOld = Set<Int>()
            var newInverses: [Int] = []
            for p in e.properties {
                let owner = to.entities[p.declaringEntity]
                let label = "\(owner.name).\(p.name)"
                // The old slot this property continues, in this old entity's layout.
                var oldSlot: Int?
                if let o = oldOf[p.declaringEntity], let s = continues[label] {
                    let declared = from.entities[o].properties[s]
                    oldSlot = old.property(named: declared.name).flatMap { $0.declaringEntity == o ? $0.slot : nil }
                }
                guard let s = oldSlot else {
                    slots.append(.fill(Self.fillValue(p)))
                    continue
                }
                usedOld.insert(s)
                let q = old.properties[s]
                switch (q.kind, p.kind) {
                case (.attribute(let a), .attribute(let b)):
                    let conversion = Self.conversion(a.type, b.type) ?? .none
                    var whenNil = WhenNil.stays
                    if a.isOptional && !b.isOptional { whenNil = .becomes(b.defaultValue.flatMap { try? ValueDecoding.decode($0, as: b.type, optional: false) }) }
                    slots.append(.attribute(old: s, conversion: conversion, whenNil: whenNil, label: label))
                case (.relationship(let r), .relationship(let t)):
                    let sameTarget = newOf[r.destination] == t.destination
                    slots.append(.references(old: s, destinations: sameTarget ? nil : Set(to.entities[t.destination].closure),
                                             refusal: "point \(label) at \(to.entities[t.destination].name)"))
                    let oldInverse = r.inverseSlot.map { from.entities[r.destination].properties[$0].name }
                    if let inv = t.inverseSlot, t.isStoredSide {
                        let newInverse = to.entities[t.destination].properties[inv]
                        if oldProperty(continuedBy: newInverse, in: from.entities[r.destination])?.name != oldInverse && newInverse.name != oldInverse {
                            newInverses.append(p.slot)
                        }
                    }
                default:
                    slots.append(.fill(Self.fillValue(p)))
                }
            }
            let removed = old.properties.filter { !usedOld.contains($0.slot) }.map { (slot: $0.slot, name: $0.name) }
            mappings.append(EntityMapping(entity: n, slots: slots, removed: removed, newInverses: newInverses))
        }
    }

    /// The property of the store's entity `old` that `p` continues (see `continued`).
    func oldProperty(continuedBy p: Property, in old: Entity) -> Property? {
        Self.continued(p.name, originalName: p.originalName, in: old.property(named:), originalNameOf: \.originalName)
    }

    private mutating func rename(_ step: String) {
        steps.append(step)
        renames.append(step)
    }

    /// A property the store did not have: a relationship starts empty, an
    /// attribute with its default, else nil (a required one without a default is a problem).
    /// The inverse of a relationship the store already has is filled from it
    /// (`oldDestination`: the old entity its destination continues, if any).
    private mutating func planAdded(_ p: Property, label: String, oldDestination: Int?) {
        switch p.kind {
        case .relationship(let r):
            if let inverse = r.inverseSlot, let o = oldDestination {
                let back = to.entities[r.destination].properties[inverse]
                if oldProperty(continuedBy: back, in: from.entities[o])?.relationship != nil {
                    steps.append("add \(label) (filled from \(to.entities[r.destination].name).\(back.name))")
                    return
                }
            }
            steps.append("add \(label) (" + (r.isToMany ? "empty" : "nil") + ")")
        case .attribute(let a):
            if let d = a.defaultValue {
                var w = JSONWriter()
                w.value(d)
                steps.append("add \(label) = \(w.string)")
            } else if a.isOptional {
                steps.append("add \(label) (nil)")
            } else {
                problems.append("add \(label): it is required and has no \"default\" for the objects the store has")
            }
        }
    }

    private mutating func planAttribute(_ a: AttributeDescription, _ b: AttributeDescription, label: String) {
        switch Self.conversion(a.type, b.type) {
        case nil:
            if case .embedded(let x) = a.type, case .embedded(let y) = b.type, x.name == y.name {
                problems.append("\(label): the fields of \(x.name) change (a type change)")
            } else {
                problems.append("\(label) changes type from \(a.type.displayName) to \(b.type.displayName)")
            }
        case .intToDouble?:
            steps.append("convert \(label) from Int to Double")
        case .removedCases(let gone)?:
            for c in Self.cases(a.type) where gone.contains(c) { steps.append("remove enum case \(label) \"\(c)\"") }
        case .none?:
            break
        }
        for c in Self.cases(b.type) where !Self.cases(a.type).contains(c) { steps.append("add enum case \(label) \"\(c)\"") }
        if let x = Self.enumName(a.type), let y = Self.enumName(b.type), x != y { steps.append("rename the enum of \(label) from \(x) to \(y)") }
        if a.isOptional && !b.isOptional {
            if let d = b.defaultValue {
                var w = JSONWriter()
                w.value(d)
                steps.append("make \(label) required (objects without a value get \(w.string))")
            } else {
                steps.append("make \(label) required")
            }
        } else if !a.isOptional && b.isOptional {
            steps.append("make \(label) optional")
        }
        if a.isIndexed != b.isIndexed { steps.append(b.isIndexed ? "index \(label)" : "drop the index of \(label)") }
        if a.preservesOnDeletion != b.preservesOnDeletion {
            steps.append(b.preservesOnDeletion ? "preserve \(label) on deletion" : "stop preserving \(label) on deletion")
        }
    }

    /// The value every object gets for a property the store did not have.
    static func fillValue(_ p: Property) -> Value {
        switch p.kind {
        case .relationship(let r): return r.isToMany ? .toMany([]) : .null
        case .attribute(let a):
            return a.defaultValue.flatMap { try? ValueDecoding.decode($0, as: a.type, optional: a.isOptional) } ?? .null
        }
    }

    /// How a value of type `a` becomes one of type `b`; nil when it cannot.
    static func conversion(_ a: ValueType, _ b: ValueType) -> Conversion? {
        if a == b { return Conversion.none }
        switch (a, b) {
        case (.int, .double): return .intToDouble
        case (.enumeration(let x), .enumeration(let y)):
            let gone = Set(x.cases).subtracting(y.cases)
            return gone.isEmpty ? Conversion.none : .removedCases(gone)
        case (.array(let x), .array(let y)):
            switch conversion(x, y) {
            case .none?: return Conversion.none
            case .removedCases(let gone)?: return .removedCases(gone)
            default: return nil
            }
        default: return nil
        }
    }

    static func enumName(_ t: ValueType) -> String? {
        switch t {
        case .enumeration(let e): return e.name
        case .array(let inner): return enumName(inner)
        default: return nil
        }
    }

    static func cases(_ t: ValueType) -> [String] {
        switch t {
        case .enumeration(let e): return e.cases
        case .array(let inner): return cases(inner)
        default: return []
        }
    }
}
