import TripStoreEngine

/// `tripstore get ID`: one object as a pretty envelope.
enum GetCommand {
    static let spec = CommandSpec(
        name: "get", summary: "print one object as an envelope",
        usage: "tripstore get ID [--expand] [--as-of TOKEN|TIME]",
        valueOptions: ["as-of": "the object as it was right after this token, or at this ISO 8601 time"],
        flagOptions: ["expand": "put related objects inline instead of references"],
        examples: ["tripstore get 7C1E4D2A-0000-4000-8000-000000000001 --expand", "tripstore get rome-summit --as-of 3"])

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let id = try ctx.positional(0, "ID")
        let store = try ctx.openStoreToRead()
        guard let row = store.table.row(for: id), let o = store.table.object(at: row) else {
            throw StoreError.notFound(id: id)
        }
        var w = JSONWriter(pretty: true)
        if ctx.args.has("expand") {
            writeExpanded(o, store: store, to: &w)
        } else {
            EnvelopeEncoder.write(o, schema: store.schema, lookup: store.table, to: &w)
        }
        ctx.console.line(w.string)
        return 0
    }

    static func writeExpanded(_ o: StoredObject, store: Store, to w: inout JSONWriter) {
        let entity = store.schema.entities[o.entity]
        w.beginObject()
        w.key("type"); w.string(entity.name)
        w.key("id"); w.string(o.id)
        w.key("data")
        w.beginObject()
        for p in entity.properties {
            w.key(p.name)
            guard let r = p.relationship else {
                EnvelopeEncoder.writeValue(o.values[p.slot], of: p, schema: store.schema, lookup: store.table, to: &w)
                continue
            }
            let related = o.values[p.slot].rows.compactMap { store.table.object(at: $0) }
            if r.isToMany { w.beginArray() }
            for c in related { EnvelopeEncoder.write(c, schema: store.schema, lookup: store.table, to: &w) }
            if r.isToMany { w.endArray() } else if related.isEmpty { w.null() }
        }
        w.endObject()
        w.endObject()
    }
}
