import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// Saving, rolling back and refreshing. A save visits the inserted, deleted
/// and changed objects only, and afterwards settles only the objects the
/// transaction touched: its cost follows what changed, not what was read.
extension ModelContext {
    /// Writes what the program changed since the context read each object
    /// (inserts, changed attributes and relationships, deletes) as one
    /// transaction; nothing if nothing changed. Properties the program did not
    /// change are not written, so another context's saved changes to them stay.
    ///
    /// - Throws: `StoreError.conflict` when a property this save changes was
    ///   changed by another save after this context read it, or an object it
    ///   changes, deletes or links to was deleted since. Nothing is written and
    ///   the pending changes stay: call `refresh` to take in what others saved
    ///   (pending changes are kept), then `save` again. `StoreError.pastModel`
    ///   when an object read from the past (`fetch(_:asOf:)`) was changed:
    ///   nothing is written, and `rollback()` drops the change. Also
    ///   `StoreError.denied` for a deny rule, and file-system errors.
    @discardableResult
    public func save(author: String = ProcessInfo.processInfo.environment["USER"] ?? "unknown") throws -> HistoryTransaction? {
        container.lock.lock()
        defer { container.lock.unlock() }
        // A commit that met damage to the image refused before writing; one
        // that committed and then met it while reading back keeps its
        // transaction, and what this context holds is read again.
        try container.checkOpen()
        var saved: HistoryTransaction?
        var committed = false
        try recoveringFromDamage {
            if committed { return }
            saved = try saveOnce(author: author)
            committed = true
        }
        return saved
    }

    private func saveOnce(author: String) throws -> HistoryTransaction? {
        if let m = misused.first {
            throw StoreError.modelOfAnotherContext(type: m.type, id: m.id, action: m.what)
        }
        if let t = objectOfAnotherContext() {
            throw StoreError.modelOfAnotherContext(type: "\(type(of: t))", id: t.persistentModelID, action: "linked")
        }
        if let error = changeToThePast() { throw error }
        let staged = try stagePendingChanges(forSave: true)
        // What to read back afterwards: what the transaction touched, and the
        // changed objects (an edit the save did not write, such as an inverse
        // the store keeps in its own order, must not linger in memory).
        var seen = Set<RowID>()
        let touched = (staged.tx.touchedObjects() + changed.values.compactMap { m in
            read[m.persistentModelID].map { (row: $0.row, id: m.persistentModelID) }
        }).filter { seen.insert($0.row).inserted }
        let t = try store.commit(staged.tx, author: author)
        inserted.removeAll()
        for m in deleted {
            identity[m.persistentModelID] = nil
            read[m.persistentModelID] = nil
        }
        deleted.removeAll()
        changed.removeAll()
        writtenSlots.removeAll()
        for m in staged.newModels {
            if let r = staged.newRows[ObjectIdentifier(m)] { read[m.persistentModelID] = ReadState(row: r, values: [], token: 0) }
        }
        settle(touched)
        return t
    }

    /// After a save: each known object the transaction touched reads as
    /// stored. A value the store changed (a pair kept in step, a reference
    /// to a deleted object dropped) replaces the program's: attributes at
    /// once, relationships as faults loaded on next access.
    private func settle(_ touched: [(row: RowID, id: String)]) {
        let token = store.lastToken
        for (row, id) in touched {
            guard let m = identity[id] else { continue }
            guard let o = store.table.object(at: row), o.id == id, let e = models.entityID(of: m), o.entity == e else {
                m.isDeleted = true  // by this save's cascade
                identity[id] = nil
                read[id] = nil
                continue
            }
            read[id] = ReadState(row: row, values: o.values, token: token)
            for (slot, p) in models.properties[e].enumerated() {
                switch p.kind {
                case .attribute(_, let get, let set):
                    guard let held = heldValue(m, get), held != o.values[slot] else { continue }
                    with(.filling) { if !set(m, o.values[slot]) { p.touch(m) } }
                case .relationship(_, _, let get, _):
                    guard let held = heldTargets(m, get), rows(of: held) != o.values[slot].rows else { continue }
                    with(.faulting) { p.touch(m) }
                }
            }
        }
    }

    /// The context's unsaved work as a transaction over the current store:
    /// new objects (inserted, or reached from a changed one), changed
    /// properties, deletes. `forSave` adds the checks a save needs (an object
    /// another save deleted, an id another save inserted).
    func stagePendingChanges(forSave: Bool) throws -> StagedChanges {
        var tx = store.transaction()
        var newRows: [ObjectIdentifier: RowID] = [:]
        func row(of m: PersistentModel) -> RowID? { read[m.persistentModelID]?.row ?? newRows[ObjectIdentifier(m)] }
        // New objects: the inserted ones, and new objects a changed one reaches.
        let deletedIDs = Set(deleted.map { ObjectIdentifier($0) })
        var pending = inserted
        for m in changed.values where read[m.persistentModelID] != nil {
            guard let e = models.entityID(of: m) else { continue }
            for p in models.properties[e] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                pending.append(contentsOf: (heldTargets(m, get) ?? []).filter { read[$0.persistentModelID] == nil })
            }
        }
        var newModels: [PersistentModel] = []
        var seen = Set<ObjectIdentifier>()
        while let m = pending.popLast() {
            guard seen.insert(ObjectIdentifier(m)).inserted, read[m.persistentModelID] == nil else { continue }
            // Another context's object (a save refuses it, naming it) is never taken in.
            if let owner = m.modelContext, owner !== self { continue }
            // A deleted object a relationship still reaches is not written back.
            if m.isDeleted {
                if forSave, let gone = m.deletedElsewhere { throw StoreError.conflict([gone]) }
                continue
            }
            guard let entity = models.entity(of: m) else {
                guard forSave else { continue }
                throw StoreError.modelNotInSchema("\(type(of: m))")
            }
            if forSave, store.table.row(for: m.persistentModelID) != nil {
                throw StoreError.conflict([StoreConflict(type: entity.name, id: m.persistentModelID, reason: .inserted,
                                                         token: nil, stagedOn: store.lastToken)])
            }
            newModels.append(m)
            if m.modelContext == nil { m.modelContext = self }
            identity[m.persistentModelID] = m
            var values = entity.emptyValues
            for (slot, p) in models.properties[entity.id].enumerated() {
                switch p.kind {
                case .attribute(_, let get, _): values[slot] = heldValue(m, get) ?? values[slot]
                case .relationship(_, _, let get, _): pending.append(contentsOf: heldTargets(m, get) ?? [])
                }
            }
            newRows[ObjectIdentifier(m)] = tx.insert(StoredObject(entity: entity.id, id: m.persistentModelID, values: values))
        }
        // Relationships of new objects: linked both ways, in the order the program gave.
        for m in newModels {
            guard let e = models.entityID(of: m), let r = newRows[ObjectIdentifier(m)] else { continue }
            for (slot, p) in models.properties[e].enumerated() {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                for t in heldTargets(m, get) ?? [] {
                    guard let tr = row(of: t) else { continue }
                    if let state = read[t.persistentModelID] { tx.assumeRead(tr, at: state.token) }
                    tx.link(r, slot: slot, to: tr)
                }
            }
        }
        // Changed objects: only the properties the program changed since it read them.
        let changedKnown = changed.values.compactMap { m -> (PersistentModel, ReadState)? in
            guard let state = read[m.persistentModelID], identity[m.persistentModelID] === m,
                  !deletedIDs.contains(ObjectIdentifier(m)) else { return nil }
            return (m, state)
        }
        for (m, state) in changedKnown.sorted(by: { $0.1.row < $1.1.row }) {
            guard let e = models.entityID(of: m) else { continue }
            let written = writtenSlots[ObjectIdentifier(m)] ?? []
            for (slot, p) in models.properties[e].enumerated() where isChanged(m, slot: slot, p, since: state) {
                if let later = state.loadedAt[slot] { tx.assumeRead(state.row, slot: slot, at: later) }
                switch p.kind {
                case .attribute(_, let get, _):
                    tx.assumeRead(state.row, at: state.token)
                    tx.setAttribute(state.row, slot: slot, to: get(m))
                case .relationship(_, _, let get, _):
                    guard written.contains(slot) else { continue }
                    tx.assumeRead(state.row, at: state.token)
                    let related = get(m).objects
                    for t in related { if let s = read[t.persistentModelID] { tx.assumeRead(s.row, at: s.token) } }
                    try tx.setRelationship(state.row, slot: slot, to: related.compactMap { row(of: $0) }, deletingDropped: false)
                }
            }
        }
        for m in deleted {
            guard let state = read[m.persistentModelID] else { continue }
            tx.assumeRead(state.row, at: state.token)
            try tx.delete(state.row)
        }
        // Every stored object the transaction touches (pairs kept in step and
        // cascades included) is judged from the token this context read it
        // at: the store refuses where another save changed it since.
        for row in tx.storedRowsTouched() {
            guard let id = store.table.recordedID(row), let state = read[id], state.row == row else { continue }
            tx.assumeRead(row, at: state.token)
        }
        return StagedChanges(tx: tx, newRows: newRows, newModels: newModels)
    }

    struct StagedChanges {
        var tx: TransactionBuilder
        var newRows: [ObjectIdentifier: RowID]
        var newModels: [PersistentModel]
    }

    /// Forgets everything: unsaved inserts, deletes and changes (as
    /// `rollback()`), and every object this context holds. Objects the
    /// program still holds belong to no context afterwards; fetch again to
    /// read the store as it is now (Core Data's `reset()`).
    ///
    /// ```swift
    /// context.reset()
    /// let fresh = try context.fetch(FetchDescriptor<Trip>())
    /// ```
    public func reset() {
        container.lock.lock()
        defer { container.lock.unlock() }
        rollback()
        for m in identity.values where m.modelContext === self { m.modelContext = nil }
        identity = IdentityMap()
        read.removeAll()
        changed.removeAll()
        writtenSlots.removeAll()
    }

    /// Forgets unsaved inserts, deletes and changes: every changed object
    /// reads as stored now.
    public func rollback() {
        container.lock.lock()
        defer { container.lock.unlock() }
        misused.removeAll()
        for m in inserted {
            identity[m.persistentModelID] = nil
            changed[ObjectIdentifier(m)] = nil
            m.modelContext = nil
        }
        inserted.removeAll()
        for m in deleted { m.isDeleted = false }
        deleted.removeAll()
        let token = store.lastToken
        for m in changed.values {
            let id = m.persistentModelID
            guard let state = read[id], let o = store.table.object(at: state.row), o.id == id, let e = models.entityID(of: m) else {
                identity[id] = nil
                read[id] = nil
                continue
            }
            read[id] = ReadState(row: state.row, values: o.values, token: token)
            with(.faulting) { for p in models.properties[e] { p.touch(m) } }
        }
        changed.removeAll()
        writtenSlots.removeAll()
        for past in pastContexts { past.context?.rollback() }
    }

    /// Takes in what other contexts and saves changed since this context read
    /// the object: properties the program has not changed here get the stored
    /// values; pending changes stay, and the next `save` writes them over what
    /// the others saved (the way to settle a conflict). An object deleted by
    /// another save is forgotten, with its pending changes.
    public func refresh(_ model: PersistentModel) {
        container.lock.lock()
        defer { container.lock.unlock() }
        let id = model.persistentModelID
        guard let state = read[id], identity[id] === model, let e = models.entityID(of: model) else { return }
        guard let o = store.table.object(at: state.row), o.id == id else {
            forget(model)
            return
        }
        // Related objects deleted elsewhere leave the relationships, pending or not.
        for p in models.properties[e] {
            guard case .relationship(_, _, let get, _) = p.kind else { continue }
            for t in heldTargets(model, get) ?? [] where isDeletedInStore(t) { forget(t) }
        }
        for (slot, p) in models.properties[e].enumerated() where !isChanged(model, slot: slot, p, since: state) {
            switch p.kind {
            case .attribute(_, let get, let set):
                guard let held = heldValue(model, get), held != o.values[slot] else { continue }
                with(.filling) { if !set(model, o.values[slot]) { p.touch(model) } }
            case .relationship:
                guard state.values[slot] != o.values[slot] else { continue }
                with(.faulting) { p.touch(model) }
            }
        }
        read[id] = ReadState(row: state.row, values: o.values, token: store.lastToken)
    }

    /// `refresh` for every object the context knows.
    public func refreshAll() {
        container.lock.lock()
        defer { container.lock.unlock() }
        for m in Array(identity.values) { refresh(m) }
    }

    private func isDeletedInStore(_ m: PersistentModel) -> Bool {
        guard let state = read[m.persistentModelID], identity[m.persistentModelID] === m else { return false }
        return store.table.recordedID(state.row) != m.persistentModelID || store.table.entity(at: state.row) == nil
    }

    /// Drops an object another save deleted: from the identity map, from
    /// every loaded relationship of the objects this context knows, and from pending deletes.
    private func forget(_ m: PersistentModel) {
        let id = m.persistentModelID
        if let state = read[id] {
            m.deletedElsewhere = StoreConflict(type: models.entity(of: m)?.name ?? "\(type(of: m))", id: id,
                                               reason: .deleted, token: nil, stagedOn: state.token)
        }
        m.isDeleted = true
        identity[id] = nil
        read[id] = nil
        changed[ObjectIdentifier(m)] = nil
        writtenSlots[ObjectIdentifier(m)] = nil
        deleted.removeAll { $0 === m }
        for other in identity.values {
            guard let e = models.entityID(of: other) else { continue }
            for p in models.properties[e] {
                guard case .relationship(let r, _, let get, let set) = p.kind,
                      let held = heldTargets(other, get), held.contains(where: { $0 === m }) else { continue }
                with(.filling) { set(other, r.isToMany ? .many(held.filter { $0 !== m }) : .one(nil)) }
            }
        }
    }
}
