import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Time travel across a migration: before it, objects have the names,
/// types and values of the schema of their time.
extension Rewinder {
    /// Takes every object in `r` back across the migration `m` (committed
    /// at `token`): renamed back, converted back, its removed values and
    /// nils restored from what the migration kept, its new properties gone.
    func undoMigration(_ m: MigrationRecord, token: Int64, in r: inout Rewinding) throws {
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: store.files.folder, line: nil, detail: "history token \(token) (a migration) \(detail)", repairable: false)
        }
        // The schema after it as the migration recorded it: the shape the
        // objects have, with the original names that say where each came
        // from (a record written since may have dropped them).
        var newer = r.schema ?? store.schema
        if let recorded = try? SchemaFile.read(value: m.schema), recorded.fingerprint == m.to { newer = recorded }
        guard let previous = m.previous, let older = try? SchemaFile.read(value: previous) else {
            throw damaged("does not record the schema before it")
        }
        guard newer.fingerprint == m.to, older.fingerprint == m.from else { throw damaged("does not lead to the schema after it") }
        let plan = SchemaMigration(from: older, to: newer)
        if r.schema == nil {
            // The first migration crossed: every object is needed, in the schema before.
            for row in store.table.rowsSortedByID() {
                guard let id = store.table.id(at: row), r.states[id] == nil, let s = currentState(id) else { continue }
                r.states[id] = s
            }
        }
        var oldOf = [Int?](repeating: nil, count: newer.entities.count)
        for (o, mapping) in plan.mappings.enumerated() { if let mapping { oldOf[mapping.entity] = o } }
        var oldName: [String: String] = [:]
        for (o, mapping) in plan.mappings.enumerated() { if let mapping { oldName[newer.entities[mapping.entity].name] = older.entities[o].name } }
        var kept: [String: [JSONMember]] = [:]
        for member in m.oldValues { if case .object(let values) = member.value { kept[member.key] = values } }

        for (id, state) in r.states {
            guard case .present(let type, _, _) = state else { continue }
            guard let e = newer.entity(named: type), let o = oldOf[e.id], let mapping = plan.mappings[o] else {
                throw damaged("has no way back for '\(id)', a \(type)")
            }
            let all = fullData(state)
            let oldEntity = older.entities[o]
            var data: [JSONMember] = []
            func value(_ name: String) -> JSONValue? { all.first { $0.key == name }?.value }
            for (slot, source) in mapping.slots.enumerated() {
                let name = e.properties[slot].name
                switch source {
                case .fill:
                    continue
                case .attribute(let s, let conversion, _, _):
                    var v = value(name) ?? .null
                    if case .intToDouble = conversion, case .double(let d) = v, let i = Int64(exactly: d) { v = .int(i) }
                    data.append(JSONMember(oldEntity.properties[s].name, v))
                case .references(let s, _, _):
                    data.append(JSONMember(oldEntity.properties[s].name, Self.renamingReferences(value(name) ?? .null, oldName)))
                }
            }
            for (slot, name) in mapping.removed {
                data.append(JSONMember(name, oldEntity.properties[slot].relationship?.isToMany == true ? .array([]) : .null))
            }
            for v in kept[id] ?? [] {
                if let k = data.firstIndex(where: { $0.key == v.key }) { data[k].value = v.value } else { data.append(v) }
            }
            // In the order of the schema of that time, as its envelopes were.
            let order = Dictionary(oldEntity.properties.map { ($0.name, $0.slot) }, uniquingKeysWith: { a, _ in a })
            data.sort { (order[$0.key] ?? Int.max) < (order[$1.key] ?? Int.max) }
            r.states[id] = .present(type: oldEntity.name, base: nil, data: data)
        }
        r.schema = older
    }

    /// Each retained migration's plan (from the schema before it to the one
    /// after it), by the token that committed it.
    func migrationPlans() throws -> [Int64: SchemaMigration] {
        var plans: [Int64: SchemaMigration] = [:]
        for t in try store.history(matching: HistoryFilter(kinds: [.migrate])) {
            for c in t.changes {
                guard let m = c.migration, let previous = m.previous, let before = try? SchemaFile.read(value: previous),
                      let after = try? SchemaFile.read(value: m.schema) else { continue }
                plans[t.token] = SchemaMigration(from: before, to: after)
            }
        }
        return plans
    }

    /// An object's values (by name, as an envelope's `data`) carried forward
    /// across a migration, as it carried live objects; nil when its type went.
    static func forward(type: String, data: [JSONMember], through plan: SchemaMigration) -> (type: String, data: [JSONMember])? {
        guard let old = plan.from.entity(named: type), let mapping = plan.mappings[old.id] else { return nil }
        let e = plan.to.entities[mapping.entity]
        var out: [JSONMember] = []
        func value(_ name: String) -> JSONValue? { data.first { $0.key == name }?.value }
        for (slot, source) in mapping.slots.enumerated() {
            let name = e.properties[slot].name
            switch source {
            case .attribute(let s, let conversion, _, _):
                guard var v = value(old.properties[s].name) else { continue }
                if case .intToDouble = conversion, case .int(let i) = v { v = .double(Double(i)) }
                out.append(JSONMember(name, v))
            case .references(let s, _, _):
                if let v = value(old.properties[s].name) { out.append(JSONMember(name, v)) }
            case .fill(let v):
                if let a = e.properties[slot].attribute, !v.isNull { out.append(JSONMember(name, EnvelopeEncoder.jsonAttribute(v, type: a.type))) }
            }
        }
        return (e.name, out)
    }

    /// References `{"type", "id"}` with their types named as before a migration.
    static func renamingReferences(_ v: JSONValue, _ oldName: [String: String]) -> JSONValue {
        switch v {
        case .array(let items): return .array(items.map { renamingReferences($0, oldName) })
        case .object(var members):
            if let k = members.firstIndex(where: { $0.key == "type" }), case .string(let t) = members[k].value, let o = oldName[t] {
                members[k].value = .string(o)
            }
            return .object(members)
        default: return v
        }
    }

    /// The store at `token`, before a migration: a read-only store of the
    /// schema of that time, built from the states the walk back found.
    func rebuilt(at token: Int64, from r: Rewinding, schema older: Schema) throws -> Store {
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: store.files.folder, line: nil, detail: "history does not rebuild token \(token): \(detail)", repairable: false)
        }
        let past = Store(folder: store.files.folder, schema: older, access: .read, options: store.options)
        past.lastToken = token
        past.snapshotToken = store.snapshotToken
        past.history = try store.checkedHistory().filter { $0.token <= token }
        var present: [(id: [UInt8], type: String, data: [JSONMember])] = []
        for (id, state) in r.states {
            guard case .present(let type, _, let data) = state else { continue }
            present.append((Array(id.utf8), type, data))
        }
        present.sort { $0.id.lexicographicallyPrecedes($1.id) }
        past.table.reserve(present.count)
        var decoder = EnvelopeDecoder(schema: older)
        decoder.allowMissingAttributes = true  // a redacted object keeps its preserved values only
        var pending: [(RowID, [PendingLink])] = []
        for p in present {
            let id = String(decoding: p.id, as: UTF8.self)
            let data = p.data.filter { $0.value != .null }
            let envelope = JSONValue.object([JSONMember("type", .string(p.type)), JSONMember("id", .string(id)), JSONMember("data", .object(data))])
            var decoded: [DecodedObject] = []
            do {
                try decoder.decode(envelope, at: nil, into: &decoded)
            } catch {
                throw damaged("'\(id)': \(error)")
            }
            guard decoded.count == 1, let d = decoded.first else { throw damaged("'\(id)' holds objects inline") }
            let row = past.table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
            past.indexes.appendType(row, d.entity)
            if !d.links.isEmpty { pending.append((row, d.links)) }
        }
        if past.table.adoptSnapshotOrder() != nil { throw damaged("two objects have one id") }
        do {
            try past.table.resolveLinks(pending, file: store.files.folder)
        } catch {
            throw damaged("\(error)")
        }
        past.state = .past(token: token)
        return past
    }
}
