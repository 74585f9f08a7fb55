import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension TransactionBuilder {
    /// This transaction on top of the table as it is now, for one staged
    /// before later commits that `Store.conflicts(in:)` found compatible with
    /// it. What the caller set wins (nobody changed it since); objects it
    /// inserted get the rows after the later commits' ones; relationship sides
    /// it changed only to keep pairs in step get its additions and removals
    /// merged into what the later commits left there.
    func rebased(onto lastToken: Int64) throws(StoreError) -> TransactionBuilder {
        var fresh = TransactionBuilder(table: table, baseToken: lastToken)
        let shift = RowID(fresh.base - base)
        let oldBase = base
        func map(_ r: RowID) -> RowID { Int(r) >= oldBase ? r + shift : r }
        func map(_ v: Value) -> Value {
            switch v {
            case .toOne(let r): return .toOne(map(r))
            case .toMany(let l): return .toMany(l.map(map))
            default: return v
            }
        }
        for o in newObjects {
            var m = o
            if let values = o?.values { m?.values = values.map(map) }
            fresh.newObjects.append(m)
            if let m { fresh.newRowByID[m.id] = RowID(fresh.base + fresh.newObjects.count - 1) }
        }
        for row in changedOrder where !deleted.contains(row) {
            guard let ours = changed[row], let staged = originals[row], let theirs = table.object(at: row) else { continue }
            var merged = theirs
            let entity = schema.entities[theirs.entity]
            for p in entity.properties {
                let s = p.slot
                let o = ours.values[s], b = staged.values[s], t = theirs.values[s]
                if o == b { continue }
                if t == b || explicitSlots.contains(Int64(row) << 16 | Int64(s)) {
                    merged.values[s] = map(o)
                    continue
                }
                // Both changed a side that this transaction changed only to keep a pair in step.
                guard p.relationship?.isToMany == true else {
                    throw .conflict([StoreConflict(type: entity.name, id: ours.id, reason: .changed(property: p.name),
                                                   token: nil, stagedOn: baseToken)])
                }
                let removed = Set(b.rows).subtracting(o.rows)
                let kept = t.rows.filter { !removed.contains($0) }
                let before = Set(b.rows)
                let added = o.rows.filter { !before.contains($0) }.map(map).filter { !kept.contains($0) }
                merged.values[s] = .toMany(kept + added)
            }
            fresh.changed[row] = merged
            fresh.originals[row] = theirs
            fresh.changedOrder.append(row)
        }
        for row in deletedOrder {
            fresh.deleted.insert(map(row))
            fresh.deletedOrder.append(map(row))
        }
        fresh.denyChecks = denyChecks.map { (map($0.row), $0.entity, $0.id, $0.slot) }
        fresh.explicitSlots = explicitSlots
        fresh.deleteRequests = deleteRequests
        fresh.linkTargets = linkTargets
        fresh.missingTargets = missingTargets.map { (map($0.row), $0.slot, map($0.target)) }
        for (target, referrers) in addedOneWay {
            fresh.addedOneWay[map(target)] = referrers.map { Referrer(row: map($0.row), slot: Int($0.slot)) }
        }
        // Later commits may have pointed one-way references at what this deletes.
        for row in fresh.deletedOrder where Int(row) < fresh.base { fresh.removeOneWayReferences(to: row) }
        return fresh
    }
}
