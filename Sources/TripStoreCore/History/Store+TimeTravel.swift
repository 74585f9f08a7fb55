import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A point in a store's history: a token, or a time, meaning the last token
/// committed at or before it (`.time(ISOTime("2026-11-16T09:00:00Z")!)`, or
/// `.time(ISOTime(seconds: date.timeIntervalSinceReferenceDate))`).
public enum PointInTime: Sendable, Equatable {
    case token(Int64)
    case time(ISOTime)
}

/// Objects at an earlier token, worked out backwards from now.
package struct Rewinding {
    /// The objects whose state then differs from now (every object, once a
    /// migration was crossed).
    var states: [String: PastState] = [:]
    /// The schema of that time, once the walk went back across a migration
    /// (nil: the store's own).
    var schema: Schema?
}

/// One object at an earlier token, as retained history rebuilds it.
package enum PastState: Sendable {
    /// The object did not exist then.
    case absent
    /// It existed: `base` (the object as it is now, when it still exists)
    /// with `data` laid over it (values as JSON, relationships as references).
    /// Keeping the current object as it is, rather than as JSON, spares
    /// reading every object it refers to.
    case present(type: String, base: StoredObject?, data: [JSONMember])
}

extension Store {
    /// The tokens `--as-of` can reach: from just before the oldest retained
    /// transaction (0, the empty store, while token 1 is retained) to the last.
    public var reachableTokens: ClosedRange<Int64> {
        guard let oldest = oldestRetainedToken else { return lastToken...lastToken }
        return (oldest - 1)...lastToken
    }

    /// The last token committed at or before `time` (seconds since the
    /// reference date), or nil when that is before every reachable token.
    /// Reads only each history line's leading token and time.
    public func token(at time: Double) throws -> Int64? {
        try token(at: ISOTime(seconds: time))
    }

    /// The last token committed at or before `time`, compared exactly (text
    /// may be finer than a commit time's `Double`), or nil when that is
    /// before every reachable token.
    public func token(at time: ISOTime) throws -> Int64? {
        guard let last = try lastCommitTime() else { return lastToken }  // no history: only the current state
        if time.isAtOrAfter(last) { return lastToken }
        // The journal's transactions are in memory, and newer than the snapshot's.
        if let t = historyLog.loaded.last(where: { time.isAtOrAfter($0.timestamp) }) { return t.token }
        // The snapshot's own token was committed when its trailer says, even
        // when a prune dropped its history line; so was the state just
        // before the oldest retained transaction, the oldest reachable.
        let oldestState = oldestRetainedToken.flatMap { oldest in
            historyLog.oldestReachableCommit.flatMap { time.isAtOrAfter($0) ? oldest - 1 : nil }
        }
        let snapshotState = historyLog.snapshotLastCommit.flatMap { time.isAtOrAfter($0) ? snapshotToken : nil } ?? oldestState
        guard let pending = historyLog.pending else { return snapshotState }
        var bytes = [UInt8](repeating: 0, count: pending.bytes.count)
        guard bytes.withUnsafeMutableBytes({ FileIO.read(pending.fd, into: $0, at: pending.bytes.lowerBound) }) == bytes.count else {
            throw StoreError.damaged(file: pending.file, line: nil, detail: "the history could not be read again", repairable: false)
        }
        var found: Int64?
        var unreadable = false
        bytes.withUnsafeBufferPointer { buf in
            JSONLines.forEachLine(in: buf) { _, range, _ in
                let line = UnsafeBufferPointer(rebasing: buf[range])
                guard let token = Self.leadingToken(line), let at = Self.leadingTimestamp(line) else {
                    unreadable = true
                    return
                }
                if time.isAtOrAfter(at) { found = token }
            }
        }
        if unreadable { return try checkedHistory().last(where: { time.isAtOrAfter($0.timestamp) })?.token }
        return found ?? snapshotState
    }

    /// Checks that `token` is reachable, naming the range when it is not.
    func checkReachable(_ token: Int64) throws(StoreError) {
        let r = reachableTokens
        guard r.contains(token) else {
            throw .tokenOutOfReach(token: token, reachable: r, oldestRetained: oldestRetainedToken)
        }
    }

    /// The token a point in time names: a token as it is (once checked to be
    /// reachable), a time as the last token committed at or before it.
    public func token(at point: PointInTime) throws -> Int64 {
        switch point {
        case .token(let t):
            try checkReachable(t)
            return t
        case .time(let time):
            guard let t = try token(at: time) else {
                // The state before the oldest retained transaction, where a prune kept its time.
                let boundary = oldestRetainedToken.flatMap { t in historyLog.oldestReachableCommit.map { (token: t - 1, timestamp: $0) } }
                let earliest = boundary ?? history.first.map { (token: $0.token, timestamp: $0.timestamp) }
                throw StoreError.timeOutOfReach(time: time, reachable: reachableTokens, earliest: earliest)
            }
            return t
        }
    }

    /// The store as it was right after `point`, as a separate read-only value
    /// (its state is `.past`): queries, gets and exports on it answer as of
    /// then, and every write on it throws. This store is left as it is.
    ///
    /// ```swift
    /// let then = try store.past(at: .token(41))
    /// let rows = try then.run(Query.parse("is BusinessTrip", schema: then.schema)).rows
    /// ```
    /// - Throws: `StoreError.tokenOutOfReach` / `.timeOutOfReach` naming what
    ///   retained history reaches; what `Store.open` throws.
    public func past(at point: PointInTime) throws -> Store {
        let token = try token(at: point)
        let past: Store
        if try files.folder.isEmpty || !files.exists() {
            // Nothing was ever written: the past is the empty store.
            past = Store(folder: files.folder, schema: schema, access: .read, options: options)
        } else {
            past = try Store.open(files.folder, schema: schema, access: .read, options: options)
        }
        return try past.rewound(to: token)
    }

    /// Opens the store in `folder` as it was right after `point`: one open
    /// and `past(at:)` in a single step, for a program that wants only the past.
    /// - Throws: what `open` and `past(at:)` throw.
    public static func open(_ folder: String, schema: Schema, asOf point: PointInTime,
                            options: StoreOptions = StoreOptions()) throws -> Store {
        let store = try open(folder, schema: schema, access: .read, options: options)
        do {
            return try store.rewound(to: try store.token(at: point))
        } catch {
            // Rows of a damaged piece of the image read as empty: the past
            // cannot be rebuilt from them, but the JSON is sound.
            let damage = store.imageDamage, image = store.imagePath
            store.close()
            if let damage { throw StoreError.imageDamaged(file: image, detail: damage) }
            throw error
        }
    }

    /// The objects whose state at `token` differs from now, worked out by
    /// undoing each later transaction, newest first: an insert undone is
    /// `.absent`, a delete brings back its kept values, an update its old
    /// ones, a migration takes every object back to the schema before it.
    /// Cost: proportional to the changes after `token`, never to the store,
    /// unless the walk goes back across a migration.
    package func pastStates(at token: Int64) throws -> Rewinding {
        try checkReachable(token)
        var r = Rewinding()
        let h = try history(after: token)
        for t in h.reversed() {
            try undo(t, in: &r, strict: true)
        }
        // An object whose history was redacted shows its preserved values only.
        let then = r.schema ?? schema
        for t in h { for c in t.changes where c.kind == .redact {
            guard let state = r.states[c.id] ?? currentState(c.id), case .present(let type, _, _) = state else { continue }
            let kept = keptPart(of: Change(kind: .delete, type: type, id: c.id, deletedValues: fullData(state)), in: then).deletedValues ?? []
            r.states[c.id] = .present(type: type, base: nil, data: kept)
        } }
        return r
    }

    /// Each insert's envelope right after its transaction (for `--format feed`
    /// and `history --id`), for the transactions in `wanted` (tokens after
    /// `since`), keyed by token and id: one walk back from now. An envelope
    /// recorded before a migration has the names of its time.
    public func insertEnvelopes(after since: Int64, wanted: Set<Int64>,
                                 only id: String? = nil) throws -> [Int64: [String: JSONValue]] {
        if let id, let own = historyLog.indexedLookup(HistoryFilter(since: since, id: id)),
           let migrations = historyLog.indexedLookup(HistoryFilter(since: since, kinds: [.migrate])) {
            // One object's envelopes depend on its own changes and the migrations only.
            return try insertEnvelopes(walking: (own + migrations).sorted { $0.token < $1.token }, wanted: wanted) { _, inserted in inserted == id }
        }
        return try insertEnvelopes(after: since, wanted: wanted) { _, inserted in id == nil || inserted == id }
    }

    /// `insertEnvelopes` of the inserts `including` names (by token and id).
    func insertEnvelopes(after since: Int64, wanted: Set<Int64>,
                         including: (Int64, String) -> Bool) throws -> [Int64: [String: JSONValue]] {
        try insertEnvelopes(walking: try history(after: since), wanted: wanted, including: including)
    }

    /// `insertEnvelopes` by a walk back through `transactions` (oldest first).
    private func insertEnvelopes(walking transactions: [HistoryTransaction], wanted: Set<Int64>,
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
                                                          reachable: t.token...lastToken)
                }
                r.states[c.id] = .present(type: c.type, base: nil, data: values)
            case .update:
                guard case .present(let type, let base, var data)? = r.states[c.id] ?? currentState(c.id) else {
                    if !strict { continue }
                    throw StoreError.damaged(file: files.folder, line: nil,
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
                break
            case .migrate:
                guard let m = c.migration else { continue }
                try undoMigration(m, token: t.token, in: &r)
            }
        }
    }

    /// An object as it is now; nil when there is no such object.
    func currentState(_ id: String) -> PastState? {
        guard let row = table.row(for: id), let o = table.object(at: row) else { return nil }
        return .present(type: schema.entities[o.entity].name, base: o, data: [])
    }

    /// Every value of a present state as JSON (its envelope's `data`; a
    /// state with a `base` is in the store's own schema).
    func fullData(_ state: PastState) -> [JSONMember] {
        guard case .present(_, let base, let data) = state else { return [] }
        guard let base else { return data }
        var all = Tombstone.allValues(of: base, schema: schema, lookup: table)
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
    private func rewound(to token: Int64) throws -> Store {
        guard state == .reading else { throw StoreError.notWritable(.commit, state: state) }
        let rewinding = try pastStates(at: token)
        if let older = rewinding.schema { return try rebuilt(at: token, from: rewinding, schema: older) }
        let states = rewinding.states
        state = .past(token: token)
        guard !states.isEmpty else { return self }
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: files.folder, line: nil, detail: "history does not rebuild token \(token): \(detail)", repairable: false)
        }
        var removals: [RowID] = []
        // Each object as it was, its references by id until every row is known.
        var rebuilt: [(row: RowID?, object: StoredObject, links: [(slot: Int, ids: [String])])] = []
        for id in states.keys.sorted() {
            let row = table.row(for: id)
            guard case .present(let type, let base, let data)? = states[id] else {
                if let row { removals.append(row) }
                continue
            }
            guard let entity = schema.entity(named: type) else { throw damaged("'\(id)' is of unknown type '\(type)'") }
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
            if let row, table.entity(at: row) == entity.id {
                rebuilt.append((row, o, links))
            } else {
                if let row { removals.append(row) }
                rebuilt.append((nil, o, links))
            }
        }
        // Rows for the objects brought back, so that references can name them.
        var newRows: [String: RowID] = [:]
        var next = table.rowCount
        for r in rebuilt where r.row == nil {
            newRows[r.object.id] = RowID(next)
            next += 1
        }
        let removed = Set(removals)
        func row(for id: String) -> RowID? {
            if let r = newRows[id] { return r }
            guard let r = table.row(for: id), !removed.contains(r) else { return nil }
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
                guard let rel = schema.entities[o.entity].properties[slot].relationship else { continue }
                o.values[slot] = rel.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null)
            }
            objects.append((existing, o))
        }
        for r in removals {
            if let old = table.object(at: r) {
                indexes.remove(r, old)
                table.oneWay.update(row: r, old: old, new: nil)
            }
            table.remove(r)
        }
        for (existing, o) in objects {
            if let existing, let old = table.object(at: existing) {
                indexes.update(existing, old: old, new: o)
                table.oneWay.update(row: existing, old: old, new: o)
                table.set(o, at: existing)
                touched.append(existing)
            } else if let r = newRows[o.id] {
                table.set(o, at: r)
                indexes.add(r, o)
                table.oneWay.update(row: r, old: nil, new: o)
                touched.append(r)
            }
        }
        if let problem = table.referenceProblems(of: touched, limit: 1).first { throw damaged(problem) }
        return self
    }
}
