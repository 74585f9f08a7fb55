import TripStoreEngine

/// Rows of a type that match a predicate, for commands that select objects.
enum QuerySupport {
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
            throw CLIError(error.description + "\n" + error.caretDisplay)
        }
    }
}
