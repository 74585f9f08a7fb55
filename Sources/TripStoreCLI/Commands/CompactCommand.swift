import TripStoreEngine

/// `tripstore compact`: a snapshot now, and a new journal.
enum CompactCommand {
    static let spec = CommandSpec(
        name: "compact", summary: "write a snapshot now and start a new journal",
        usage: "tripstore compact",
        // Accepted as by every command that writes; a compaction records no transaction, so no one is named.
        valueOptions: ["author": "accepted for symmetry with the other writes; a compaction records no transaction"],
        examples: ["tripstore compact"], maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let store = try ctx.openExistingStore()
        try store.compact()
        ctx.console.line("wrote snapshot-\(store.snapshotToken).jsonl (\(counted(store.objectCount, "object")), \(counted(store.historyCount, "transaction")), \(store.fileSizes.snapshot) bytes)")
        return 0
    }
}
