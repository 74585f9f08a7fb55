import TripStoreEngine

/// `tripstore validate FILE`: checks an import file; never changes anything.
enum ValidateCommand {
    static let spec = CommandSpec(
        name: "validate", summary: "check an import file against the schema without changing any store",
        usage: "tripstore validate FILE [--limit N]",
        valueOptions: ["limit": "report at most N errors (default 100)"],
        examples: ["tripstore validate SampleData/trips.json"], needsStore: false, maxPositionals: 1)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let path = try ctx.positional(0, "FILE to validate")
        let limit = try ctx.intOption("limit") ?? 100
        let bytes = try ctx.readInput(path)
        var errors: [String] = []
        var objects: [DecodedObject] = []
        do {
            objects = try EnvelopeInput.decode(bytes, schema: ctx.schema, maxErrors: max(limit, 1))
        } catch let list as EnvelopeErrors {
            let es = list.errors
            errors = es.map(\.description)
        }
        if errors.isEmpty {
            // References resolve against the file and, when there is one, the store.
            let store: Store
            if (try? Store.exists(in: ctx.storePath)) == true {
                store = try ctx.openStore(.read)
            } else {
                store = Store.empty(schema: ctx.schema)
            }
            errors = store.referenceErrors(objects, limit: max(limit, 1)).map(\.description)
        }
        if errors.isEmpty {
            ctx.console.line("\(path): \(counted(objects.count, "object")), valid")
            return 0
        }
        for e in errors { ctx.console.err("error: \(path): \(e)") }
        ctx.console.err("\(path): \(errors.count) error\(errors.count == 1 ? "" : "s")\(errors.count >= limit ? " (stopped at the limit)" : "")")
        return 1
    }
}
