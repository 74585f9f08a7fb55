import TripStoreEngine

/// `tripstore migrate --schema NEW.json`: moves the store to a new schema
/// in one transaction (docs/cli.md, migrate), printing the plan first.
enum MigrateCommand {
    static let spec = CommandSpec(
        name: "migrate", summary: "move the store to a new schema (renames, additions, removals), keeping its history",
        usage: "tripstore migrate --schema NEW.json [--dry-run] [--author NAME]",
        valueOptions: ["author": "who the migration is recorded as (default $USER)"],
        flagOptions: ["dry-run": "print the plan and what the objects refuse, and change nothing"],
        examples: ["tripstore schema --format json > v2.json    # then edit: originalName, default, version",
                   "tripstore migrate --schema v2.json --dry-run",
                   "tripstore migrate --schema v2.json --author alice"], maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        guard ctx.args.value("schema") != nil else {
            throw ctx.usageError("migrate needs --schema FILE: the schema to move the store to (as 'tripstore schema --format json' prints it)")
        }
        let target = ctx.schema
        let dryRun = ctx.args.has("dry-run")
        let store = dryRun ? try ctx.openStoreWithItsSchema(.read) : try ctx.openStoreWithItsSchema(.write)
        let structural = SchemaMigration(from: store.schema, to: target)
        guard !structural.isEmpty else {
            // The same shape: only a new version to record, which needs no transaction.
            if store.schema.version != target.version {
                let change = "version \(target.version ?? "none") (was \(store.schema.version ?? "none")); the shape is unchanged, nothing to migrate"
                if dryRun {
                    ctx.console.line("dry run: would record " + change)
                    return 0
                }
                if try Migrator(store).recordVersion(of: target) {
                    ctx.console.line("recorded " + change)
                    return 0
                }
            }
            // A default or an original name that no change uses is a hint with nothing to act on.
            let hintsDiffer = SchemaFile.value(store.schema) != SchemaFile.value(target.keepingRenames(recordedIn: store.schema.descriptions))
            ctx.console.line("nothing to migrate: the store already has this schema (fingerprint \(target.fingerprint))"
                             + (hintsDiffer ? "; a default or originalName is used only by a migration that changes what it names" : ""))
            return 0
        }
        let versions = store.schema.version == target.version ? ""
            : ", version \(store.schema.version ?? "none") -> \(target.version ?? "none")"
        ctx.console.line("plan (schema \(store.schema.fingerprint) -> \(target.fingerprint)\(versions)):")
        for step in structural.steps { ctx.console.line("  " + step) }
        if dryRun {
            let checked = try Migrator(store).plan(to: target)
            if !checked.problems.isEmpty { throw StoreError.migrationRefused(checked.problems) }
            for note in checked.notes { ctx.console.line("  note: " + note) }
            ctx.console.line("dry run: the objects allow every change; nothing was changed")
            return 0
        }
        let done = try Migrator(store).migrate(to: target, author: ctx.author)
        ctx.adopt(done.store)
        for note in done.plan.notes { ctx.console.line("  note: " + note) }
        for w in done.store.warnings { ctx.console.err(CLIError.sentence(w)) }
        ctx.console.line("migrated \(counted(done.store.objectCount, "object")); committed as token \(done.transaction.token) with a new snapshot")
        return 0
    }
}
