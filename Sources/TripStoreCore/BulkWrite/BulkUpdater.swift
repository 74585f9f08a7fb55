import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Sets attributes on many objects without staging them: each object's new
/// record goes into the table as it is made, and only the history's changes
/// (each changed value, old and new) are kept, so memory grows with what
/// the update changes, not with a copy of every object it touches twice.
///
/// It is the path for an update that changes `StoreOptions.snapshotCommitChanges`
/// objects or more, which is committed by writing a snapshot anyway: the
/// table changes first, and the snapshot's rename makes it durable, all or
/// nothing. Attributes name no other object, so nothing another object
/// holds, no deny rule and no reference can be broken by it; the checks a
/// staged transaction needs are not made.
struct BulkUpdater {
    let store: Store
    private var parsed: AssignedValues

    init(store: Store, assignments: [(name: String, text: String)]) {
        self.store = store
        self.parsed = AssignedValues(schema: store.schema, assignments: assignments)
    }

    /// The live ones of `rows`, each once and in their order, that the
    /// assignments change: what decides whether the update is big enough
    /// for this path (matching many and changing few is a journal line).
    /// - Throws: `AssignedValues`' errors, for the first of `rows` whose type refuses them.
    mutating func rowsThatChange(_ rows: [RowID]) throws -> [RowID] {
        let table = store.table
        var seen = Set<RowID>(), changing: [RowID] = []
        for row in rows where seen.insert(row).inserted {
            guard let e = table.entity(at: row) else { continue }
            let values = try parsed.values(entity: e, id: table.id(at: row) ?? "")
            if values.contains(where: { table.value(at: row, slot: $0.slot) != $0.value }) { changing.append(row) }
        }
        return changing
    }

    /// Updates `rows` (from `rowsThatChange`) as one transaction committed
    /// by a snapshot, or returns nil (writing nothing) when no value changes.
    mutating func run(_ rows: [RowID], author: String, timestamp: Double?) throws -> HistoryTransaction? {
        try store.checkWritable(.commit)
        let table = store.table, schema = store.schema
        // The image is checked through first (the snapshot below reads all of
        // it): damage stops the update before anything is changed.
        guard table.checkEverything() else {
            throw StoreError.imageDamaged(file: store.imagePath, detail: table.imageDamage ?? "")
        }
        Trace.mark("bulk update: \(rows.count) rows to change")
        let firstTime = try store.lastCommitTime() ?? -.infinity
        var changes: [Change] = []
        for row in rows {
            guard let old = table.object(at: row) else { continue }
            var new = old
            for (slot, value) in try parsed.values(for: old) { new.values[slot] = value }
            let values = TransactionBuilder.valueChanges(from: old, in: table, to: new, in: table, schema: schema)
            guard !values.isEmpty else { continue }
            changes.append(Change(kind: .update, type: schema.entities[old.entity].name, id: old.id, values: values))
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
