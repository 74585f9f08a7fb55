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
                   "cat trips.jsonl | tripstore import -"])

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let path = try ctx.positional(0, "FILE to import (or - for standard input)")
        let modeName = ctx.args.value("mode") ?? "insert"
        guard let mode = ImportMode(rawValue: modeName) else {
            throw ctx.usageError("--mode must be insert, upsert or skip-existing, got '\(modeName)'")
        }
        Trace.mark("start")
        let bytes = try ctx.readInput(path)
        Trace.mark("read input")
        // A progress line on a terminal for big files: each phase, and decoding in percent.
        let showProgress = bytes.count > 8 << 20
        func phase(_ text: String) {
            if showProgress { ctx.console.progress("\(path): \(text)") }
        }
        phase("decoding \(bytes.count / 1_000_000) MB")
        var lastPercent = -1
        let objects = try EnvelopeInput.decode(bytes, schema: ctx.schema) { done, total in
            let percent = done * 100 / max(total, 1)
            if percent != lastPercent {
                lastPercent = percent
                phase("decoding \(percent)%")
            }
        }
        Trace.mark("parse+decode \(objects.count) objects")
        phase("opening the store")
        let store = try ctx.openStore(.write)
        var tx = store.transaction()
        Trace.mark("open store")
        phase("linking \(objects.count) objects")
        try store.stage(objects, mode: mode, into: &tx)
        Trace.mark("stage (link)")
        phase("writing and flushing")
        let committed = try store.commit(tx, author: ctx.author)
        if showProgress { ctx.console.endProgress() }
        guard let t = committed else {
            ctx.console.line("nothing to import: the store is unchanged")
            return 0
        }
        ctx.console.line(summary(t))
        return 0
    }

    /// "inserted 3 objects (BusinessTrip 1, Trip 2), updated 1 (token 4)".
    static func summary(_ t: HistoryTransaction) -> String {
        var parts: [String] = []
        for kind in Change.Kind.allCases {
            let changes = t.changes.filter { $0.kind == kind }
            if changes.isEmpty { continue }
            var byType: [String: Int] = [:]
            for c in changes { byType[c.type, default: 0] += 1 }
            let detail = byType.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
            let verb = kind == .insert ? "inserted" : kind == .update ? "updated" : "deleted"
            parts.append("\(verb) \(changes.count) object\(changes.count == 1 ? "" : "s") (\(detail))")
        }
        return parts.joined(separator: "; ") + "; committed as token \(t.token)"
    }
}
