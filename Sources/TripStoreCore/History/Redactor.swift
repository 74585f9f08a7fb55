import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Removes attribute values from retained history on purpose (`history
/// --redact`), and finds the ids a redaction by query names.
public struct Redactor {
    public let store: Store

    /// Works on `store`.
    public init(_ store: Store) { self.store = store }

    /// Forgets on purpose: removes from retained history every attribute
    /// value of these objects (old and new values of updates, deleted
    /// values) except those marked preserve-on-deletion. References stay, so
    /// that the history of the objects they link to still rewinds whole; a
    /// live object's current values stay. Records a transaction with one
    /// `redact` change per id (who, which ids, when; not the values) and
    /// commits it by writing a snapshot, so that no file of the store holds
    /// the removed values afterwards.
    ///
    /// - Throws: `StoreError.notFound` for an id that is neither live nor in
    ///   retained history; `.notWritable` on a store not open for writing; what `compact` throws
    ///   (the files and memory are then as before).
    @discardableResult
    public func redact(ids: [String], author: String, timestamp: Double? = nil) throws -> HistoryTransaction {
        try store.checkWritable(.redact)
        // A snapshot that fails its checksum is named before a line of it that does not read.
        let saved = try store.whileCheckingSnapshotChecksum { try store.checkedHistory() }
        // Each object's type as it is named now: a deleted object's last
        // recorded type, carried across later migrations that renamed it.
        var types: [String: String] = [:]
        let plans = try Rewinder(store).migrationPlans()
        for t in saved {
            for c in t.changes {
                if c.kind == .migrate, let plan = plans[t.token] {
                    types = types.mapValues { name in
                        plan.from.entity(named: name).flatMap { plan.mappings[$0.id] }.map { plan.to.entities[$0.entity].name } ?? name
                    }
                } else {
                    types[c.id] = c.type
                }
            }
        }
        var unique: [String] = []
        for raw in ids {
            let id = Identifier.normalized(raw)
            if let row = store.table.row(for: id), let e = store.table.entity(at: row) { types[id] = store.schema.entities[e].name }
            guard types[id] != nil else { throw StoreError.notFound(id: id) }
            if !unique.contains(id) { unique.append(id) }
        }
        let redacted = Set(unique)
        var rewritten = saved
        // Newest first, so that each change is read with the schema of its time.
        var then = store.schema
        for i in rewritten.indices.reversed() {
            for k in rewritten[i].changes.indices {
                let c = rewritten[i].changes[k]
                if var m = c.migration {
                    // What a migration kept of these objects' old values, under the schema before it.
                    let before = m.previous.flatMap { try? SchemaFile.read(value: $0) }
                    let plan = before.map { SchemaMigration(from: $0, to: then) }
                    func typeBefore(_ name: String) -> String? {
                        if before?.entity(named: name) != nil { return name }
                        guard let plan, let e = then.entity(named: name),
                              let o = plan.mappings.firstIndex(where: { $0?.entity == e.id }) else { return nil }
                        return plan.from.entities[o].name
                    }
                    m.oldValues = m.oldValues.compactMap { member in
                        guard redacted.contains(member.key), case .object(let values) = member.value else { return member }
                        let type = types[member.key].flatMap(typeBefore)
                        let kept = keptPart(of: Change(kind: .delete, type: type ?? "", id: member.key, deletedValues: values),
                                            in: before).deletedValues ?? []
                        return kept.isEmpty ? nil : JSONMember(member.key, .object(kept))
                    }
                    rewritten[i].changes[k].migration = m
                    if let before { then = before }
                } else if redacted.contains(c.id) && c.kind != .redact {
                    rewritten[i].changes[k] = keptPart(of: c, in: then)
                }
            }
        }
        let t = HistoryTransaction(token: store.lastToken + 1, timestamp: max(timestamp ?? Store.now(), try store.lastCommitTime() ?? 0), author: author,
                                   changes: unique.map { Change(kind: .redact, type: types[$0] ?? "", id: $0) })
        let savedToken = store.lastToken
        store.history = rewritten + [t]
        store.lastToken = t.token
        do {
            try store.compact()
        } catch {
            store.history = saved
            store.lastToken = savedToken
            throw error
        }
        // A compaction running without the lock wrote the values before
        // this: its files go now (it finds itself overtaken when it takes the lock).
        for f in (try? store.files.list().temporary) ?? [] where LocklessCompaction.isItsFile(f) { FileIO.unlink(f) }
        return t
    }

    /// What history keeps of a redacted object's change: preserved attributes
    /// and references, as `schema` (the one of the change's time) marks them.
    func keptPart(of c: Change, in schema: Schema? = nil) -> Change {
        guard let entity = (schema ?? store.schema).entity(named: c.type) else { return Change(kind: c.kind, type: c.type, id: c.id) }
        func keep(_ name: String) -> Bool {
            guard let p = entity.property(named: name) else { return false }
            if p.relationship != nil { return true }
            return p.attribute?.preservesOnDeletion ?? false
        }
        var out = c
        out.redacted = true
        out.values = c.values.filter { keep($0.name) }
        out.deletedValues = c.deletedValues.map { $0.filter { keep($0.key) } }
        return out
    }

    /// The ids of the objects, live or deleted, whose last known state
    /// matches `query` (`history redact --where`). A deleted object's last
    /// state is what its delete kept; its references are left out, so a
    /// predicate over relationships sees them empty.
    public func idsMatching(_ query: Query) throws -> [String] {
        var ids = try store.run(query).rows.compactMap { store.table.id(at: $0) }
        // Each deleted object's last state, carried forward across later
        // migrations so that the predicate reads it with today's names.
        var lastDelete: [String: (type: String, data: [JSONMember])] = [:]
        let plans = try Rewinder(store).migrationPlans()
        for t in try store.checkedHistory() {
            for c in t.changes {
                if c.kind == .delete {
                    lastDelete[c.id] = (c.type, c.deletedValues ?? c.tombstone)
                } else if c.kind == .insert {
                    lastDelete[c.id] = nil
                } else if c.kind == .migrate, let plan = plans[t.token] {
                    lastDelete = lastDelete.compactMapValues { Rewinder.forward(type: $0.type, data: $0.data, through: plan) }
                }
            }
        }
        let gone = lastDelete.filter { store.table.row(for: $0.key) == nil }
        guard !gone.isEmpty else { return ids }
        let past = Store.empty(schema: store.schema)
        for id in gone.keys.sorted() {
            guard let c = gone[id], let e = store.schema.entity(named: c.type) else { continue }
            let data = c.data.filter { e.property(named: $0.key)?.attribute != nil }
            let envelope = JSONValue.object([JSONMember("type", .string(c.type)), JSONMember("id", .string(id)), JSONMember("data", .object(data))])
            var decoded: [DecodedObject] = []
            var decoder = EnvelopeDecoder(schema: store.schema)
            decoder.allowMissingAttributes = true
            guard (try? decoder.decode(envelope, at: nil, into: &decoded)) != nil, let d = decoded.first else { continue }
            let row = past.table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
            past.indexes.add(row, StoredObject(entity: d.entity, id: d.id, values: d.values))
        }
        ids += try past.run(query).rows.compactMap { past.table.id(at: $0) }
        return ids
    }
}
