/// The changes of one transaction, kept aside from the store until commit.
///
/// It sees its own changes (`object(at:)`), keeps both sides of every
/// relationship consistent, applies delete rules, and at the end says what
/// changed as history `Change`s. Dropping it leaves the store untouched.
public struct TransactionBuilder: ObjectLookup {
    public let schema: Schema
    let table: ObjectTable
    /// The first row this transaction's new objects get.
    let base: Int
    private(set) var newObjects: [StoredObject?] = []
    private(set) var newRowByID: [String: RowID] = [:]
    private(set) var changed: [RowID: StoredObject] = [:]
    private(set) var changedOrder: [RowID] = []
    private(set) var deleted: Set<RowID> = []
    private(set) var deletedOrder: [RowID] = []
    private var denyChecks: [(row: RowID, entity: Int, id: String, slot: Int)] = []

    init(table: ObjectTable) {
        self.table = table
        self.schema = table.schema
        self.base = table.rowCount
    }

    /// True when nothing was inserted, changed or deleted.
    public var isEmpty: Bool { newObjects.isEmpty && changed.isEmpty && deleted.isEmpty }

    public func object(at row: RowID) -> StoredObject? {
        if deleted.contains(row) { return nil }
        if Int(row) >= base { return newObjects[Int(row) - base] }
        if let c = changed[row] { return c }
        return table.object(at: row)
    }

    /// The entity of the live object at a row, without copying the object.
    func entity(at row: RowID) -> Int? {
        if deleted.contains(row) { return nil }
        if Int(row) >= base { return newObjects[Int(row) - base]?.entity }
        if let c = changed[row] { return c.entity }
        return table.entity(at: row)
    }

    /// The live row of an id, seeing this transaction's inserts and deletes.
    public func row(for id: String) -> RowID? {
        if let r = newRowByID[id] { return deleted.contains(r) ? nil : r }
        if let r = table.row(for: id), !deleted.contains(r) { return r }
        return nil
    }

    public mutating func reserve(_ n: Int) {
        newObjects.reserveCapacity(n)
        newRowByID.reserveCapacity(n)
    }

    /// Adds a new object; the caller has checked that its id is unused.
    @discardableResult
    public mutating func insert(_ object: StoredObject) -> RowID {
        let row = RowID(base + newObjects.count)
        newObjects.append(object)
        newRowByID[object.id] = row
        return row
    }

    private mutating func modify(_ row: RowID, _ body: (inout StoredObject) -> Void) {
        if Int(row) >= base {
            body(&newObjects[Int(row) - base]!)
            return
        }
        if changed[row] == nil {
            guard let o = table.object(at: row) else { return }
            changed[row] = o
            changedOrder.append(row)
        }
        body(&changed[row]!)
    }

    /// Sets an attribute's value.
    public mutating func setAttribute(_ row: RowID, slot: Int, to value: Value) {
        modify(row) { $0.values[slot] = value }
    }

    // MARK: - Relationships

    func relationship(_ row: RowID, _ slot: Int) -> Relationship? {
        guard let e = entity(at: row) else { return nil }
        return schema.entities[e].properties[slot].relationship
    }

    /// Adds `target` to one side; returns the object a to-one side pointed at before, if another.
    private mutating func addReference(_ row: RowID, _ slot: Int, _ target: RowID, toMany: Bool) -> RowID? {
        var displaced: RowID?
        modify(row) { o in
            if toMany {
                guard case .toMany(var list) = o.values[slot] else {
                    o.values[slot] = .toMany([target])
                    return
                }
                guard !list.contains(target) else { return }
                // Let go of the slot's copy first, so the append happens in place.
                o.values[slot] = .null
                list.append(target)
                o.values[slot] = .toMany(list)
            } else {
                if case .toOne(let old) = o.values[slot], old != target { displaced = old }
                o.values[slot] = .toOne(target)
            }
        }
        return displaced
    }

    private mutating func removeReference(_ row: RowID, _ slot: Int, _ target: RowID) {
        guard object(at: row) != nil else { return }
        modify(row) { o in
            switch o.values[slot] {
            case .toOne(let t) where t == target: o.values[slot] = .null
            case .toMany(let l) where l.contains(target): o.values[slot] = .toMany(l.filter { $0 != target })
            default: break
            }
        }
    }

    /// Relates `row`'s relationship `slot` to `target`, and the inverse back.
    public mutating func link(_ row: RowID, slot: Int, to target: RowID) {
        guard let rel = relationship(row, slot), entity(at: target) != nil else { return }
        let displaced = addReference(row, slot, target, toMany: rel.isToMany)
        guard let inverse = rel.inverseSlot, let invRel = relationship(target, inverse) else { return }
        if let d = displaced { removeReference(d, inverse, row) }
        if let x = addReference(target, inverse, row, toMany: invRel.isToMany), x != row, let back = invRel.inverseSlot {
            removeReference(x, back, target)
        }
    }

    /// Removes `target` from `row`'s relationship `slot`, and `row` from the inverse.
    public mutating func unlink(_ row: RowID, slot: Int, from target: RowID) {
        guard let rel = relationship(row, slot) else { return }
        removeReference(row, slot, target)
        if let inverse = rel.inverseSlot { removeReference(target, inverse, row) }
    }

    /// Makes `row`'s relationship hold exactly `targets`. Objects it no longer
    /// holds are unlinked, or deleted when the rule is cascade (an owned child
    /// that a new version no longer lists).
    public mutating func setRelationship(_ row: RowID, slot: Int, to targets: [RowID]) throws(StoreError) {
        guard let o = object(at: row), let rel = relationship(row, slot) else { return }
        let current = o.values[slot].rows
        let keep = Set(targets)
        for t in current where !keep.contains(t) {
            if rel.deleteRule == .cascade {
                try delete(t)
            } else {
                unlink(row, slot: slot, from: t)
            }
        }
        for t in targets { link(row, slot: slot, to: t) }
        if rel.isToMany, case .toMany(let now) = object(at: row)?.values[slot], now != targets,
           Set(now) == keep {
            modify(row) { $0.values[slot] = .toMany(targets) }  // keep the given order
        }
    }

    /// Puts `first` at the front of a to-many relationship, in that order.
    mutating func reorder(_ row: RowID, slot: Int, first: [RowID]) {
        guard case .toMany(let now)? = object(at: row)?.values[slot], now != first else { return }
        let head = Set(first)
        let ordered = first.filter { now.contains($0) } + now.filter { !head.contains($0) }
        if ordered != now { modify(row) { $0.values[slot] = .toMany(ordered) } }
    }

    // MARK: - Delete

    /// Deletes an object, following the delete rules of its relationships.
    public mutating func delete(_ row: RowID) throws(StoreError) {
        guard let o = object(at: row) else { return }
        deleted.insert(row)
        let entity = schema.entities[o.entity]
        for p in entity.properties {
            guard let rel = p.relationship else { continue }
            let targets = o.values[p.slot].rows
            if targets.isEmpty { continue }
            switch rel.deleteRule {
            case .cascade:
                for t in targets { try delete(t) }
            case .deny:
                denyChecks.append((row, o.entity, o.id, p.slot))
            case .nullify, .noAction:
                break
            }
            if let inverse = rel.inverseSlot {
                for t in targets where object(at: t) != nil { removeReference(t, inverse, row) }
            }
        }
        deletedOrder.append(row)
    }

    /// Rows deleted so far, children of a cascade before their owner.
    public var deletedRows: [RowID] { deletedOrder }

    /// Refuses the transaction if a deny rule still has live objects (commit checks this first).
    public func checkDenyRules() throws(StoreError) {
        for check in denyChecks {
            let before = Int(check.row) >= base ? nil : table.object(at: check.row)
            let targets = (before ?? StoredObject(entity: check.entity, id: check.id, values: [])).values
            guard check.slot < targets.count else { continue }
            let alive = targets[check.slot].rows.filter { object(at: $0) != nil }
            if !alive.isEmpty {
                let e = schema.entities[check.entity]
                throw .denied(entity: e.name, id: check.id, relationship: e.properties[check.slot].name, count: alive.count)
            }
        }
    }

    // MARK: - Changes

    /// What this transaction does, as history changes: inserts, then updates
    /// (each changed value old and new), then deletes with tombstones.
    public func changes() -> [Change] {
        var out: [Change] = []
        for o in newObjects {
            guard let o else { continue }
            out.append(Change(kind: .insert, type: schema.entities[o.entity].name, id: o.id))
        }
        for row in changedOrder where !deleted.contains(row) {
            guard let old = table.object(at: row), let new = changed[row] else { continue }
            let entity = schema.entities[new.entity]
            var values: [ValueChange] = []
            for p in entity.properties where old.values[p.slot] != new.values[p.slot] {
                let a = EnvelopeEncoder.jsonValue(old.values[p.slot], of: p, schema: schema, lookup: table)
                let b = EnvelopeEncoder.jsonValue(new.values[p.slot], of: p, schema: schema, lookup: self)
                if a != b { values.append(ValueChange(name: p.name, old: a, new: b)) }
            }
            if !values.isEmpty {
                out.append(Change(kind: .update, type: entity.name, id: new.id, values: values))
            }
        }
        for row in deletedOrder where Int(row) < base {
            guard let o = table.object(at: row) else { continue }
            out.append(Change(kind: .delete, type: schema.entities[o.entity].name, id: o.id,
                              tombstone: Tombstone.values(of: o, schema: schema)))
        }
        return out
    }

    /// The inserted objects, in insert order (for the journal's envelopes).
    var insertedObjects: [StoredObject] { newObjects.compactMap { $0 } }
}
