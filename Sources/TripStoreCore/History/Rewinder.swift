import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Works out the past from now: each transaction after a token undone,
/// newest first, into the states of the objects it touched (`Rewinding`),
/// and a store freshly opened to read turned into the store as it was.
/// `Store.past(at:)`, the feed's insert envelopes and `history --id` use it.
struct Rewinder {
    let store: Store

    init(_ store: Store) { self.store = store }

    /// The objects whose state at `token` differs from now, worked out by
    /// undoing each later transaction, newest first: an insert undone is
    /// `.absent`, a delete brings back its kept values, an update its old
    /// ones, a migration takes every object back to the schema before it.
    /// Cost: proportional to the changes after `token`, never to the store,
    /// unless the walk goes back across a migration.
    package func pastStates(at token: Int64) throws -> Rewinding {
        try store.checkReachable(token)
        var r = Rewinding()
        let h = try store.history(after: token)
        for t in h.reversed() {
            try undo(t, in: &r, strict: true)
        }
        // An object whose history was redacted shows its preserved values only.
        let then = r.schema ?? store.schema
        for t in h { for c in t.changes where c.kind == .redact {
            guard let state = r.states[c.id] ?? currentState(c.id), case .present(let type, _, _) = state else { continue }
            let kept = Redactor(store).keptPart(of: Change(kind: .delete, type: type, id: c.id, deletedValues: fullData(state)), in: then).deletedValues ?? []
            r.states[c.id] = .present(type: type, base: nil, data: kept)
        } }
        return r
    }

    /// `insertEnvelopes` of the inserts `including` names (by token and id).
    func insertEnvelopes(after since: Int64, wanted: Set<Int64>,
                         including: (Int64, String) -> Bool) throws -> [Int64: [String: JSONValue]] {
        try insertEnvelopes(walking: try store.history(after: since), wanted: wanted, including: including)
    }

    /// `insertEnvelopes` by a walk back through `transactions` (oldest first).
    func insertEnvelopes(walking transactions: [HistoryTransaction], wanted: Set<Int64>,
                                 including: (Int64, String) -> Bool) throws -> [Int64: [String: JSONValue]] {
        var r = Rewinding()
        var out: [Int64: [String: JSONValue]] = [:]
        let earliest = wanted.min()
        for t in transactions.reversed() {
            if wanted.contains(t.token) {
                for c in t.changes where c.kind == .insert && including(t.token, c.id) {
                    out[t.token, default: [:]][c.id] = envelope(c.id, in: r.states)
                }
            }
            // Nothing before the earliest wanted token is asked for.
            if t.token == earliest { break }
            try undo(t, in: &r, strict: false)
        }
        return out
    }

    /// Undoes one transaction in `r`. A delete recorded before deleted
    /// values were kept cannot be undone: `strict` makes that an error,
    /// otherwise the object's earlier state is unknown (absent).
    func undo(_ t: HistoryTransaction, in r: inout Rewinding, strict: Bool) throws {
        for c in t.changes.reversed() {
            switch c.kind {
            case .insert:
                r.states[c.id] = .absent
            case .delete:
                guard let values = c.deletedValues else {
                    if !strict { r.states[c.id] = .absent; continue }
                    throw StoreError.deletedValuesNotKept(token: t.token - 1, id: c.id, deletedAt: t.token,
                                                          reachable: t.token...store.lastToken)
                }
                r.states[c.id] = .present(type: c.type, base: nil, data: values)
            case .update:
                guard case .present(let type, let base, var data)? = r.states[c.id] ?? currentState(c.id) else {
                    if !strict { continue }
                    throw StoreError.damaged(file: store.files.folder, line: nil,
                                             detail: "history token \(t.token) updates '\(c.id)', which does not exist after it", repairable: false)
                }
                for v in c.values {
                    if let k = data.firstIndex(where: { $0.key == v.name }) {
                        data[k].value = v.old
                    } else {
                        data.append(JSONMember(v.name, v.old))
                    }
                }
                r.states[c.id] = .present(type: type, base: base, data: data)
            case .redact:
                // Before its redaction an object shows its preserved values
                // only: what history no longer holds is unknown, not its value now.
                guard let state = r.states[c.id] ?? currentState(c.id), case .present(let type, _, _) = state else { continue }
                let kept = Redactor(store).keptPart(of: Change(kind: .delete, type: type, id: c.id, deletedValues: fullData(state)),
                                                    in: r.schema ?? store.schema).deletedValues ?? []
                r.states[c.id] = .present(type: type, base: nil, data: kept)
            case .migrate:
                guard let m = c.migration else { continue }
                try undoMigration(m, token: t.token, in: &r)
            }
        }
    }

    /// An object as it is now; nil when there is no such object.
    func currentState(_ id: String) -> PastState? {
        guard let row = store.table.row(for: id), let o = store.table.object(at: row) else { return nil }
        return .present(type: store.schema.entities[o.entity].name, base: o, data: [])
    }

    /// Every value of a present state as JSON (its envelope's `data`; a
    /// state with a `base` is in the store's own schema).
    func fullData(_ state: PastState) -> [JSONMember] {
        guard case .present(_, let base, let data) = state else { return [] }
        guard let base else { return data }
        var all = Tombstone.allValues(of: base, schema: store.schema, lookup: store.table)
        for m in data {
            if let k = all.firstIndex(where: { $0.key == m.key }) { all[k].value = m.value } else { all.append(m) }
        }
        return all
    }

    /// One object's envelope at `token` (nil when it did not exist then), from `states`.
    package func envelope(_ id: String, in states: [String: PastState]) -> JSONValue? {
        guard let state = states[id] ?? currentState(id), case .present(let type, _, _) = state else { return nil }
        return .object([JSONMember("type", .string(type)), JSONMember("id", .string(id)), JSONMember("data", .object(fullData(state)))])
    }

    /// Turns a store freshly opened to read, in memory only, into the store
    /// as it was right after `token`; it is `.past` from then on, and no
    /// write is possible. Only `past(at:)` and `open(_:schema:asOf:)` call
    /// this, on a store of their own: the live store is never rewound.
    /// Before a migration, the past is a store of the schema of its time.
    func rewound(to token: Int64) throws -> Store {
        guard store.state == .reading else { throw StoreError.notWritable(.commit, state: store.state) }
        let rewinding = try pastStates(at: token)
        if let older = rewinding.schema { return try rebuilt(at: token, from: rewinding, schema: older) }
        let states = rewinding.states
        store.state = .past(token: token)
        guard !states.isEmpty else { return store }
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: store.files.folder, line: nil, detail: "history does not rebuild token \(token): \(detail)", repairable: false)
        }
        var removals: [RowID] = []
        // Each object as it was, its references by id until every row is known.
        var rebuilt: [(row: RowID?, object: StoredObject, links: [(slot: Int, ids: [String])])] = []
        for id in states.keys.sorted() {
            let row = store.table.row(for: id)
            guard case .present(let type, let base, let data)? = states[id] else {
                if let row { removals.append(row) }
                continue
            }
            guard let entity = store.schema.entity(named: type) else { throw damaged("'\(id)' is of unknown type '\(type)'") }
            var values = base.flatMap { $0.entity == entity.id ? $0.values : nil } ?? entity.emptyValues
            var links: [(slot: Int, ids: [String])] = []
            for m in data {
                guard let p = entity.property(named: m.key) else { throw damaged("\(type) has no property '\(m.key)'") }
                switch p.kind {
                case .attribute(let a):
                    do {
                        values[p.slot] = try ValueDecoding.decode(m.value, as: a.type, optional: true)  // redacted values are nil
                    } catch {
                        throw damaged("'\(id)'.\(m.key): \(error.message)")
                    }
                case .relationship:
                    guard let ids = ValueDecoding.referenceIDs(m.value) else { throw damaged("'\(id)'.\(m.key) holds something other than references") }
                    links.append((p.slot, ids))
                }
            }
            let o = StoredObject(entity: entity.id, id: id, values: values)
            if let row, store.table.entity(at: row) == entity.id {
                rebuilt.append((row, o, links))
            } else {
                if let row { removals.append(row) }
                rebuilt.append((nil, o, links))
            }
        }
        // Rows for the objects brought back, so that references can name them.
        var newRows: [String: RowID] = [:]
        var next = store.table.rowCount
        for r in rebuilt where r.row == nil {
            newRows[r.object.id] = RowID(next)
            next += 1
        }
        let removed = Set(removals)
        func row(for id: String) -> RowID? {
            if let r = newRows[id] { return r }
            guard let r = store.table.row(for: id), !removed.contains(r) else { return nil }
            return r
        }
        var objects: [(row: RowID?, object: StoredObject)] = []
        var touched: [RowID] = []
        for (existing, o, links) in rebuilt {
            var o = o
            for (slot, ids) in links {
                var rows: [RowID] = []
                for t in ids {
                    guard let r = row(for: t) else { throw damaged("'\(o.id)' refers to '\(t)', which did not exist then") }
                    rows.append(r)
                }
                guard let rel = store.schema.entities[o.entity].properties[slot].relationship else { continue }
                o.values[slot] = rel.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null)
            }
            objects.append((existing, o))
        }
        for r in removals {
            if let old = store.table.object(at: r) {
                store.indexes.remove(r, old)
                store.table.oneWay.update(row: r, old: old, new: nil)
            }
            store.table.remove(r)
        }
        for (existing, o) in objects {
            if let existing, let old = store.table.object(at: existing) {
                store.indexes.update(existing, old: old, new: o)
                store.table.oneWay.update(row: existing, old: old, new: o)
                store.table.set(o, at: existing)
                touched.append(existing)
            } else if let r = newRows[o.id] {
                store.table.set(o, at: r)
                store.indexes.add(r, o)
                store.table.oneWay.update(row: r, old: nil, new: o)
                touched.append(r)
            }
        }
        if let problem = store.table.referenceProblems(of: touched, limit: 1).first { throw damaged(problem) }
        return store
    }
}
