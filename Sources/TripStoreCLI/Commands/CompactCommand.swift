import TripStoreEngine

/// `tripstore compact`: a snapshot now, and a new journal.
enum CompactCommand {
    static let spec = CommandSpec(
        name: "compact", summary: "write a snapshot now and start a new journal (writers go on meanwhile)",
        usage: "tripstore compact [--background]",
        // Accepted as by every command that writes; a compaction records no transaction, so no one is named.
        valueOptions: ["author": "accepted for symmetry with the other writes; a compaction records no transaction"],
        flagOptions: ["background": "print nothing but an error, and do nothing if a compaction is running already (what a write that makes the journal due starts)"],
        examples: ["tripstore compact"], maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let background = ctx.args.has("background")
        guard try Store.exists(in: ctx.storePath) else { throw StoreError.noStore(path: ctx.storePath) }
        var options = try ctx.options()
        options.snapshotWriter = nil
        // The replaced files are removed after the lock is let go (see `Store.close`).
        options.snapshotsInBackground = true
        // Writing checks every piece of the image it reads; the open that
        // puts the snapshot in place, under the lock, must not check them all again.
        options.imageChecks = .onFirstTouch
        // Put in place between two commits: a writer holds the lock for a commit, a program for longer.
        if background && ctx.args.value("wait") == nil { options.lockWait = 600 }
        // On demand, the new snapshot's history index is left to a process of its own, as after any command's snapshot.
        let buildIndex = background || ctx.backgroundCompaction == nil
        let outcome = try LocklessCompaction.run(folder: ctx.storePath, waitForOthers: !background, evenIfEmpty: !background,
                                                 buildHistoryIndex: buildIndex,
                                                 readersWait: background ? LocklessCompaction.readersWait : 0) { access in
            try ctx.open(access, options: options)
        }
        if background { return 0 }
        if !buildIndex { ctx.backgroundCompaction?() }
        if outcome == .nothingToCompact {
            ctx.console.line("nothing to compact: the store holds no transaction")
            return 0
        }
        if outcome == .overtaken {
            ctx.console.line("another snapshot took its place while this one was written (a commit of many changes, a migration, a prune or a redaction); nothing more to do")
            return 0
        }
        let store = try ctx.open(.read, options: options)
        defer { store.close() }
        ctx.console.line("wrote snapshot-\(store.snapshotToken).jsonl (\(counted(store.objectCount, "object")), \(counted(store.historyCount, "transaction")), \(store.fileSizes.snapshot) bytes)")
        return 0
    }
}
