import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// What `import` does with an id that is already in the store.
public enum ImportMode: String, Sendable, CaseIterable {
    /// An existing id is an error.
    case insert
    /// An existing object is replaced whole (recorded as an update).
    case upsert
    /// An existing object is left as it is.
    case skipExisting = "skip-existing"
}

/// Staging: what a command or an import asks for, turned into the changes
/// of a transaction, checked against the store as it is.
extension Store {
    /// Stages decoded envelopes into `tx`: inserts new objects, handles
    /// existing ids per `mode`, then resolves every reference and links both
    /// sides. Throws on the first problem; `tx` is then to be dropped.
    /// - Throws: `StoreError.invalid` for an id already in the store (insert
    ///   mode) or given twice, a reference to an id that is neither in the input
    ///   nor in the store, or one of the wrong type; `StoreError.denied` never
    ///   (deny rules are checked at commit).
    public func stage(_ input: consuming [DecodedObject], mode: ImportMode, into tx: inout TransactionBuilder) throws {
        var objects = input
        tx.reserve(objects.count)
        let firstNewRow = RowID(tx.base + tx.newObjects.count)
        var rows = [RowID?](repeating: nil, count: objects.count)
        var replaced = [Bool](repeating: false, count: objects.count)
        var skipped: [(index: Int, row: RowID)] = []
        var existingSeen = Set<RowID>()
        func duplicate(_ i: Int) -> StoreError {
            let d = objects[i]
            let first = objects.firstIndex { $0.id == d.id }.flatMap { objects[$0].location }
            return .invalid(EnvelopeError(.duplicateID, location: d.location, path: d.path, entity: schema.entities[d.entity].name,
                                          "id '\(d.id)' appears twice in the input" + (first.map { " (first at \($0))" } ?? "")))
        }
        for i in objects.indices {
            guard let existing = tx.row(for: objects[i].id) else {
                if tx.deletes(id: objects[i].id) {
                    let d = objects[i]
                    throw StoreError.invalid(EnvelopeError(.existingID, location: d.location, path: d.path, entity: schema.entities[d.entity].name,
                                                           "id '\(d.id)' is deleted in this transaction; an object and its replacement with the same id go in transactions of their own"))
                }
                // The new object takes the values; linking then changes them in place.
                let values = objects[i].values
                objects[i].values = []
                rows[i] = tx.insert(StoredObject(entity: objects[i].entity, id: objects[i].id, values: values))
                continue
            }
            if existing >= firstNewRow || !existingSeen.insert(existing).inserted { throw duplicate(i) }
            let d = objects[i]
            switch mode {
            case .insert:
                throw StoreError.invalid(EnvelopeError(.existingID, location: d.location, path: d.path,
                                                       entity: schema.entities[d.entity].name,
                                                       "id '\(d.id)' is already in the store"))
            case .skipExisting:
                skipped.append((i, existing))
                continue
            case .upsert:
                let current = tx.object(at: existing)!
                guard current.entity == d.entity else {
                    throw StoreError.invalid(EnvelopeError(.typeConflict, location: d.location, path: d.path,
                                                           entity: schema.entities[d.entity].name,
                                                           "id '\(d.id)' is a \(schema.entities[current.entity].name) in the store; upsert cannot change its type"))
                }
                for p in schema.entities[d.entity].properties where p.attribute != nil {
                    tx.setAttribute(existing, slot: p.slot, to: d.values[p.slot])
                }
                rows[i] = existing
                replaced[i] = true
            }
        }
        // A replaced object loses the relationships its new version omits; this
        // comes first, so that links given anywhere in the input win.
        for i in objects.indices where replaced[i] {
            let given = Set(objects[i].links.map(\.slot))
            for p in schema.entities[objects[i].entity].properties where p.relationship != nil && !given.contains(p.slot) {
                try tx.setRelationship(rows[i]!, slot: p.slot, to: [])
            }
        }
        var explicitLists: [(RowID, Int, [RowID])] = []
        for i in objects.indices {
            guard let row = rows[i] else { continue }
            let links = objects[i].links
            if links.isEmpty { continue }
            for link in links {
                var targets: [RowID] = []
                targets.reserveCapacity(link.targets.count)
                for ref in link.targets {
                    let t = try resolve(ref, in: objects, at: i, slot: link.slot, tx: tx)
                    if targets.contains(t) {
                        // A to-many holds an object once: listing it twice is an input error.
                        let entity = schema.entities[objects[i].entity]
                        throw StoreError.invalid(EnvelopeError(.duplicateID, location: objects[i].location, path: ref.path,
                                                               entity: entity.name, property: entity.properties[link.slot].name,
                                                               "lists id '\(ref.id)' twice; a relationship holds an object once"))
                    }
                    targets.append(t)
                }
                if replaced[i] {
                    try tx.setRelationship(row, slot: link.slot, to: targets)
                } else {
                    for t in targets { tx.link(row, slot: link.slot, to: t) }
                    if targets.count > 1 { explicitLists.append((row, link.slot, targets)) }
                }
            }
        }
        // A list given in the input keeps its order, whichever side was linked first.
        for (row, slot, targets) in explicitLists { tx.reorder(row, slot: slot, first: targets) }
        // A new object the input nests under (or lists from) a skipped one
        // is linked to it as the input says, where that takes nothing from
        // the existing object: added to a to-many, set where a to-one is nil
        // (SQL's INSERT OR IGNORE of a parent, then its new child's row).
        for (i, row) in skipped {
            for link in objects[i].links {
                let isToMany = schema.entities[objects[i].entity].properties[link.slot].relationship?.isToMany ?? false
                for ref in link.targets {
                    guard let t = tx.row(for: ref.id), t >= firstNewRow,
                          (try? resolve(ref, in: objects, at: i, slot: link.slot, tx: tx)) == t else { continue }
                    if !isToMany, case .toOne = tx.value(at: row, slot: link.slot) { continue }
                    tx.link(row, slot: link.slot, to: t)
                }
            }
        }
    }

    private func resolve(_ ref: ObjectReference, in objects: [DecodedObject], at i: Int, slot: Int,
                         tx: TransactionBuilder) throws -> RowID {
        let target = tx.row(for: ref.id)
        if let t = target, let e = tx.entity(at: t), ref.type == nil || ref.type == schema.entities[e].name {
            let entity = schema.entities[objects[i].entity]
            if schema.isKind(e, of: entity.properties[slot].relationship!.destination) { return t }
        }
        let o = target.flatMap { tx.object(at: $0) }
        let d = objects[i]
        let entity = schema.entities[d.entity]
        let property = entity.properties[slot].name
        guard let o else {
            throw StoreError.invalid(EnvelopeError(.danglingReference, location: d.location, path: ref.path,
                                                   entity: entity.name, property: property,
                                                   "reference to id '\(ref.id)', which is neither in the input nor in the store"))
        }
        let actual = schema.entities[o.entity].name
        if let type = ref.type, type != actual {
            throw StoreError.invalid(EnvelopeError(.typeConflict, location: d.location, path: ref.path,
                                                   entity: entity.name, property: property,
                                                   "reference says id '\(ref.id)' is a \(type), but it is a \(actual)"))
        }
        let dest = entity.properties[slot].relationship!.destination
        throw StoreError.invalid(EnvelopeError(.typeConflict, location: d.location, path: ref.path,
                                               entity: entity.name, property: property,
                                               "id '\(ref.id)' is a \(actual), expected a \(schema.entities[dest].name)"))
    }

    /// Every duplicate id and unresolvable reference of an input, up to
    /// `limit`, checked against the input and this store without staging
    /// anything (for `validate`, which reports all it finds).
    public func referenceErrors(_ objects: [DecodedObject], limit: Int) -> [EnvelopeError] {
        var errors: [EnvelopeError] = []
        var entityByID: [String: Int] = [:]
        entityByID.reserveCapacity(objects.count)
        for d in objects {
            if entityByID.updateValue(d.entity, forKey: d.id) != nil {
                errors.append(EnvelopeError(.duplicateID, location: d.location, path: d.path, entity: schema.entities[d.entity].name,
                                            "id '\(d.id)' appears twice in the input"))
            }
        }
        for d in objects {
            let entity = schema.entities[d.entity]
            for link in d.links {
                let p = entity.properties[link.slot]
                var listed = Set<String>()
                for ref in link.targets {
                    if errors.count >= limit { return errors }
                    guard listed.insert(ref.id).inserted else {
                        errors.append(EnvelopeError(.duplicateID, location: d.location, path: ref.path, entity: entity.name, property: p.name,
                                                    "lists id '\(ref.id)' twice; a relationship holds an object once"))
                        continue
                    }
                    guard let target = entityByID[ref.id] ?? object(id: ref.id)?.entity else {
                        errors.append(EnvelopeError(.danglingReference, location: d.location, path: ref.path, entity: entity.name,
                                                    property: p.name, "reference to id '\(ref.id)', which is neither in the input nor in the store"))
                        continue
                    }
                    let actual = schema.entities[target].name
                    if let type = ref.type, type != actual {
                        errors.append(EnvelopeError(.typeConflict, location: d.location, path: ref.path, entity: entity.name, property: p.name,
                                                    "reference says id '\(ref.id)' is a \(type), but it is a \(actual)"))
                    } else if let r = p.relationship, !schema.isKind(target, of: r.destination) {
                        errors.append(EnvelopeError(.typeConflict, location: d.location, path: ref.path, entity: entity.name, property: p.name,
                                                    "id '\(ref.id)' is a \(actual), expected a \(schema.entities[r.destination].name)"))
                    }
                }
            }
        }
        return Array(errors.prefix(limit))
    }

    /// Stages assignments written as text (`name`, `"Rome"`, `2026-03-02`,
    /// `null`) on objects: each value is read in the attribute's type; an
    /// attribute that an object's type lacks is an error naming the type.
    /// Setting an equal value changes nothing.
    ///
    /// ```swift
    /// var tx = store.transaction()
    /// try store.stageUpdate(try store.rows(forIDs: ["t1"]), set: [("destination", "Roma")], into: &tx)
    /// try store.commit(tx, author: "alice")
    /// ```
    public func stageUpdate(_ rows: [RowID], set assignments: [(name: String, text: String)],
                            into tx: inout TransactionBuilder) throws {
        var parsed = AssignedValues(schema: schema, assignments: assignments)
        for row in rows {
            guard let o = tx.object(at: row) else { continue }
            for (slot, value) in try parsed.values(for: o) where o.values[slot] != value {
                tx.setAttribute(row, slot: slot, to: value)
            }
        }
        Trace.mark("staged \(rows.count) rows")
    }

    /// Sets attributes (written as text, as `stageUpdate` reads them) on
    /// objects and commits it as one transaction; nil when every value is
    /// set already. An update that changes `StoreOptions.snapshotCommitChanges`
    /// objects or more is made without staging them, in memory that grows
    /// with what it changes, and committed by a snapshot (see `BulkUpdater`);
    /// one that changes fewer, however many it matches, is staged and
    /// committed as a journal line, as `commit` does. The history is the same either way.
    ///
    /// ```swift
    /// let rows = try store.run(try Query("destination == \"Rome\"", from: "Trip")).rows
    /// try store.update(rows, set: [("destination", "Roma")], author: "alice")
    /// ```
    /// - Throws: what `stageUpdate` and `commit` throw; nothing is written then.
    @discardableResult
    public func update(_ rows: [RowID], set assignments: [(name: String, text: String)], author: String,
                       timestamp: Double? = nil) throws -> HistoryTransaction? {
        var rows = rows
        if rows.count >= options.snapshotCommitChanges {
            var updater = BulkUpdater(store: self, assignments: assignments)
            rows = try updater.rowsThatChange(rows)
            if rows.count >= options.snapshotCommitChanges {
                return try updater.run(rows, author: author, timestamp: timestamp)
            }
        }
        var tx = transaction()
        try stageUpdate(rows, set: assignments, into: &tx)
        return try commit(tx, author: author, timestamp: timestamp)
    }
}
