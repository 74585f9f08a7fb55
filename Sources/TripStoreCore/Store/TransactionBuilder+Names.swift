import TripStoreFormat

/// The transaction as a program writes it: objects by id, properties by name.
///
/// ```swift
/// var tx = store.transaction()
/// let id = try tx.insert("FeatureFilm", values: ["title": .string("Heat"), "runtimeMinutes": .int(170)])
/// try tx.link(id, "studio", to: "studio-1")
/// try tx.set("budget", of: "prod-7", to: .double(6.5e7))
/// try tx.delete(id: "prod-9")
/// try store.commit(tx, author: "alice")
/// ```
///
/// It sees the store as it was when it was started, plus its own changes:
/// objects that later commits insert are not found here (inserting such an
/// id is a conflict at commit).
extension TransactionBuilder {
    /// Inserts a new object of the concrete type `type` with attribute values
    /// by name (omitted optional attributes are nil); relationships are set
    /// afterwards with `link`. Returns its id (`id`, or a new UUID).
    ///
    /// - Throws: `StoreError.unknownType` / `.unknownProperty` for an unknown name,
    ///   `.notAnAttribute` for a relationship among `values`, `.idInUse` for an id already in use (here or in the
    ///   store as this transaction sees it).
    @discardableResult
    public mutating func insert(_ type: String, id: String? = nil, values: [String: Value] = [:]) throws(StoreError) -> String {
        guard let entity = schema.entity(named: type) else { throw .unknownType(name: type, suggestion: NameSuggestion.closest(to: type, in: schema.entities.map(\.name))) }
        let id = id ?? EnvelopeDecoder.newID()
        guard row(for: id) == nil, !deletes(id: id) else { throw .idInUse(id: id) }
        var object = StoredObject(entity: entity.id, id: id, values: entity.emptyValues)
        for (name, value) in values {
            let p = try property(name, of: entity)
            guard p.attribute != nil else { throw .notAnAttribute(entity: entity.name, name: name) }
            object.values[p.slot] = value
        }
        insert(object)
        return id
    }

    /// Sets an attribute of the object with that id.
    ///
    /// - Throws: `StoreError.notFound` for an unknown id, `StoreError.unknownProperty`
    ///   for an unknown property, `.notAnAttribute` for a relationship.
    public mutating func set(_ property: String, of id: String, to value: Value) throws(StoreError) {
        let (row, entity) = try live(id)
        let p = try self.property(property, of: entity)
        guard p.attribute != nil else { throw .notAnAttribute(entity: entity.name, name: property) }
        setAttribute(row, slot: p.slot, to: value)
    }

    /// Relates the object `id` to `target` through `relationship` (a to-one
    /// is replaced, a to-many gains it), and the inverse back.
    ///
    /// - Throws: `StoreError.notFound` for an unknown id or target,
    ///   `StoreError.unknownProperty` / `.notARelationship` for a name that is no relationship.
    public mutating func link(_ id: String, _ relationship: String, to target: String) throws(StoreError) {
        let (row, entity) = try live(id)
        let p = try self.property(relationship, of: entity)
        guard p.relationship != nil else { throw .notARelationship(entity: entity.name, name: relationship) }
        link(row, slot: p.slot, to: try live(target).row)
    }

    /// Takes `target` out of the object's `relationship` (and the object out of the inverse).
    ///
    /// - Throws: as `link`.
    public mutating func unlink(_ id: String, _ relationship: String, from target: String) throws(StoreError) {
        let (row, entity) = try live(id)
        let p = try self.property(relationship, of: entity)
        guard p.relationship != nil else { throw .notARelationship(entity: entity.name, name: relationship) }
        unlink(row, slot: p.slot, from: try live(target).row)
    }

    /// Deletes the object, following the delete rules of its relationships;
    /// every reference to it goes too.
    ///
    /// - Throws: `StoreError.notFound` for an unknown id; a deny rule is
    ///   checked at commit (`StoreError.denied`).
    public mutating func delete(id: String) throws(StoreError) {
        try delete(try live(id).row)
    }

    /// The object with that id as this transaction sees it.
    public func object(id: String) -> StoredObject? {
        row(for: id).flatMap { object(at: $0) }
    }

    private func live(_ id: String) throws(StoreError) -> (row: RowID, entity: Entity) {
        guard let row = row(for: id), let e = entity(at: row) else { throw .notFound(id: id) }
        return (row, schema.entities[e])
    }

    private func property(_ name: String, of entity: Entity) throws(StoreError) -> Property {
        guard let p = entity.property(named: name) else {
            throw .unknownProperty(entity: entity.name, id: nil, name: name,
                                   suggestion: NameSuggestion.closest(to: name, in: entity.properties.map(\.name)))
        }
        return p
    }
}
