import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// Every live object as a top-level envelope with references, ordered by type name and id.
    public func exportAllRows() -> [RowID] {
        let byName = schema.entities.map(\.id).sorted { schema.entities[$0].name < schema.entities[$1].name }
        var rank = Array(repeating: 0, count: schema.entities.count)
        for (k, e) in byName.enumerated() { rank[e] = k }
        return table.liveRows.sorted { a, b in
            let x = table.object(at: a)!, y = table.object(at: b)!
            if x.entity != y.entity { return rank[x.entity] < rank[y.entity] }
            return ObjectTable.byteLess(x.id, y.id)
        }
    }

    /// Writes envelopes for an export.
    ///
    /// With `inlineOwned`, each of `rows` carries its cascade-owned related
    /// objects inline, and every other object they reference follows as a
    /// top-level envelope, its references cut down to what the file holds, so
    /// the file imports on its own.
    public func writeExport(rows: [RowID], inlineOwned: Bool, jsonLines: Bool, pretty: Bool,
                            to sink: (inout JSONWriter) throws -> Void) throws {
        var included = Set<RowID>()
        var extras: [RowID] = []
        var owned = Set<RowID>()
        if inlineOwned {
            func own(_ row: RowID) {
                guard let o = table.object(at: row) else { return }
                for p in schema.entities[o.entity].properties {
                    guard let r = p.relationship, r.deleteRule == .cascade else { continue }
                    for c in o.values[p.slot].rows where owned.insert(c).inserted { own(c) }
                }
            }
            for r in rows { included.insert(r); own(r) }
            included.formUnion(owned)
            for r in Array(included).sorted() {
                guard let o = table.object(at: r) else { continue }
                for p in schema.entities[o.entity].properties where p.relationship != nil {
                    for t in o.values[p.slot].rows where !included.contains(t) {
                        included.insert(t)
                        extras.append(t)
                    }
                }
            }
            extras.sort { table.object(at: $0)!.id.utf8.lexicographicallyPrecedes(table.object(at: $1)!.id.utf8) }
        }
        var w = JSONWriter(pretty: pretty && !jsonLines, capacity: 1 << 16)
        let encoder = EnvelopeFastEncoder(schema: schema)
        if !jsonLines { w.beginArray() }
        for (k, row) in (rows + extras).enumerated() {
            guard let o = table.object(at: row) else { continue }
            if inlineOwned {
                writeInline(o, isRoot: k < rows.count, owned: owned, included: included, to: &w)
            } else if w.pretty {
                EnvelopeEncoder.write(o, schema: schema, lookup: table, to: &w)
            } else {
                w.beginRawValue()
                encoder.write(o, lookup: table, storedSidesOnly: false, to: &w)
            }
            if jsonLines { w.bytes.append(0x0A) }
            if w.bytes.count >= 1 << 16 {
                try sink(&w)
            }
        }
        if !jsonLines {
            w.endArray()
            w.bytes.append(0x0A)
        }
        try sink(&w)
    }

    private func writeInline(_ o: StoredObject, isRoot: Bool, owned: Set<RowID>, included: Set<RowID>, to w: inout JSONWriter) {
        let entity = schema.entities[o.entity]
        w.beginObject()
        w.key("type"); w.string(entity.name)
        w.key("id"); w.string(o.id)
        w.key("data")
        w.beginObject()
        for p in entity.properties {
            w.key(p.name)
            guard let r = p.relationship else {
                EnvelopeEncoder.writeValue(o.values[p.slot], of: p, schema: schema, lookup: table, to: &w)
                continue
            }
            let targets = o.values[p.slot].rows.filter { included.contains($0) }
            func one(_ t: RowID) {
                if isRoot || owned.contains(t), r.deleteRule == .cascade, owned.contains(t), let child = table.object(at: t) {
                    writeInline(child, isRoot: isRoot, owned: owned, included: included, to: &w)
                } else {
                    EnvelopeEncoder.writeReference(t, schema: schema, lookup: table, to: &w)
                }
            }
            if r.isToMany {
                w.beginArray()
                for t in targets { one(t) }
                w.endArray()
            } else if let t = targets.first {
                one(t)
            } else {
                w.null()
            }
        }
        w.endObject()
        w.endObject()
    }
}
