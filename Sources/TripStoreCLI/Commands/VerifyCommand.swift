import TripStoreEngine

/// `tripstore verify [--repair]`: checks every file; cuts a torn tail on request.
enum VerifyCommand {
    static let spec = CommandSpec(
        name: "verify", summary: "check every snapshot and journal record; --repair cuts a torn journal tail and removes dangling references",
        usage: "tripstore verify [--repair]",
        flagOptions: ["repair": "cut a torn last journal line, keeping every complete transaction, and remove references to missing objects (one transaction by author 'repair')"],
        examples: ["tripstore verify", "tripstore verify --repair"])

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let c = ctx.console
        guard try StoreFiles(folder: ctx.storePath).exists() else { throw StoreError.noStore(path: ctx.storePath) }
        let store: Store
        do {
            var options = try ctx.options()
            options.useSnapshotImage = false  // check the JSON itself, every byte
            store = try Store.open(ctx.storePath, schema: ctx.schema, access: .read, options: options)
        } catch StoreError.danglingReferences {
            return try repairDangling(ctx)
        } catch let e as StoreError {
            c.err("error: " + e.description + CLIError.advice(e))
            if case .damaged = e { c.err("verify: the damage is not a torn tail; --repair cannot fix it and changed nothing") }
            return CLIError.exitCode(e)
        }
        let problems = store.checkInvariants()
        for p in problems { c.err("error: \(p)") }
        if !problems.isEmpty { return 2 }
        if store.hasTornTail {
            guard ctx.args.has("repair") else {
                c.err("verify: journal-\(store.snapshotToken).jsonl ends with an incomplete transaction (a torn write); 'tripstore verify --repair' cuts it")
                return 2
            }
            _ = try ctx.openStore(.write)  // a writer cuts the torn tail on open
            c.line("repaired: cut the torn tail of journal-\(store.snapshotToken).jsonl; \(store.lastToken) transactions intact")
            return 0
        }
        c.line("ok: \(store.table.count) objects, \(store.history.count) transactions in history, last token \(store.lastToken); checksums, order, references and ids verified")
        return 0
    }

    /// Lists every reference to a missing object; with `--repair`, removes them in one transaction.
    private static func repairDangling(_ ctx: CommandContext) throws -> Int32 {
        let c = ctx.console
        var options = try ctx.options()
        options.useSnapshotImage = false
        options.salvageDanglingReferences = true
        let found = try Store.open(ctx.storePath, schema: ctx.schema, access: .read, options: options)
        for d in found.danglingReferences { c.err("error: \(d)") }
        let n = found.danglingReferences.count
        let other = found.checkInvariants()
        if !other.isEmpty {
            for p in other { c.err("error: \(p)") }
            c.err("verify: besides \(n) dangling reference\(n == 1 ? "" : "s"), the store has damage that --repair cannot fix; nothing was changed")
            return 2
        }
        guard ctx.args.has("repair") else {
            c.err("verify: \(n) dangling reference\(n == 1 ? "" : "s"); 'tripstore verify --repair' removes \(n == 1 ? "it" : "them") (recorded in history by author 'repair')")
            return 2
        }
        let store = try Store.open(ctx.storePath, schema: ctx.schema, access: .write, options: options)
        let t: HistoryTransaction?
        do {
            t = try store.removeDanglingReferences(author: "repair")
        } catch let e as StoreError {
            c.err("error: " + e.description)
            c.err("verify: --repair changed nothing")
            return CLIError.exitCode(e)
        }
        c.line("repaired: removed \(n) dangling reference\(n == 1 ? "" : "s")"
               + (t.map { " as transaction \($0.token) by author 'repair'" } ?? " (their holders were deleted later; the files were rewritten)")
               + "; \(store.table.count) objects intact")
        return 0
    }
}
