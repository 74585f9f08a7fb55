import TripStoreEngine

/// `tripstore apply FILE|-`: replays `history --format feed` lines into this
/// store as the same transactions with the same tokens (a standby copy).
enum ApplyCommand {
    static let spec = CommandSpec(
        name: "apply", summary: "replay a change feed ('history --format feed') into this store, token for token",
        usage: "tripstore apply FILE|-",
        examples: ["tripstore --store standby apply feed.jsonl",
                   "tripstore history --follow --format feed | ssh standby tripstore --store /srv/trips apply -"], maxPositionals: 1)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let source = try ctx.positional(0, "FILE (or - for standard input)")
        let commandThresholds = try ctx.thresholdsOfACommand()
        // Lines are checked against the store as it is before it is opened to
        // write: a refused feed leaves no trace, not even a new folder.
        let current: (token: Int64, time: Double?)
        if try Store.exists(in: ctx.storePath) {
            let reader = try ctx.openStore(.read)
            current = (reader.lastToken, try reader.lastCommitTime())
            reader.close()
        } else {
            current = (0, nil)
        }
        let folderExisted = FileIO.exists(ctx.storePath)
        var writer: Store?
        // Warnings are printed as they come (an automatic snapshot that failed).
        var warned = 0
        func warnNew(_ w: Store) {
            for warning in w.warnings.dropFirst(warned) { ctx.console.err(CLIError.sentence(warning)) }
            warned = w.warnings.count
        }
        var first: Int64 = 0
        var applied = 0
        // A feed refused before its first transaction leaves no trace, not
        // even the new folder that opening the store to write made.
        defer {
            if applied == 0 && !folderExisted, let w = writer {
                w.close()
                Store.removeIfUnused(ctx.storePath)
            } else if let w = writer {
                // The automatic snapshot being written in the background takes its place before the process ends.
                w.close()
                warnNew(w)
                // Every command after this one replays what the journal holds:
                // past what a command leaves, fold it in a process of its own.
                if w.journalIsDue(by: commandThresholds) { ctx.backgroundCompaction?() }
            }
        }
        defer {
            if applied > 0, let writer {
                ctx.console.err("applied \(applied) transaction\(applied == 1 ? "" : "s") (tokens \(first + 1) to \(writer.lastToken))")
            }
        }
        func apply(_ line: FeedLine) throws {
            if writer == nil {
                let w = try ctx.openStore(.write)
                warned = w.warnings.count
                first = w.lastToken
                writer = w
            }
            if let result = try writer.map({ try FeedApplier($0).apply(line) }), result.store !== writer {
                // A migration: the store of the new schema holds the lock now.
                ctx.adopt(result.store)
                if let old = writer { warnNew(old) }
                writer = result.store
                warned = 0
            }
            applied += 1
            if let writer { warnNew(writer) }
        }
        var next = current.token + 1
        var time = current.time
        func check(_ line: FeedLine) throws {
            time = try FeedApplier.read(line, expecting: next, after: current.token, notBefore: time).timestamp
            next += 1
        }
        if source == "-" {
            // A live feed: each line is checked, then committed, as it arrives.
            var number = 0
            while let bytes = ctx.input.readLineBytes() {
                number += 1
                if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) { continue }
                let line = try FeedLine(bytes, number: number)
                if writer == nil { try check(line) }
                try apply(line)
            }
            return 0
        }
        // A file: every line is read and its tokens checked before the first
        // is committed. The lines share the file's bytes, and their insert
        // envelopes stay bytes until each line is applied.
        let bytes = try ctx.readInput(source)
        var ranges: [(Int, Range<Int>)] = []
        bytes.withUnsafeBufferPointer { buf in
            JSONLines.forEachLine(in: buf) { number, range, _ in ranges.append((number, range)) }
        }
        var lines: [FeedLine] = []
        for (number, range) in ranges {
            let line = try FeedLine(bytes, range: range, number: number)
            try check(line)
            lines.append(line)
        }
        for line in lines { try apply(line) }
        if lines.isEmpty { ctx.console.err("the feed holds no transaction; nothing was applied") }
        return 0
    }
}
