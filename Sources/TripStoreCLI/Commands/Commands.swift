import TripStoreEngine

/// The command table: specs for help and scanning, and dispatch.
enum Commands {
    static let all: [(CommandSpec, @Sendable (CommandContext) throws -> Int32)] = [
        (ImportCommand.spec, ImportCommand.run),
        (ValidateCommand.spec, ValidateCommand.run),
        (QueryCommand.spec, QueryCommand.run),
        (ShellCommand.spec, ShellCommand.run),
        (DeleteCommand.spec, DeleteCommand.run),
        (UpdateCommand.spec, UpdateCommand.run),
        (HistoryCommand.spec, HistoryCommand.run),
        (ExportCommand.spec, ExportCommand.run),
        (ApplyCommand.spec, ApplyCommand.run),
        (GetCommand.spec, GetCommand.run),
        (StatsCommand.spec, StatsCommand.run),
        (CompactCommand.spec, CompactCommand.run),
        (MigrateCommand.spec, MigrateCommand.run),
        (VerifyCommand.spec, VerifyCommand.run),
        (SchemaCommand.spec, SchemaCommand.run),
        (CompletionsCommand.spec, CompletionsCommand.run),
    ]

    static let specs: [String: CommandSpec] = Dictionary(uniqueKeysWithValues: all.map { ($0.0.name, $0.0) })

    static func run(_ name: String, _ ctx: CommandContext) throws -> Int32 {
        guard let entry = all.first(where: { $0.0.name == name }) else { throw CLIError("unknown command '\(name)'") }
        return try entry.1(ctx)
    }

    static var overview: String {
        var s = """
        tripstore: a document store for Swift model class hierarchies, kept as plain JSON files.

        Usage: tripstore [--store DIR] [--wait SECONDS] [--schema FILE] COMMAND [OPTIONS]

        Commands:

        """
        let width = all.map(\.0.name.count).max() ?? 0
        for (spec, _) in all { s += "  " + spec.name.padded(to: width) + "  " + spec.summary + "\n" }
        s += """

        The store folder is --store DIR, else $TRIPSTORE_DIR, else ./tripstore.
        Commands use the schema the store records; a new store gets the trip schema,
        or the one in --schema FILE (a file as 'tripstore schema --format json' prints).
        Exit codes: 0 success, 1 usage or input error (nothing changed), 2 store damaged or locked, 3 internal error.
        Run 'tripstore COMMAND --help' (or 'tripstore help COMMAND', or -h) for a command's options
        and examples; 'tripstore --version' prints the version and the store formats it reads and writes.

        """
        return s
    }
}
