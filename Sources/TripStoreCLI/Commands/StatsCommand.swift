import TripStoreEngine

/// `tripstore stats`: what the store holds and how big its files are.
enum StatsCommand {
    static let spec = CommandSpec(
        name: "stats", summary: "objects per type, indexes, file sizes and the last token",
        usage: "tripstore stats", examples: ["tripstore stats"], touchesLittle: true, maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let store = try ctx.openStore(.read)
        let c = ctx.console
        c.line("store        \(store.folder)")
        c.line("schema       \(store.schema.fingerprint)" + (store.schema.version.map { ", version \($0)" } ?? ""))
        c.line("objects      \(store.objectCount)")
        let width = store.schema.entities.map(\.name.count).max() ?? 0
        for e in store.schema.entities {
            c.line("  " + e.name.padded(to: width) + "  \(store.objectCount(of: e))")
        }
        c.line("indexes      " + store.indexDescriptions.joined(separator: ", "))
        let sizes = store.fileSizes
        c.line("snapshot     \(store.hasSnapshotFile ? "snapshot-\(store.snapshotToken).jsonl, \(sizes.snapshot) bytes" : "none yet")")
        if store.hasSnapshotFile {
            let image = store.imagePath
            let size = FileIO.fileSize(image)
            c.line("image        " + (size.map { "snapshot-\(store.snapshotToken).image, \($0) bytes" + (store.loadedFromImage ? " (opened from it)" : " (does not match; opened from the JSON)") } ?? "none (opened from the JSON)"))
        }
        c.line("journal      journal-\(store.snapshotToken).jsonl, \(sizes.journal) bytes, \(store.journalTransactionCount) transactions")
        if let size = FileIO.fileSize(store.journalStatePath) {
            let lines = store.journalStateLines
            c.line("state        journal-\(store.snapshotToken).state, \(size) bytes, " + (lines > 0 ? "covering \(lines) transactions (opened from it)" : "covering none (replayed)"))
        }
        c.line("history      \(store.historyCount) transactions retained")
        c.line("last token   \(store.lastToken)")
        return 0
    }
}
