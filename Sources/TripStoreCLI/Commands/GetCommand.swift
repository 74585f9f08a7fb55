import TripStoreEngine

/// `tripstore get ID`: one object as a pretty envelope.
enum GetCommand {
    static let spec = CommandSpec(
        name: "get", summary: "print one object as an envelope",
        usage: "tripstore get ID [--expand] [--as-of TOKEN|TIME] [--history [--format table|json|jsonl]]",
        valueOptions: ["as-of": "the object as it was right after this token, or at this ISO 8601 time",
                       "format": "with --history: table (default on a terminal), json or jsonl"],
        flagOptions: ["expand": "put related objects inline instead of references",
                      "history": "the object's timeline instead: its insert with the envelope, updates, delete with tombstone"],
        examples: ["tripstore get 7C1E4D2A-0000-4000-8000-000000000001 --expand", "tripstore get rome-summit --as-of 3"], touchesLittle: true, maxPositionals: 1)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let id = try ctx.positional(0, "ID")
        if ctx.args.has("history") { return try timeline(Identifier.normalized(id), ctx) }
        let store = try ctx.openStoreToRead()
        guard let row = store.row(forID: id), let o = store.object(at: row) else {
            throw StoreError.notFound(id: id)
        }
        var w = JSONWriter(pretty: true)
        if ctx.args.has("expand") {
            writeExpanded(o, store: store, to: &w)
        } else {
            store.writeEnvelope(o, to: &w)
        }
        ctx.console.line(w.string)
        return 0
    }

    /// `get ID --history`: what `history --id ID` prints; an id that is
    /// neither live nor in retained history is not found.
    static func timeline(_ id: String, _ ctx: CommandContext) throws -> Int32 {
        if ctx.args.value("as-of") != nil || ctx.args.has("expand") { throw ctx.usageError("--history takes no --as-of or --expand") }
        let store = try ctx.openStore(.read)
        var filter = HistoryFilter()
        filter.id = id
        filter.tombstonesOnly = true  // what the timeline prints of a delete
        let transactions = try store.history(matching: filter)
        guard !transactions.isEmpty || store.row(forID: id) != nil else { throw StoreError.notFound(id: id) }
        let format = ctx.args.value("format") ?? (ctx.console.outIsTerminal ? "table" : "jsonl")
        guard ["table", "json", "jsonl"].contains(format) else { throw ctx.usageError("--format must be table, json or jsonl, got '\(format)'") }
        let printer = HistoryCommand.Printer(ctx: ctx, format: format, audit: false, withEnvelopes: true)
        try printer.print(transactions, envelopes: try printer.envelopes(transactions, in: store, id: id), whole: true, store: store)
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
                store.writeValue(o.values[p.slot], of: p, to: &w)
                continue
            }
            let related = o.values[p.slot].rows.compactMap { store.object(at: $0) }
            if r.isToMany { w.beginArray() }
            for c in related { store.writeEnvelope(c, to: &w) }
            if r.isToMany { w.endArray() } else if related.isEmpty { w.null() }
        }
        w.endObject()
        w.endObject()
    }
}
