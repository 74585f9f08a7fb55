import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// What commits after a token did, per id, from retained history.
    struct LaterChanges {
        /// Per id, per property: the token of its last change.
        var properties: [String: [String: Int64]] = [:]
        var deleted: [String: (token: Int64, type: String)] = [:]
        var inserted: [String: Int64] = [:]
    }

    /// The changes committed after `token`; nil when history no longer reaches back to it.
    func changes(after token: Int64) -> LaterChanges? {
        var out = LaterChanges()
        guard token < lastToken else { return out }
        // Commits since the store opened are in memory; older ones need the snapshot's history.
        let source = (historyLog.loaded.first?.token ?? lastToken + 1) <= token + 1 ? historyLog.loaded : history
        var i = source.count
        while i > 0 && source[i - 1].token > token { i -= 1 }
        guard i < source.count, source[i].token == token + 1 else { return nil }
        for t in source[i...] {
            for c in t.changes {
                switch c.kind {
                case .insert: out.inserted[c.id] = t.token
                case .delete: out.deleted[c.id] = (t.token, c.type)
                case .update:
                    for v in c.values { out.properties[c.id, default: [:]][v.name] = t.token }
                    if c.redacted, let e = schema.entity(named: c.type) {
                        // Which values changed was redacted away: count every property as changed.
                        for p in e.properties { out.properties[c.id, default: [:]][p.name] = t.token }
                    }
                case .redact:
                    break  // history only: the object's values are unchanged
                case .migrate:
                    break  // a migration returns a store of its own: nothing staged before it reaches that store
                }
            }
        }
        return out
    }

    /// Every conflict between `tx` and the commits after the token(s) it was
    /// staged on: a property it sets that was changed since, an object it
    /// changes, deletes or links to that was deleted since (or, for a delete,
    /// changed at all), an id it inserts that was inserted since.
    func conflicts(in tx: TransactionBuilder) -> [StoreConflict] {
        let oldest = min(tx.baseToken, tx.rowTokens.values.min() ?? tx.baseToken)
        guard oldest < lastToken else { return [] }
        let later = changes(after: oldest)
        var out: [StoreConflict] = []
        var reported = Set<String>()
        func add(_ row: RowID, _ reason: StoreConflict.Reason, _ token: Int64?) {
            let id = table.recordedID(row) ?? "?"
            guard reported.insert("\(id)\u{0}\(reason)").inserted else { return }
            let entity = tx.originals[row]?.entity ?? table.entity(at: row)
            let type = entity.map { schema.entities[$0].name } ?? later?.deleted[id]?.type ?? "object"
            out.append(StoreConflict(type: type, id: id, reason: reason, token: token, stagedOn: tx.token(of: row)))
        }
        /// False (and reported) when the row was deleted since.
        func alive(_ row: RowID) -> Bool {
            if table.entity(at: row) != nil { return true }
            add(row, .deleted, table.recordedID(row).flatMap { later?.deleted[$0]?.token })
            return false
        }
        func checkChanged(_ row: RowID, property: Property) {
            let staged = tx.token(of: row, slot: property.slot)
            guard staged < lastToken else { return }
            if let later {
                if let id = table.recordedID(row), let t = later.properties[id]?[property.name], t > staged {
                    add(row, .changed(property: property.name), t)
                }
            } else if let original = tx.originals[row], tx.baseToken == staged {
                // No history to ask: compare with what the transaction started from.
                if table.value(at: row, slot: property.slot) != original.values[property.slot] {
                    add(row, .changed(property: property.name), nil)
                }
            } else {
                add(row, .historyUnavailable, nil)
            }
        }
        for key in tx.explicitSlots.sorted() {
            let row = RowID(truncatingIfNeeded: key >> 16), slot = Int(key & 0xFFFF)
            guard alive(row), let e = table.entity(at: row) else { continue }
            checkChanged(row, property: schema.entities[e].properties[slot])
        }
        for row in tx.deleteRequests + tx.deletedOrder where Int(row) < tx.base {
            guard alive(row), let e = table.entity(at: row) else { continue }
            for p in schema.entities[e].properties { checkChanged(row, property: p) }
        }
        // Rows the caller read at a known token (a context's objects): a to-one
        // it changes to keep a pair in step conflicts like one it set (moving
        // a child another save moved since); a to-many side merges instead.
        for row in tx.changedOrder where !tx.deleted.contains(row) && tx.rowTokens[row] != nil {
            guard let original = tx.originals[row], let now = tx.changed[row], table.entity(at: row) != nil else { continue }
            for p in schema.entities[original.entity].properties
            where original.values[p.slot] != now.values[p.slot] && p.relationship?.isToMany != true {
                checkChanged(row, property: p)
            }
        }
        for row in tx.linkTargets.sorted() where !tx.deleted.contains(row) { _ = alive(row) }
        for (i, o) in tx.newObjects.enumerated() where !tx.deleted.contains(RowID(tx.base + i)) {
            // Inserted since: live now, or inserted (and maybe deleted again) after the staging token.
            guard let o, tx.baseToken < lastToken else { continue }
            let live = table.row(for: o.id)
            guard live != nil || later?.inserted[o.id] != nil else { continue }
            let entity = live.flatMap { table.entity(at: $0) } ?? o.entity
            if reported.insert("\(o.id)\u{0}inserted").inserted {
                out.append(StoreConflict(type: schema.entities[entity].name, id: o.id, reason: .inserted,
                                         token: later?.inserted[o.id], stagedOn: tx.baseToken))
            }
        }
        return out
    }
}
