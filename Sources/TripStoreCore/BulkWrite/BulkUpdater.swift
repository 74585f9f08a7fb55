import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Sets attributes on many objects without staging them: each object's new
/// record goes into the table as it is made, and only the history's changes
/// (each changed value, old and new) are kept, so memory grows with what
/// the update changes, not with a copy of every object it touches twice.
///
/// It is the path for an update of `StoreOptions.snapshotCommitChanges`
/// objects or more, which is committed by writing a snapshot anyway: the
/// table changes first, and the snapshot's rename makes it durable, all or
/// nothing. Attributes name no other object, so nothing another object
/// holds, no deny rule and no reference can be broken by it; the checks a
/// staged transaction needs are not made.
struct BulkUpdater {
    let store: Store

    /// Updates `rows` with `assignments` as one transaction, or returns nil
    /// (writing nothing) when every value is set already.
    func run(_ rows: [RowID], set assignments: [(name: String, text: String)], author: String,
             timestamp: Double?) throws -> HistoryTransaction? {
        try store.checkWritable(.commit)
        let table = store.table, schema = store.schema
        var parsed = AssignedValues(schema: schema, assignments: assignments)
        // The image is checked through first (the snapshot below reads all of
        // it): damage stops the update before anything is read from it or changed.
        guard table.checkEverything() else {
            throw StoreError.imageDamaged(file: store.imagePath, detail: table.imageDamage ?? "")
        }
        // Every value is read before the first is changed: a bad one changes nothing.
        for row in rows {
            guard let e = table.entity(at: row) else { continue }
            _ = try parsed.values(entity: e, id: table.id(at: row) ?? "")
        }
        Trace.mark("bulk update: \(rows.count) rows read")
        let firstTime = try store.lastCommitTime() ?? -.infinity
        var changes: [Change] = []
        var seen = Set<RowID>()
        for row in rows where seen.insert(row).inserted {
            guard let old = table.object(at: row) else { continue }
            var new = old
            for (slot, value) in try parsed.values(for: old) { new.values[slot] = value }
            let entity = schema.entities[old.entity]
            var values: [ValueChange] = []
            for p in entity.properties where old.values[p.slot] != new.values[p.slot] {
                let a = EnvelopeEncoder.jsonValue(old.values[p.slot], of: p, schema: schema, lookup: table)
                let b = EnvelopeEncoder.jsonValue(new.values[p.slot], of: p, schema: schema, lookup: table)
                if a != b { values.append(ValueChange(name: p.name, old: a, new: b)) }
            }
            guard !values.isEmpty else { continue }
            changes.append(Change(kind: .update, type: entity.name, id: old.id, values: values))
            store.indexes.update(row, old: old, new: new)
            table.set(new, at: row)
        }
        Trace.mark("bulk update: \(changes.count) changed")
        if changes.isEmpty { return nil }
        let t = HistoryTransaction(token: store.lastToken + 1, timestamp: max(timestamp ?? Store.now(), firstTime),
                                   author: author, changes: changes)
        return try store.recordBySnapshot(t)
    }
}
