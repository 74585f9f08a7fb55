import TripStoreEngine

/// Rows of a type that match a predicate, for commands that select objects.
enum QuerySupport {
    /// Opens the store to write and selects the rows for `delete` or `update`;
    /// nil, after saying so, when nothing matches (nothing is committed then).
    static func openAndSelect(_ ctx: CommandContext, verb: String) throws -> (Store, [RowID])? {
        guard (ctx.args.value("where") == nil) != ctx.args.positionals.isEmpty else {
            throw ctx.usageError("give the ids to \(verb) or --where PREDICATE (not both)")
        }
        // A dry run writes nothing: it reads, as a reader may where a writer may not.
        let store: Store
        if ctx.args.has("dry-run") {
            guard try Store.exists(in: ctx.storePath) else { throw StoreError.noStore(path: ctx.storePath) }
            store = try ctx.openStore(.read)
        } else {
            store = try ctx.openExistingStore()
        }
        let rows = try selectedRows(ctx, store)
        if rows.isEmpty {
            ctx.console.line("nothing matches; nothing \(verb)d")
            return nil
        }
        return (store, rows)
    }

    /// The rows a writing command works on: `--where PREDICATE` (with `--from`)
    /// or the ids given; exactly one of the two.
    static func selectedRows(_ ctx: CommandContext, _ store: Store) throws -> [RowID] {
        if let predicate = ctx.args.value("where") {
            return try matchingRows(store, from: ctx.args.value("from") ?? store.schema.roots[0].name, predicate: predicate)
        }
        return try store.rows(forIDs: ctx.args.positionals)
    }

    static func matchingRows(_ store: Store, from typeName: String, predicate: String) throws -> [RowID] {
        do {
            return try store.run(try Query(predicate, from: typeName)).rows
        } catch {
            throw CLIError(error.description + (error.caretDisplay.isEmpty ? "" : "\n" + error.caretDisplay))
        }
    }
}
