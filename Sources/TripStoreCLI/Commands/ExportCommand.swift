import TripStoreEngine

/// `tripstore export`: envelopes that `import` reads back.
enum ExportCommand {
    static let spec = CommandSpec(
        name: "export", summary: "write objects as envelopes (a JSON array, or JSON Lines)",
        usage: "tripstore export [--from TYPE] [PREDICATE] [--format json|jsonl|sql] [--output FILE] [--as-of TOKEN|TIME]",
        valueOptions: ["from": "export this type (subclasses included) with its owned objects inline",
                       "as-of": "the store as it was right after this token, or at this ISO 8601 time",
                       "format": "json (default, an array), jsonl, or sql (the whole store and its history for an empty PostgreSQL database)",
                       "sql-schema": "with --format sql: the PostgreSQL schema of the tables (default tripstore)",
                       "output": "write to FILE instead of standard output"],
        examples: ["tripstore export > all.json",
                   "tripstore export --from BusinessTrip --format jsonl",
                   "tripstore export --from Trip 'destination ~ \"Rome\"'",
                   "tripstore export --as-of 2026-11-16 > last-monday.json",
                   "tripstore export --format sql | psql -v ON_ERROR_STOP=1"])

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let format = ctx.args.value("format") ?? "json"
        guard format == "json" || format == "jsonl" || format == "sql" else {
            throw ctx.usageError("--format must be json, jsonl or sql, got '\(format)'")
        }
        if format == "sql" {
            // The whole store, as a database is seeded from it: nothing to choose.
            if ctx.args.value("from") != nil || !ctx.args.positionals.isEmpty || ctx.args.value("as-of") != nil || ctx.args.value("output") != nil {
                throw ctx.usageError("--format sql exports the whole store as of its last token; it takes no --from, predicate, --as-of or --output")
            }
            let store = try ctx.openStore(.read)
            try SQLWriter(store).writeExport(in: try ctx.sqlSchema(), to: { ctx.console.out($0) })
            return 0
        } else if ctx.args.value("sql-schema") != nil {
            throw ctx.usageError("--sql-schema goes with --format sql")
        }
        let store = try ctx.openStoreToRead()
        var rows: [RowID]
        let from = ctx.args.value("from")
        if from == nil && ctx.args.positionals.isEmpty {
            rows = store.exportAllRows()
        } else {
            let typeName = from ?? store.schema.roots[0].name
            rows = try QuerySupport.matchingRows(store, from: typeName, predicate: ctx.args.positionals.joined(separator: " "))
        }
        let file = try ctx.args.value("output").map { try OutputFile(creating: $0) }
        try store.writeExport(rows: rows, inlineOwned: from != nil || !ctx.args.positionals.isEmpty,
                              jsonLines: format == "jsonl", pretty: false) { w in
            if let file { try file.write(w.bytes) } else { ctx.console.out(w.bytes) }
            w.bytes.removeAll(keepingCapacity: true)
        }
        return 0
    }
}
