import TripStoreEngine

/// `tripstore query [PREDICATE]`.
enum QueryCommand {
    static let spec = CommandSpec(
        name: "query", summary: "print the objects that match a predicate",
        usage: "tripstore query [PREDICATE] [--from TYPE] [--sort KEY[,KEY]] [--limit N] [--offset N] [--fields a,b] [--format table|json|jsonl|csv|ids] [--count] [--explain] [--as-of TOKEN|TIME] [--sql [--sql-schema NAME]]",
        valueOptions: ["as-of": "answer as the store was right after this token, or at this ISO 8601 time",
                       "from": "the root type to query (subclasses included; default: the store's first root type, Trip for trips)",
                       "sort": "sort keys, comma-separated; -KEY sorts descending; ties are broken by id",
                       "limit": "print at most N objects", "offset": "skip the first N objects",
                       "fields": "only these attributes (json/jsonl: in data; table/csv: as columns)",
                       "format": "table (default on a terminal), json, jsonl (default otherwise), csv or ids",
                       "sql-schema": "with --sql: the PostgreSQL schema of the tables (default tripstore)"],
        flagOptions: ["count": "print only the number of matches", "explain": "print the plan: indexes used, estimated and actual rows",
                      "sql": "print the PostgreSQL SELECT that returns the ids --format ids would (or the count), instead of running it"],
        examples: ["tripstore query 'is BusinessTrip && destination ~ \"Rome\"'",
                   "tripstore query 'is PersonalTrip && reason == \"family\" && startDate >= 2026-06-01' --sort -startDate",
                   "tripstore query 'perDiemRate > 100' --sort=-startDate --limit 20 --format ids",
                   "tripstore query --from BusinessMeal 'cost > 80' --count",
                   "tripstore query 'destination ~ \"Rome\"' --as-of 2026-11-16",
                   "psql -tA -c \"$(tripstore query --sql 'is BusinessTrip && destination ~ \\\"Rome\\\"')\""], touchesLittle: true)

    /// What a query prints, as the command line or the shell sets it.
    struct Settings {
        var from: String?
        var sort: [SortKey] = []
        var limit: Int?
        var offset = 0
        var fields: [String]?
        var format: RowFormatter.Format
        var count = false
        var explain = false
    }

    static func settings(_ ctx: CommandContext) throws -> Settings {
        var s = Settings(format: ctx.console.outIsTerminal ? .table : .jsonl)
        s.from = ctx.args.value("from")
        if let sort = ctx.args.value("sort") {
            s.sort = SortKey.parseList(sort)
            if s.sort.isEmpty || s.sort.contains(where: { $0.path.isEmpty }) {
                throw ctx.usageError("--sort needs property names (-NAME for descending), got '\(sort)'")
            }
        }
        s.limit = try ctx.intOption("limit")
        s.offset = try ctx.intOption("offset") ?? 0
        s.fields = ctx.args.value("fields").map { $0.split(separator: ",", omittingEmptySubsequences: false).map { String($0).trimmed } }
        if let fields = s.fields, fields.isEmpty || fields.contains(where: \.isEmpty) {
            throw ctx.usageError("--fields needs property names separated by commas, got '\(ctx.args.value("fields") ?? "")'")
        }
        if let f = ctx.args.value("format") {
            guard let format = RowFormatter.Format(rawValue: f) else {
                throw ctx.usageError("--format must be one of table, json, jsonl, csv, ids; got '\(f)'")
            }
            s.format = format
        }
        s.count = ctx.args.has("count")
        s.explain = ctx.args.has("explain")
        return s
    }

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let s = try settings(ctx)
        if ctx.args.has("sql") {
            for o in ["fields", "format", "as-of"] where ctx.args.value(o) != nil {
                throw ctx.usageError("--sql prints the SELECT of the ids; it cannot be combined with --\(o)")
            }
            if s.explain { throw ctx.usageError("--sql prints the SELECT of the ids; it cannot be combined with --explain") }
            let sql = try ctx.sqlSchema()
            let store = try ctx.openStore(.read)
            // A query error reads as `query` words it (CLIError.from).
            let query = try Query(queryText(ctx.args.positionals), from: s.from, sort: s.sort, limit: s.limit, offset: s.offset)
            ctx.console.out(try SQLWriter(store).sql(for: query, count: s.count, in: sql))
            return 0
        } else if ctx.args.value("sql-schema") != nil {
            throw ctx.usageError("--sql-schema goes with --sql")
        }
        let store = try ctx.openStoreToRead()
        try execute(queryText(ctx.args.positionals), s, store: store, console: ctx.console)
        return 0
    }

    /// Runs one predicate with the settings and prints the result.
    static func execute(_ predicate: String, _ s: Settings, store: Store, console: Console) throws {
        let query: Query
        let result: QueryResult
        do {
            query = try Query(predicate, from: s.from, sort: s.sort, limit: s.limit, offset: s.offset)
            result = try store.run(query, countOnly: s.count)
        } catch {
            throw CLIError(error.description + (error.caretDisplay.isEmpty ? "" : "\n" + error.caretDisplay))
        }
        if let fields = s.fields {
            let from = store.schema.entity(named: s.from ?? store.schema.roots[0].name)!
            let known = Set(from.closure.flatMap { store.schema.entities[$0].properties.map(\.name) })
            for f in fields where !known.contains(f.hasPrefix("data.") ? String(f.dropFirst(5)) : f) && f != "id" && f != "type" {
                throw CLIError("--fields: \(from.name) and its subclasses have no property '\(f)'" + NameSuggestion.hint(for: f, in: known.sorted()))
            }
        }
        if s.explain {
            console.line(result.plan.description)
            return
        }
        if s.count {
            console.line(String(result.total ?? result.rows.count))
            return
        }
        if s.limit == 0 { return }  // --limit 0 prints nothing, not even a header
        let from = store.schema.entity(named: s.from ?? store.schema.roots[0].name)!
        RowFormatter(store: store, format: s.format, from: from, fields: s.fields, console: console).write(result.rows)
    }
}

/// The query's words as one text. Not `joined(separator:)`: that generic
/// code is resolved by the runtime on its first use, which costs a cold
/// `query` process more than parsing the query does.
private func queryText(_ words: [String]) -> String {
    guard words.count != 1 else { return words[0] }
    var text = ""
    for (i, word) in words.enumerated() {
        if i > 0 { text += " " }
        text += word
    }
    return text
}
