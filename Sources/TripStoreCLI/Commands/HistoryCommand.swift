import TripStoreEngine

/// `tripstore history` and `tripstore history prune --before TOKEN`.
enum HistoryCommand {
    static let spec = CommandSpec(
        name: "history", summary: "list committed transactions and their changes; 'history prune' drops old ones",
        usage: "tripstore history [--since TOKEN] [--type TYPE] [--kind insert,update,delete] [--deletes] [--author NAME] [--format table|json|jsonl]\n       tripstore history prune --before TOKEN",
        valueOptions: ["since": "only transactions after this token",
                       "type": "only changes of this type and its subclasses",
                       "kind": "only these kinds of change: insert, update, delete (comma-separated)",
                       "author": "only transactions by this author",
                       "format": "table (default on a terminal), json or jsonl (default otherwise)",
                       "before": "with prune: drop transactions with a token below this one"],
        flagOptions: ["deletes": "only deletes, with their tombstones (the audit view)"],
        examples: ["tripstore history --deletes", "tripstore history --type Trip --kind update --format jsonl",
                   "tripstore history prune --before 10"])

    static func run(_ ctx: CommandContext) throws -> Int32 {
        if ctx.args.positionals.first == "prune" { return try prune(ctx) }
        if let extra = ctx.args.positionals.first { throw ctx.usageError("unexpected '\(extra)'") }
        var filter = HistoryFilter()
        if let s = ctx.args.value("since") {
            guard let t = Int64(s), t >= 0 else { throw ctx.usageError("--since needs a token (a whole number from 0), got '\(s)'") }
            filter.since = t
        }
        let store = try ctx.openStore(.read)
        if let t = ctx.args.value("type") {
            guard let names = store.schema.deepTypeNames(t) else {
                throw ctx.usageError("unknown type '\(t)'" + NameSuggestion.hint(for: t, in: store.schema.entities.map(\.name)))
            }
            filter.types = names
        }
        if let k = ctx.args.value("kind") {
            var kinds = Set<Change.Kind>()
            for part in k.split(separator: ",") {
                guard let kind = Change.Kind(rawValue: String(part).trimmed) else {
                    throw ctx.usageError("--kind takes insert, update and delete, got '\(part)'")
                }
                kinds.insert(kind)
            }
            guard !kinds.isEmpty else { throw ctx.usageError("--kind takes insert, update and delete, got '\(k)'") }
            filter.kinds = kinds
        }
        if ctx.args.has("deletes") { filter.kinds = [.delete] }
        filter.author = ctx.args.value("author")
        let format = ctx.args.value("format") ?? (ctx.console.outIsTerminal ? "table" : "jsonl")
        let transactions = filter.apply(to: try store.checkedHistory())
        switch format {
        case "jsonl":
            for t in transactions {
                var w = JSONWriter()
                HistoryCoding.write(t, to: &w)
                ctx.console.line(w.string)
            }
        case "json":
            var w = JSONWriter(pretty: true)
            w.beginArray()
            for t in transactions { HistoryCoding.write(t, to: &w) }
            w.endArray()
            ctx.console.line(w.string)
        case "table":
            ctx.console.out(table(transactions, audit: ctx.args.has("deletes")))
        default:
            throw ctx.usageError("--format must be table, json or jsonl, got '\(format)'")
        }
        return 0
    }

    static func prune(_ ctx: CommandContext) throws -> Int32 {
        guard let b = ctx.args.value("before") else { throw ctx.usageError("history prune needs --before TOKEN") }
        guard let token = Int64(b), token >= 0 else {
            throw ctx.usageError("--before takes a token (a whole number from 0 to \(Int64.max)), got '\(b)'")
        }
        guard try StoreFiles(folder: ctx.storePath).exists() else { throw StoreError.noStore(path: ctx.storePath) }
        let store = try ctx.openStore(.write)
        let dropped = try store.pruneHistory(before: token)
        ctx.console.line("dropped \(dropped) transaction\(dropped == 1 ? "" : "s") before token \(token); \(store.history.count) kept; the objects are unchanged")
        return 0
    }

    static func text(_ v: JSONValue) -> String {
        switch v {
        case .string(let s): return s
        case .null: return "nil"
        default:
            var w = JSONWriter()
            w.value(v)
            return w.string
        }
    }

    /// One row per change; the audit view shows each tombstone's preserved values.
    static func table(_ transactions: [HistoryTransaction], audit: Bool) -> String {
        var rows: [[String]] = []
        let header = audit ? ["deleted at", "by", "token", "type", "id", "preserved values"]
                           : ["token", "time", "author", "kind", "type", "id", "details"]
        for t in transactions {
            for c in t.changes {
                let details: String
                switch c.kind {
                case .insert: details = ""
                case .update: details = c.values.map { "\($0.name): \(text($0.old)) → \(text($0.new))" }.joined(separator: "; ")
                case .delete: details = c.tombstone.map { "\($0.key)=\(text($0.value))" }.joined(separator: ", ")
                case .redact: details = "values removed from history"
                }
                let row = audit ? [ISODate.format(t.timestamp), t.author, String(t.token), c.type, c.id, details]
                                : [String(t.token), ISODate.format(t.timestamp), t.author, c.kind.rawValue, c.type, c.id, details]
                rows.append(row.map { $0.escapingControls() })  // stored text never drives the terminal
            }
        }
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        func line(_ r: [String]) -> String {
            r.enumerated().map { i, c in i == r.count - 1 ? c : c.padding(widths[i]) }.joined(separator: "  ") + "\n"
        }
        var out = line(header) + line(widths.map { String(repeating: "-", count: $0) })
        for r in rows { out += line(r) }
        return out + "(\(rows.count) change\(rows.count == 1 ? "" : "s"))\n"
    }
}
