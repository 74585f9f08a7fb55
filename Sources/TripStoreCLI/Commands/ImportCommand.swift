import TripStoreEngine

/// `tripstore import FILE`: one all-or-nothing transaction.
enum ImportCommand {
    static let spec = CommandSpec(
        name: "import", summary: "import a JSON array or JSON Lines file of envelopes as one transaction",
        usage: "tripstore import FILE|- [--mode insert|upsert|skip-existing] [--author NAME]",
        valueOptions: ["mode": "insert (default; an existing id is an error), upsert, or skip-existing",
                       "author": "who made the change, for history (default $USER)"],
        examples: ["tripstore import SampleData/trips.json",
                   "tripstore import --mode upsert changes.jsonl",
                   "cat trips.jsonl | tripstore import -"], touchesLittle: true, maxPositionals: 1)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        // An import that fails leaves no trace: not even the new store's folder it opened.
        let storeExisted = FileIO.exists(ctx.storePath)
        do {
            return try importFile(ctx)
        } catch {
            if !storeExisted && !ctx.session.committed {
                ctx.session.closeAll()
                Store.removeIfUnused(ctx.storePath)
            }
            throw error
        }
    }

    private static func importFile(_ ctx: CommandContext) throws -> Int32 {
        let path = try ctx.positional(0, "FILE to import (or - for standard input)")
        let modeName = ctx.args.value("mode") ?? "insert"
        guard let mode = ImportMode(rawValue: modeName) else {
            throw ctx.usageError("--mode must be insert, upsert or skip-existing, got '\(modeName)'")
        }
        ProcessSetup.trace("start")
        let storeExisted = FileIO.exists(ctx.storePath)
        // Standard input is read before the store is opened: a bad stream leaves no trace.
        var bytes = path == "-" ? try ctx.readInput(path) : []
        // A progress line on a terminal for big inputs: each phase, and decoding in percent.
        let showProgress = (path == "-" ? bytes.count : FileIO.fileSize(path) ?? 0) > 8 << 20
        var importer = EnvelopeImporter(mode: mode, author: ctx.author)
        if showProgress {
            importer.progress = { phase in
                switch phase {
                case .reading(let size): ctx.console.progress("\(path): decoding and linking \(size / 1_000_000) MB")
                case .decoding(let percent): ctx.console.progress("\(path): decoding \(percent)%")
                case .linking(let n): ctx.console.progress("\(path): linking \(n) objects")
                case .writing: ctx.console.progress("\(path): writing and flushing")
                }
            }
        }
        // Freeing a big transaction, its input and its history object by object takes longer than exiting.
        importer.keepUntilExit = { ctx.console.keepUntilExit(KeptValue($0)) }
        // The store is opened (made, where there is none) only once the input is read and decoded.
        var opened: (store: Store, warned: Int)?
        let outcome: ImportOutcome
        do {
            outcome = try importer.importInput(file: path == "-" ? nil : path, bytes: &bytes, intoStoreAt: ctx.storePath, schema: ctx.schema,
                                               options: try ctx.options()) {
                let store = try ctx.openStore(.write)
                opened = (store, store.warnings.count)
                ProcessSetup.trace("open store")
                return store
            }
        } catch let e as IOError where e.path == path {
            throw CommandContext.cannotRead(path, e)
        } catch let e as ImportError {
            throw CLIError(e.description)
        }
        if let (store, warned) = opened {
            // What the commit warned of (the open's were printed as it opened).
            for w in store.warnings.dropFirst(warned) { ctx.console.err(CLIError.sentence(w)) }
        }
        if showProgress { ctx.console.endProgress() }
        ProcessSetup.trace("commit returned")
        switch outcome {
        case .unchanged where !((try? Store.exists(in: ctx.storePath)) ?? false):
            // Nothing to import where there was no store: make none (a folder
            // and lock file that hold no store would only say "no store" later).
            ctx.session.closeAll()
            if !storeExisted { Store.removeIfUnused(ctx.storePath) }
            ctx.console.line("nothing to import: no store was made at \(ctx.storePath)")
        case .unchanged:
            ctx.console.line("nothing to import: the store is unchanged")
        case .committed(let t):
            ctx.console.line(summary(t))
        case .bulk(let t):
            ctx.console.line(summary([(.insert, t.inserted.map { ($0.type, $0.count) })], token: t.token))
        }
        ProcessSetup.trace("summary")
        return 0
    }

    /// "inserted 3 objects (BusinessTrip 1, Trip 2), updated 1 (token 4)".
    static func summary(_ t: HistoryTransaction) -> String {
        // Type names are the schema's own strings, so comparing them is cheap;
        // a short list beats hashing a string per change.
        var counts: [(kind: Change.Kind, type: String, count: Int)] = []
        var last = -1
        for c in t.changes {
            if last >= 0 && counts[last].kind == c.kind && counts[last].type == c.type {
                counts[last].count += 1
                continue
            }
            if let i = counts.firstIndex(where: { $0.kind == c.kind && $0.type == c.type }) {
                last = i
                counts[i].count += 1
            } else {
                last = counts.count
                counts.append((c.kind, c.type, 1))
            }
        }
        var byKind: [(Change.Kind, [(String, Int)])] = []
        for kind in Change.Kind.allCases {
            let byType = counts.filter { $0.kind == kind }
            if !byType.isEmpty { byKind.append((kind, byType.map { ($0.type, $0.count) })) }
        }
        return summary(byKind, token: t.token)
    }

    /// "inserted N objects (Type n, …); …; committed as token T", each kind's types by name.
    static func summary(_ byKind: [(kind: Change.Kind, counts: [(type: String, count: Int)])], token: Int64) -> String {
        var parts: [String] = []
        for (kind, byType) in byKind {
            let count = byType.reduce(0) { $0 + $1.count }
            let detail = byType.sorted { $0.type < $1.type }.map { "\($0.type) \($0.count)" }.joined(separator: ", ")
            let verb = kind == .insert ? "inserted" : kind == .update ? "updated" : "deleted"
            parts.append("\(verb) \(count) object\(count == 1 ? "" : "s") (\(detail))")
        }
        return parts.joined(separator: "; ") + "; committed as token \(token)"
    }
}
