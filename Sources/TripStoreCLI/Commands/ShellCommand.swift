import TripStoreEngine

/// `tripstore shell`: the store stays open; one query or dot-command a
/// line, each seeing every transaction committed before it (as each
/// statement of SQLite's shell does), by another process included.
enum ShellCommand {
    static let spec = CommandSpec(
        name: "shell", summary: "keep the store open and run one query or .command per line",
        usage: "tripstore shell [--from TYPE] [--format F]",
        valueOptions: ["from": "the root type to query (default: the store's first root type, Trip for trips)", "format": "output format (as for query)"],
        examples: ["tripstore shell", "printf 'is BusinessTrip\\n.count on\\ndestination ~ \"Rome\"\\n' | tripstore shell"], maxPositionals: 0)

    static let help = """
    Type a predicate to run it, or a command:
      .from TYPE         query this type (subclasses included)
      .sort KEY[,KEY]    sort keys (-KEY descending); .sort alone clears
      .limit N           at most N rows; .limit alone clears
      .offset N          skip N rows
      .fields a,b        only these attributes; .fields alone clears
      .format F          table, json, jsonl, csv or ids
      .count on|off      print only the number of matches
      .explain on|off    print the plan instead of rows
      .get ID            print one object
      .help              this text
      .quit              leave (also end of input)
    """

    static func run(_ ctx: CommandContext) throws -> Int32 {
        var s = try QueryCommand.settings(ctx)
        // Opened again after each compaction: the store before is let go whole (it maps the replaced snapshot).
        var store: Store? = try ctx.openStoreForAWhile(.read)
        let c = ctx.console
        let interactive = c.inIsTerminal && c.outIsTerminal
        if interactive, let store { c.line("tripstore shell: \(counted(store.objectCount, "object")). .help for commands, .quit to leave.") }
        var failures = 0
        while true {
            if interactive {
                c.out("tripstore> ")
                c.flush()
            }
            guard let raw = ctx.input.readLine() else { break }
            let line = raw.trimmed
            if line.isEmpty || line.hasPrefix("#") { continue }
            do {
                // The journal lines committed since, or the store opened
                // again when a snapshot took the journal's place (or when
                // reading them failed: a store that failed to catch up is
                // not used again, and opening names the damage if any).
                let open: Store
                if let current = store, (try? current.catchUp()) == true {
                    open = current
                } else {
                    store?.close()
                    store = nil
                    open = try ctx.openStoreForAWhile(.read)
                    store = open
                }
                if line.hasPrefix(".") {
                    if try !command(line, &s, store: open, console: c) { break }
                } else {
                    try QueryCommand.execute(line, s, store: open, console: c)
                }
            } catch {
                failures += 1
                let e = CLIError.from(error)
                c.err("error: " + e.message)
            }
            c.flush()
        }
        return failures > 0 && !interactive ? 1 : 0
    }

    /// Applies a dot-command; false for `.quit`.
    static func command(_ line: String, _ s: inout QueryCommand.Settings, store: Store, console: Console) throws -> Bool {
        let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
        let arg = parts.count > 1 ? parts[1].trimmed : nil
        func on() throws -> Bool {
            guard let arg, arg == "on" || arg == "off" else { throw CLIError("\(parts[0]) takes on or off") }
            return arg == "on"
        }
        switch parts[0] {
        case ".quit", ".exit": return false
        case ".help": console.line(help)
        case ".from":
            guard let arg, store.schema.entity(named: arg) != nil else {
                throw CLIError("unknown type '\(arg ?? "")'" + NameSuggestion.hint(for: arg ?? "", in: store.schema.entities.map(\.name)))
            }
            s.from = arg
        case ".sort": s.sort = arg.map(SortKey.parseList) ?? []
        case ".limit":
            guard let arg else { s.limit = nil; break }
            guard let n = Int(arg), n >= 0 else { throw CLIError(".limit takes a whole number") }
            s.limit = n
        case ".offset":
            guard let arg, let n = Int(arg), n >= 0 else { throw CLIError(".offset takes a whole number") }
            s.offset = n
        case ".fields": s.fields = arg.map { $0.split(separator: ",").map { String($0).trimmed } }
        case ".format":
            guard let arg, let f = RowFormatter.Format(rawValue: arg) else { throw CLIError(".format takes table, json, jsonl, csv or ids") }
            s.format = f
        case ".count": s.count = try on()
        case ".explain": s.explain = try on()
        case ".get":
            guard let arg, let o = store.object(id: arg) else { throw StoreError.notFound(id: arg ?? "") }
            var w = JSONWriter(pretty: true)
            store.writeEnvelope(o, to: &w)
            console.line(w.string)
        default:
            throw CLIError("unknown command '\(parts[0])'; .help lists them")
        }
        return true
    }
}
