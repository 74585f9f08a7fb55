import TripStoreEngine

/// `tripstore delete ID...` or `delete --where PREDICATE`, following delete rules.
enum DeleteCommand {
    static let spec = CommandSpec(
        name: "delete", summary: "delete objects, following delete rules; each leaves a tombstone",
        usage: "tripstore delete ID... | --where PREDICATE [--from TYPE] [--dry-run] [--author NAME]",
        valueOptions: ["where": "delete every object that matches this predicate",
                       "from": "the root type for --where (default: the store's first root type, Trip for trips)",
                       "author": "who made the change, for history (default $USER)"],
        flagOptions: ["dry-run": "show what would be deleted (cascades included) and change nothing"],
        examples: ["tripstore delete rome-summit", "tripstore delete --where 'name ^= \"Draft:\"' --dry-run"], touchesLittle: true)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        guard let (store, rows) = try QuerySupport.openAndSelect(ctx, verb: "delete") else { return 0 }
        var tx = store.transaction()
        for r in rows { try tx.delete(r) }
        if ctx.args.has("dry-run") {
            try tx.checkDenyRules()
            let changes = tx.changes()
            ctx.console.line("would delete \(counted(changes.filter { $0.kind == .delete }.count, "object")) (dry run; nothing changed):")
            for c in changes where c.kind == .delete { ctx.console.line("  \(c.type) \(c.id)") }
            for c in changes where c.kind == .update { ctx.console.line("  and unlink from \(c.type) \(c.id): \(c.values.map(\.name).joined(separator: ", "))") }
            return 0
        }
        guard let t = try ctx.commit(tx, to: store) else { return 0 }
        ctx.console.line(ImportCommand.summary(t))
        return 0
    }
}
