import TripStoreEngine

/// The command table: specs for help and scanning, and dispatch.
enum Commands {
    /// Each command's name, spec and entry point. A spec (its options,
    /// help and examples) is built only when something asks for it, so a
    /// command does not pay for the other commands' at start.
    static let table: [(name: String, spec: @Sendable () -> CommandSpec, run: @Sendable (CommandContext) throws -> Int32)] = [
        ("import", { ImportCommand.spec }, ImportCommand.run),
        ("validate", { ValidateCommand.spec }, ValidateCommand.run),
        ("query", { QueryCommand.spec }, QueryCommand.run),
        ("shell", { ShellCommand.spec }, ShellCommand.run),
        ("delete", { DeleteCommand.spec }, DeleteCommand.run),
        ("update", { UpdateCommand.spec }, UpdateCommand.run),
        ("history", { HistoryCommand.spec }, HistoryCommand.run),
        ("export", { ExportCommand.spec }, ExportCommand.run),
        ("apply", { ApplyCommand.spec }, ApplyCommand.run),
        ("get", { GetCommand.spec }, GetCommand.run),
        ("stats", { StatsCommand.spec }, StatsCommand.run),
        ("compact", { CompactCommand.spec }, CompactCommand.run),
        ("migrate", { MigrateCommand.spec }, MigrateCommand.run),
        ("verify", { VerifyCommand.spec }, VerifyCommand.run),
        ("schema", { SchemaCommand.spec }, SchemaCommand.run),
        ("completions", { CompletionsCommand.spec }, CompletionsCommand.run),
    ]

    /// Every command's spec and entry point, in the order help lists them.
    static var all: [(CommandSpec, @Sendable (CommandContext) throws -> Int32)] { table.map { ($0.spec(), $0.run) } }

    /// The command names.
    static var names: [String] { table.map(\.name) }

    /// The spec of the command called `name`, if there is one.
    static func spec(_ name: String) -> CommandSpec? { table.first { $0.name == name }?.spec() }

    static func run(_ name: String, _ ctx: CommandContext) throws -> Int32 {
        guard let entry = table.first(where: { $0.name == name }) else { throw CLIError("unknown command '\(name)'") }
        return try entry.run(ctx)
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
