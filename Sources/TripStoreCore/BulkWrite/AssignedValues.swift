import TripStoreFormat

/// Assignments written as text (`destination`, `"Rome"`), read once per
/// entity in the types of its attributes: an update of many objects of a
/// few types parses each value a few times, not once per object.
struct AssignedValues {
    let schema: Schema
    let assignments: [(name: String, text: String)]
    /// By entity: (slot, value) in the order of the assignments.
    private var parsed: [Int: [(slot: Int, value: Value)]] = [:]

    init(schema: Schema, assignments: [(name: String, text: String)]) {
        self.schema = schema
        self.assignments = assignments
    }

    /// The slots and values the assignments give an object of `object`'s type.
    /// - Throws: `StoreError.unknownProperty` or `.notAnAttribute` naming
    ///   the type, `.invalid` for a value its attribute cannot hold.
    mutating func values(for object: StoredObject) throws -> [(slot: Int, value: Value)] {
        try values(entity: object.entity, id: object.id)
    }

    /// The slots and values for an object of entity `entityID`; `id` names it in an error.
    mutating func values(entity entityID: Int, id: @autoclosure () -> String) throws -> [(slot: Int, value: Value)] {
        if let known = parsed[entityID] { return known }
        let entity = schema.entities[entityID]
        var values: [(slot: Int, value: Value)] = []
        for (name, text) in assignments {
            guard let p = entity.property(named: name) else {
                throw StoreError.unknownProperty(entity: entity.name, id: id(), name: name,
                                                 suggestion: NameSuggestion.closest(to: name, in: entity.properties.map(\.name)))
            }
            guard let a = p.attribute else { throw StoreError.notAnAttribute(entity: entity.name, name: name) }
            do {
                values.append((p.slot, try ValueText.parse(text, as: a)))
            } catch {
                var e = error
                e.entity = "\(entity.name) '\(id())'"
                throw StoreError.invalid(e)
            }
        }
        parsed[entityID] = values
        return values
    }
}
