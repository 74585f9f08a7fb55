import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Applies one journal line to the object table exactly as recorded: the
/// line holds every side of every relationship change, so replay needs no
/// delete rules and no inverse bookkeeping.
enum JournalReplay {
    static func apply(_ line: JSONValue, to store: Store, file: String, line number: Int) throws {
        guard case .array(let changes)? = line["changes"] else { return }
        let table = store.table
        let schema = store.schema
        let decoder = EnvelopeDecoder(schema: schema)
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: file, line: number, detail: detail, repairable: false)
        }
        // Rows whose references this line sets, and the rows they held before:
        // after the line, every one of them must be sound again.
        var touched = Set<RowID>()
        var pending: [(RowID, [PendingLink])] = []
        var decoded: [DecodedObject] = []
        for c in changes where c["kind"] == .string("insert") {
            decoded.removeAll(keepingCapacity: true)
            do {
                try decoder.decode(c.withoutKind(), at: .line(number), into: &decoded)
            } catch {
                if error.kind == .danglingReference { throw StoreError.danglingReferences(file: file, line: number, detail: "\(error)") }
                if !store.schemaIsRecorded && (error.kind == .unknownType || error.kind == .unknownProperty) {
                    // A store from before schemas were recorded, made by another program.
                    throw StoreError.schemaNotRecorded(file: file, detail: "\(error)")
                }
                throw damaged("\(error)")
            }
            for d in decoded {
                guard table.row(for: d.id) == nil else { throw damaged("inserts id '\(d.id)', which exists") }
                let row = table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
                store.indexes.appendType(row, d.entity)  // a new row is past every row of its type
                pending.append((row, d.links))
                touched.insert(row)
                for link in d.links { for t in link.targets { if let r = table.row(for: t.id) { touched.insert(r) } } }
            }
        }
        try store.table.resolveLinks(pending, file: file)
        for c in changes where c["kind"] == .string("update") {
            guard case .string(let id)? = c["id"], case .string(let type)? = c["type"], case .object(let values)? = c["values"] else {
                throw damaged("updates an unknown object")
            }
            try update(id: id, type: type, values: values.map { ($0.key, $0.value["old"], $0.value["new"]) }, in: store,
                       touched: &touched, file: file, line: number)
        }
        for c in changes where c["kind"] == .string("delete") {
            guard case .string(let id)? = c["id"], let row = table.row(for: id) else { throw damaged("deletes an unknown object") }
            if let o = table.object(at: row) {
                let name = schema.entities[o.entity].name
                guard case .string(let type)? = c["type"], type == name else { throw damaged("deletes '\(id)', a \(name), as another type") }
                store.replayedDeletes.append(ReplayedDelete(row: row, object: o, file: file, line: number))
                store.indexes.remove(row, o)
            }
            table.remove(row)
        }
        if let problem = table.referenceProblems(of: touched.sorted(), limit: 1).first {
            throw damaged(problem)
        }
    }

    /// Applies a line whose changes are all updates, as `HistoryFastReader`
    /// read it (the same as `apply` does with the line's tree).
    static func apply(updates: [Change], to store: Store, file: String, line number: Int) throws {
        var touched = Set<RowID>()
        for c in updates {
            try update(id: c.id, type: c.type, values: c.values.map { ($0.name, $0.old, $0.new) }, in: store, touched: &touched,
                       file: file, line: number)
        }
        if let problem = store.table.referenceProblems(of: touched.sorted(), limit: 1).first {
            throw StoreError.damaged(file: file, line: number, detail: problem, repairable: false)
        }
    }

    /// Sets the new values of one update; `touched` gains the rows whose
    /// references it changes, and the rows they held before.
    /// An old value must be one the property can hold, as time travel reads it back.
    private static func update(id: String, type: String, values: [(name: String, old: JSONValue?, new: JSONValue?)], in store: Store,
                               touched: inout Set<RowID>, file: String, line number: Int) throws {
        let table = store.table
        func damaged(_ detail: String) -> StoreError {
            .damaged(file: file, line: number, detail: detail, repairable: false)
        }
        guard let row = table.row(for: id), let e = table.entity(at: row) else { throw damaged("updates an unknown object") }
        let entity = store.schema.entities[e]
        guard entity.name == type else { throw damaged("updates '\(id)' as a \(type), but it is a \(entity.name)") }
        for (name, oldValue, value) in values {
            guard let p = entity.property(named: name), let new = value, let old = oldValue else {
                throw damaged("updates unknown property '\(name)'")
            }
            switch p.kind {
            case .attribute(let a):
                do {
                    _ = try ValueDecoding.decode(old, as: a.type, optional: true)
                } catch {
                    throw damaged("property '\(name)', its old value: \(error.message)")
                }
                do {
                    table.setValue(try ValueDecoding.decode(new, as: a.type, optional: a.isOptional), row: row, slot: p.slot)
                } catch {
                    throw damaged("property '\(name)': \(error.message)")
                }
            case .relationship(let r):
                for v in [old, new] where ValueDecoding.referenceIDs(v) == nil || r.isToMany && !v.isArrayOrNull {
                    throw damaged("property '\(name)' holds something other than \(r.isToMany ? "an array of references" : "a reference")")
                }
                guard let ids = ValueDecoding.referenceIDs(new) else { throw damaged("property '\(name)' holds something other than references") }
                var rows: [RowID] = []
                for tid in ids {
                    guard let tr = table.row(for: tid) else {
                        throw StoreError.danglingReferences(file: file, line: number, detail: "property '\(name)' of '\(id)' references a missing object")
                    }
                    rows.append(tr)
                }
                touched.insert(row)
                touched.formUnion(table.value(at: row, slot: p.slot).rows)
                touched.formUnion(rows)
                table.setValue(r.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null), row: row, slot: p.slot)
            }
        }
    }
}

extension JSONValue {
    /// An insert change as an envelope: the same object without `"kind"`.
    func withoutKind() -> JSONValue {
        guard case .object(let members) = self else { return self }
        return .object(members.filter { $0.key != "kind" })
    }
}

extension JSONValue {
    /// An array, or null: what a to-many relationship's value may be.
    var isArrayOrNull: Bool {
        switch self {
        case .array, .null: return true
        default: return false
        }
    }
}
