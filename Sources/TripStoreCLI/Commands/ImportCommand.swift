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
                   "cat trips.jsonl | tripstore import -"], maxPositionals: 1)

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
        var identity: FileIdentity?
        // A big file into an empty store is read a window at a time, straight
        // into records, as a snapshot is loaded; anything else is read whole.
        let streams = path != "-" && Store.mayTakeBulkImport(ctx.storePath)
        var bytes = streams ? [] : try ctx.readInput(path, identity: &identity)
        ProcessSetup.trace("read input")
        let size = streams ? (FileIO.fileSize(path) ?? 0) : bytes.count
        // A progress line on a terminal for big files: each phase, and decoding in percent.
        let showProgress = size > 8 << 20
        func phase(_ text: String) {
            if showProgress { ctx.console.progress("\(path): \(text)") }
        }
        // The bulk path reads the input before the store is opened, so that an
        // input it does not take (bad input among others) leaves no trace.
        var opened: Store?
        phase("decoding and linking \(size / 1_000_000) MB")
        if Store.mayTakeBulkImport(ctx.storePath),
           let plan = streams ? try ctx.readingInput(path, { try Store.planBulkImport(file: path, schema: ctx.schema, options: try ctx.options(), identity: &identity) })
                              : Store.planBulkImport(&bytes, schema: ctx.schema, options: try ctx.options()) {
            phase("opening the store")
            let store = try ctx.openStore(.write)
            opened = store
            if store.acceptsBulkImport(plan) {
                // Read: the input's memory can serve the snapshot's writing.
                bytes = []
                phase("writing and flushing")
                let before = store.warnings.count
                if let t = try store.importInBulk(plan, author: ctx.author) {
                    for w in store.warnings.dropFirst(before) { ctx.console.err(CLIError.sentence(w)) }
                    if showProgress { ctx.console.endProgress() }
                    ProcessSetup.trace("commit returned")
                    ctx.console.line(summary([(.insert, t.inserted.map { ($0.type, $0.count) })], token: t.token))
                    ProcessSetup.trace("summary")
                    return 0
                }
            }
            ProcessSetup.trace("bulk import does not apply")
        }
        if bytes.isEmpty && path != "-" {
            // Read again only what was read before: the same file, unchanged.
            let before = identity
            bytes = try ctx.readInput(path, identity: &identity)
            guard before == nil || identity == before else {
                throw CLIError("\(path) changed while it was imported (it is not the file first read); nothing was imported: import it again")
            }
        }
        phase("decoding \(bytes.count / 1_000_000) MB")
        var lastPercent = -1
        var objects = try EnvelopeInput.decode(bytes, schema: ctx.schema) { done, total in
            let percent = done * 100 / max(total, 1)
            if percent != lastPercent {
                lastPercent = percent
                phase("decoding \(percent)%")
            }
        }
        ProcessSetup.trace("parse+decode \(objects.count) objects")
        // Nothing to import where there is no store yet: make none (a folder
        // and lock file that hold no store would only say "no store" later).
        if objects.isEmpty && opened == nil && !FileIO.exists(ctx.storePath) {
            if showProgress { ctx.console.endProgress() }
            ctx.console.line("nothing to import: no store was made at \(ctx.storePath)")
            return 0
        }
        phase("opening the store")
        let store = try opened ?? ctx.openStore(.write)
        if store.schema.fingerprint != ctx.schema.fingerprint {
            // Another writer extended the store's schema meanwhile: decode with it.
            objects = try EnvelopeInput.decode(bytes, schema: store.schema)
        }
        var tx = store.transaction()
        ProcessSetup.trace("open store")
        phase("linking \(objects.count) objects")
        try store.stage(objects, mode: mode, into: &tx)
        ProcessSetup.trace("stage (link)")
        phase("writing and flushing")
        let committed = try ctx.commit(tx, to: store)
        // Freeing a big transaction, its input and its history object by object takes longer than exiting.
        ctx.console.keepUntilExit(KeptValue((tx, objects, committed)))
        if showProgress { ctx.console.endProgress() }
        guard let t = committed else {
            ctx.console.line("nothing to import: the store is unchanged")
            return 0
        }
        ProcessSetup.trace("commit returned")
        ctx.console.line(summary(t))
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
