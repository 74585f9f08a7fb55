import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension TransactionBuilder {
    /// What this transaction does, as history changes: inserts, then updates
    /// (each changed value old and new), then deletes with tombstones and
    /// the values the objects had. An
    /// object inserted and deleted in the same transaction leaves no trace.
    /// Inserts come in `insertOrder`.
    public func changes() -> [Change] {
        var out: [Change] = []
        for i in insertOrder() {
            guard let o = newObjects[i] else { continue }
            out.append(Change(kind: .insert, type: schema.entities[o.entity].name, id: o.id))
        }
        for row in changedOrder where !deleted.contains(row) {
            guard let old = table.object(at: row), let new = changed[row] else { continue }
            let entity = schema.entities[new.entity]
            let values = Self.valueChanges(from: old, in: table, to: new, in: self, schema: schema)
            if !values.isEmpty {
                out.append(Change(kind: .update, type: entity.name, id: new.id, values: values))
            }
        }
        for row in deletedOrder where Int(row) < base {
            guard let o = table.object(at: row) else { continue }
            out.append(Change(kind: .delete, type: schema.entities[o.entity].name, id: o.id,
                              tombstone: Tombstone.values(of: o, schema: schema),
                              deletedValues: Tombstone.allValues(of: o, schema: schema, lookup: table)))
        }
        return out
    }

    /// Each value that differs between `old` (its references read in
    /// `before`) and `new` (in `after`), as history records it: the JSON
    /// each would be written as, and only where those differ.
    static func valueChanges(from old: StoredObject, in before: some ObjectLookup, to new: StoredObject, in after: some ObjectLookup,
                             schema: Schema) -> [ValueChange] {
        var values: [ValueChange] = []
        for p in schema.entities[new.entity].properties where old.values[p.slot] != new.values[p.slot] {
            let a = EnvelopeEncoder.jsonValue(old.values[p.slot], of: p, schema: schema, lookup: before)
            let b = EnvelopeEncoder.jsonValue(new.values[p.slot], of: p, schema: schema, lookup: after)
            if a != b { values.append(ValueChange(name: p.name, old: a, new: b)) }
        }
        return values
    }

    /// The new objects that are still there at commit, by index in
    /// `newObjects`: grouped by type, types in the order they first appear,
    /// each type's objects in the order they were inserted. Nested input
    /// (a trip, its items, the next trip…) then gives one run per type, which
    /// a snapshot stores once with its ids instead of a wrapper per object.
    func insertOrder() -> [Int] {
        var byEntity = Array(repeating: [Int](), count: schema.entities.count)
        var firstSeen: [Int] = []
        for (i, o) in newObjects.enumerated() {
            guard let o, !deleted.contains(RowID(base + i)) else { continue }
            if byEntity[o.entity].isEmpty { firstSeen.append(o.entity) }
            byEntity[o.entity].append(i)
        }
        if firstSeen.count == 1 { return byEntity[firstSeen[0]] }
        return firstSeen.flatMap { byEntity[$0] }
    }
}
