/// What `import` does with an id that is already in the store.
public enum ImportMode: String, Sendable, CaseIterable {
    /// An existing id is an error.
    case insert
    /// An existing object is replaced whole (recorded as an update).
    case upsert
    /// An existing object is left as it is.
    case skipExisting = "skip-existing"
}

extension Store {
    /// Stages decoded envelopes into `tx`: inserts new objects, handles
    /// existing ids per `mode`, then resolves every reference and links both
    /// sides. Throws on the first problem; `tx` is then to be dropped.
    public func stage(_ objects: [DecodedObject], mode: ImportMode, into tx: inout TransactionBuilder) throws {
        var fileIndex: [String: Int] = [:]
        fileIndex.reserveCapacity(objects.count)
        for (i, d) in objects.enumerated() {
            if let first = fileIndex.updateValue(i, forKey: d.id) {
                let where1 = objects[first].location.map { " (first at \($0))" } ?? ""
                throw StoreError.invalid(EnvelopeError(.duplicateID, location: d.location, path: d.path,
                                                       entity: schema.entities[d.entity].name,
                                                       "id '\(d.id)' appears twice in the input\(where1)"))
            }
        }
        tx.reserve(objects.count)
        var rows = [RowID?](repeating: nil, count: objects.count)
        var replaced = [Bool](repeating: false, count: objects.count)
        for (i, d) in objects.enumerated() {
            if let existing = tx.row(for: d.id), let current = tx.object(at: existing) {
                switch mode {
                case .insert:
                    throw StoreError.invalid(EnvelopeError(.existingID, location: d.location, path: d.path,
                                                           entity: schema.entities[d.entity].name,
                                                           "id '\(d.id)' is already in the store (use --mode upsert or --mode skip-existing)"))
                case .skipExisting:
                    continue
                case .upsert:
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
            } else {
                rows[i] = tx.insert(StoredObject(entity: d.entity, id: d.id, values: d.values))
            }
        }
        // A replaced object loses the relationships its new version omits; this
        // comes first, so that links given anywhere in the input win.
        for (i, d) in objects.enumerated() where replaced[i] {
            let given = Set(d.links.map(\.slot))
            for p in schema.entities[d.entity].properties where p.relationship != nil && !given.contains(p.slot) {
                try tx.setRelationship(rows[i]!, slot: p.slot, to: [])
            }
        }
        var explicitLists: [(RowID, Int, [RowID])] = []
        for (i, d) in objects.enumerated() {
            guard let row = rows[i] else { continue }
            let entity = schema.entities[d.entity]
            for link in d.links {
                var targets: [RowID] = []
                targets.reserveCapacity(link.targets.count)
                for ref in link.targets {
                    targets.append(try resolve(ref, of: d, entity: entity, slot: link.slot, rows: rows, fileIndex: fileIndex, tx: tx))
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
    }

    private func resolve(_ ref: ObjectReference, of d: DecodedObject, entity: Entity, slot: Int, rows: [RowID?],
                         fileIndex: [String: Int], tx: TransactionBuilder) throws -> RowID {
        var target: RowID?
        if let j = fileIndex[ref.id], let r = rows[j] { target = r } else { target = tx.row(for: ref.id) }
        let property = entity.properties[slot].name
        guard let t = target, let o = tx.object(at: t) else {
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
        guard schema.isKind(o.entity, of: dest) else {
            throw StoreError.invalid(EnvelopeError(.typeConflict, location: d.location, path: ref.path,
                                                   entity: entity.name, property: property,
                                                   "id '\(ref.id)' is a \(actual), expected a \(schema.entities[dest].name)"))
        }
        return t
    }
}
