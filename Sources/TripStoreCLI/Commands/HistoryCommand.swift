import TripStoreEngine

/// `tripstore history` and `tripstore history prune --before TOKEN`.
enum HistoryCommand {
    static let spec = CommandSpec(
        name: "history", summary: "list committed transactions and their changes; follow them live; 'history prune' and 'history redact' forget",
        usage: """
        tripstore history [--since TOKEN] [--type TYPE] [--kind insert,update,delete,redact,migrate] [--deletes] [--author NAME] [--id ID]
                         [--after TIME] [--before TIME] [--limit N] [--reverse] [--format table|json|jsonl|feed|sql] [--follow]
               tripstore history prune --before TOKEN
               tripstore history redact --id ID [--id ID…] | --where PREDICATE [--from TYPE]
        """,
        valueOptions: ["since": "only transactions after this token (with --follow: start after it; default now)",
                       "type": "only changes of this type and its subclasses",
                       "kind": "only these kinds of change: insert, update, delete, redact, migrate (comma-separated)",
                       "author": "only transactions by this author",
                       "id": "only the changes of this object, its insert with the envelope (redact: the object to redact; repeat for more)",
                       "after": "only transactions committed after this ISO 8601 time (a date alone is midnight UTC)",
                       "before": "only transactions committed before this ISO 8601 time (prune: drop transactions with a token below this one)",
                       "limit": "only the newest N transactions that pass the filters (printed oldest first); with --deletes, the newest N deletes",
                       "format": "table (default on a terminal), json, jsonl (default otherwise), feed (replayable lines for 'apply') or sql (transactions for psql)",
                       "sql-schema": "with --format sql: the PostgreSQL schema of the tables (default tripstore)",
                       "where": "with redact: the objects, live or deleted, whose last known state matches this predicate",
                       "from": "with redact --where: the root type the predicate is over"],
        flagOptions: ["deletes": "only deletes, with their tombstones (the audit view)",
                      "reverse": "newest first",
                      "follow": "keep printing transactions as they are committed, until interrupted"],
        examples: ["tripstore history --deletes", "tripstore history --type Trip --kind update --format jsonl",
                   "tripstore history --id rome-summit", "tripstore history --after 2026-11-16 --limit 20 --reverse",
                   "tripstore history --follow --format feed | ssh standby tripstore --store /srv/trips apply -",
                   "tripstore history --follow --format sql --since \"$(psql -tAc 'select token from tripstore.cursor')\" | psql -v ON_ERROR_STOP=1",
                   "tripstore history prune --before 10", "tripstore history redact --id family-7"], touchesLittle: true)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        switch ctx.args.positionals.first {
        case "prune": return try prune(ctx)
        case "redact": return try redact(ctx)
        case let extra?: throw ctx.usageError("unexpected '\(extra)'")
        case nil: break
        }
        var filter = HistoryFilter()
        if let s = ctx.args.value("since") {
            guard let t = Int64(s), t >= 0 else { throw ctx.usageError("--since needs a token (a whole number from 0), got '\(s)'") }
            filter.since = t
        }
        filter.after = try time(ctx, "after")
        filter.before = try time(ctx, "before")
        filter.limit = try ctx.intOption("limit")
        let format = ctx.args.value("format") ?? (ctx.console.outIsTerminal ? "table" : "jsonl")
        guard ["table", "json", "jsonl", "feed", "sql"].contains(format) else {
            throw ctx.usageError("--format must be table, json, jsonl, feed or sql, got '\(format)'")
        }
        let follow = ctx.args.has("follow")
        if format == "feed" || format == "sql" {
            // A feed line is a whole transaction: replaying part of one would be another transaction.
            for o in ["type", "kind", "author", "id"] where ctx.args.value(o) != nil {
                throw ctx.usageError("--format \(format) prints whole transactions; it cannot be combined with --\(o)")
            }
            if ctx.args.has("deletes") { throw ctx.usageError("--format \(format) prints whole transactions; it cannot be combined with --deletes") }
        }
        if format == "sql" {
            // Each SQL transaction checks the one before it: none may be left out.
            for o in ["after", "before", "limit"] where ctx.args.value(o) != nil {
                throw ctx.usageError("--format sql prints every transaction after --since; it cannot be combined with --\(o)")
            }
            if ctx.args.has("reverse") { throw ctx.usageError("--format sql prints oldest first; it cannot be combined with --reverse") }
        } else if ctx.args.value("sql-schema") != nil {
            throw ctx.usageError("--sql-schema goes with --format sql")
        }
        if follow && format == "json" { throw ctx.usageError("--follow prints as transactions come; use --format jsonl, feed or table, not json") }
        if follow && (ctx.args.has("reverse") || filter.limit != nil) { throw ctx.usageError("--follow prints oldest first, as transactions come; it takes no --limit or --reverse") }
        if follow && filter.before != nil { throw ctx.usageError("--follow prints transactions as they come; it takes no --before") }
        if let id = ctx.args.value("id") {
            if let problem = Identifier.problem(id) { throw ctx.usageError("--id: \(problem)") }
            filter.id = Identifier.normalized(id)
        }
        if let k = ctx.args.value("kind") {
            var kinds = Set<Change.Kind>()
            for part in k.split(separator: ",") {
                guard let kind = Change.Kind(rawValue: String(part).trimmed) else {
                    throw ctx.usageError("--kind takes insert, update, delete, redact and migrate, got '\(part)'")
                }
                kinds.insert(kind)
            }
            guard !kinds.isEmpty else { throw ctx.usageError("--kind takes insert, update, delete, redact and migrate, got '\(k)'") }
            filter.kinds = kinds
        }
        if ctx.args.has("deletes") {
            if ctx.args.value("kind") != nil { throw ctx.usageError("--deletes shows deletes only; it cannot be combined with --kind") }
            // The audit view counts deletes, as an audit table's rows are counted.
            filter.kinds = [.delete]
            filter.limitCountsChanges = true
        }
        filter.author = ctx.args.value("author")
        // Only the feed and SQL print what a delete kept beyond its tombstone.
        filter.tombstonesOnly = format != "feed" && format != "sql"
        let printer = Printer(ctx: ctx, format: format, audit: ctx.args.has("deletes"), withEnvelopes: filter.id != nil,
                              sql: try ctx.sqlSchema())
        if follow { return try self.follow(ctx, filter: filter, printer: printer) }
        let store = try ctx.openStore(.read)
        try setTypes(ctx, store, &filter)
        if format == "sql", let since = filter.since, since < store.lastToken, since + 1 < (store.oldestRetainedToken ?? store.lastToken + 1) {
            throw StoreError.historyNotRetained(after: since, oldestRetained: store.oldestRetainedToken, lastToken: store.lastToken)
        }
        var transactions = try store.history(matching: filter)
        let envelopes = try printer.envelopes(transactions, in: store, id: filter.id)
        if ctx.args.has("reverse") { transactions.reverse() }
        try printer.print(transactions, envelopes: envelopes, whole: true, store: store)
        return 0
    }

    static func setTypes(_ ctx: CommandContext, _ store: Store, _ filter: inout HistoryFilter) throws {
        guard let t = ctx.args.value("type") else { return }
        guard let names = try store.historyTypeNames(t) else {
            throw ctx.usageError("unknown type '\(t)'" + NameSuggestion.hint(for: t, in: store.schema.entities.map(\.name)))
        }
        filter.typeNames = names
    }

    /// `--after` / `--before` as a time; a bare number is refused (a token is not a time).
    static func time(_ ctx: CommandContext, _ option: String) throws -> ISOTime? {
        guard let text = ctx.args.value(option) else { return nil }
        guard let t = ISOTime(text) else {
            throw ctx.usageError("--\(option) takes an ISO 8601 time such as 2026-11-16 or 2026-11-16T09:00:00Z, got '\(text)'"
                                 + (Int64(text) != nil ? " (for tokens use --since)" : ""))
        }
        return t
    }

    /// `history --follow`: prints each transaction as it is committed until
    /// SIGINT, SIGTERM or a closed pipe (exit 0 for each).
    static func follow(_ ctx: CommandContext, filter: HistoryFilter, printer: Printer) throws -> Int32 {
        var filter = filter
        Interruption.install()
        // Output goes out as it comes: each open checks its image whole instead
        // of holding output back until the end, which never comes.
        ctx.console.release()
        var options = try ctx.options()
        options.imageChecks = .atOpen
        let watch = FolderWatch(folder: ctx.storePath, useInotify: ctx.environment["TRIPSTORE_FOLLOW_POLL"] == nil)
        // Each store the follower opens may warn; each warning is printed once.
        var warned = Set<String>()
        let follower = try HistoryFollower(folder: ctx.storePath, since: filter.since) {
            let store = try ctx.open(.read, options: options, recorded: true)
            for w in store.warnings where warned.insert(ctx.sentence(w, access: .read)).inserted { ctx.console.err(ctx.sentence(w, access: .read)) }
            return store
        }
        var typesSet = false
        let output: Int32? = ctx.console.capture ? nil : 1
        while !Interruption.requested && !ctx.console.outputClosed && !(output.map(FolderWatch.readerGone) ?? false) {
            if let (store, new) = try follower.poll() {
                if !typesSet { try setTypes(ctx, store, &filter); typesSet = true }
                var f = filter
                f.since = nil
                let shown = f.apply(to: new)
                try printer.print(shown, envelopes: try printer.envelopes(shown, in: store, id: filter.id), whole: false, store: store)
                ctx.console.flush()
            }
            watch.wait(timeout: 1, output: output)
        }
        return 0
    }

    /// Writes transactions in one of the formats.
    struct Printer {
        let ctx: CommandContext
        let format: String
        let audit: Bool
        let withEnvelopes: Bool
        /// The PostgreSQL tables of `--format sql`.
        var sql = SQLSchema()

        /// Insert envelopes for `--id`: each object right after its transaction.
        func envelopes(_ ts: [HistoryTransaction], in store: Store, id: String?) throws -> [Int64: [String: JSONValue]] {
            guard withEnvelopes, let first = ts.first else { return [:] }
            return try store.insertEnvelopes(after: first.token - 1, wanted: Set(ts.map(\.token)), only: id)
        }

        /// `whole`: the complete answer (json prints one array); otherwise one batch of a follow.
        func print(_ ts: [HistoryTransaction], envelopes: [Int64: [String: JSONValue]], whole: Bool, store: Store) throws {
            switch format {
            case "sql":
                try SQLWriter(store).writeHistory(ts, in: sql, to: { ctx.console.out($0) })
            case "feed":
                try FeedWriter(store).write(ts, to: { ctx.console.out($0) })
            case "json":
                var w = JSONWriter(pretty: true)
                w.beginArray()
                for t in ts { t.write(to: &w, envelopes: envelopes[t.token]) }
                w.endArray()
                ctx.console.line(w.string)
            case "table":
                if whole || !ts.isEmpty { ctx.console.out(table(ts, audit: audit, envelopes: envelopes)) }
            default:
                for t in ts {
                    var w = JSONWriter()
                    t.write(to: &w, envelopes: envelopes[t.token])
                    ctx.console.line(w.string)
                }
            }
        }
    }

    /// `history redact --id ID…` or `--where PREDICATE`: one transaction, committed by a snapshot.
    static func redact(_ ctx: CommandContext) throws -> Int32 {
        var ids = ctx.args.all("id") + ctx.args.positionals.dropFirst()
        let predicate = ctx.args.value("where")
        guard !ids.isEmpty || predicate != nil else { throw ctx.usageError("history redact needs --id ID or --where PREDICATE") }
        guard ids.isEmpty || predicate == nil else { throw ctx.usageError("history redact takes --id or --where, not both") }
        for id in ids { if let problem = Identifier.problem(id) { throw ctx.usageError("--id: \(problem)") } }
        let store = try ctx.openExistingStore()
        if let predicate {
            let query = try Query(predicate, from: ctx.args.value("from"))
            ids = try Redactor(store).idsMatching(query)
            if ids.isEmpty {
                ctx.console.line("no object, live or deleted, matches; nothing was redacted")
                return 0
            }
        }
        let t = try Redactor(store).redact(ids: ids, author: ctx.author)
        let n = t.changes.count
        ctx.console.line("redacted the history of \(n) object\(n == 1 ? "" : "s") (only preserved values and references remain); committed as token \(t.token) with a new snapshot")
        return 0
    }

    static func prune(_ ctx: CommandContext) throws -> Int32 {
        if ctx.args.positionals.count > 1 { throw ctx.usageError("unexpected '\(ctx.args.positionals[1])'") }
        guard let b = ctx.args.value("before") else { throw ctx.usageError("history prune needs --before TOKEN") }
        guard let token = Int64(b), token >= 0 else {
            throw ctx.usageError("--before takes a token (a whole number from 0 to \(Int64.max)), got '\(b)'")
        }
        let store = try ctx.openExistingStore()
        let dropped = try store.pruneHistory(before: token)
        ctx.console.line("dropped \(dropped) transaction\(dropped == 1 ? "" : "s") before token \(token); \(store.historyCount) kept; the objects are unchanged")
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
    static func table(_ transactions: [HistoryTransaction], audit: Bool, envelopes: [Int64: [String: JSONValue]] = [:]) -> String {
        var rows: [[String]] = []
        let header = audit ? ["deleted at", "by", "token", "type", "id", "preserved values"]
                           : ["token", "time", "author", "kind", "type", "id", "details"]
        for t in transactions {
            for c in t.changes {
                let details: String
                switch c.kind {
                case .insert:
                    if case .object(let data)? = envelopes[t.token]?[c.id]?["data"] {
                        details = data.map { "\($0.key)=\(text($0.value))" }.joined(separator: ", ")
                    } else {
                        details = ""
                    }
                case .redact: details = "values removed from history"
                case .migrate:
                    let m = c.migration
                    details = "schema \(m?.from ?? "?") → \(m?.to ?? "?"): " + (m?.steps ?? []).joined(separator: "; ")
                case .update: details = c.values.map { "\($0.name): \(text($0.old)) → \(text($0.new))" }.joined(separator: "; ")
                case .delete: details = c.tombstone.map { "\($0.key)=\(text($0.value))" }.joined(separator: ", ")
                }
                let row = audit ? [ISODate.format(t.timestamp), t.author, String(t.token), c.type, c.id, details]
                                : [String(t.token), ISODate.format(t.timestamp), t.author, c.kind.rawValue, c.type, c.id, details]
                rows.append(row.map { $0.escapingControls() })  // stored text never drives the terminal
            }
        }
        var widths = header.map(\.count)
        for r in rows { for (i, c) in r.enumerated() { widths[i] = max(widths[i], c.count) } }
        func line(_ r: [String]) -> String {
            r.enumerated().map { i, c in i == r.count - 1 ? c : c.padded(to: widths[i]) }.joined(separator: "  ") + "\n"
        }
        var out = line(header) + line(widths.map { String(repeating: "-", count: $0) })
        for r in rows { out += line(r) }
        return out + "(\(rows.count) change\(rows.count == 1 ? "" : "s"))\n"
    }
}
