import TripStoreEngine

/// `tripstore update ID... --set key=value` or `update --where PREDICATE --set …`.
enum UpdateCommand {
    static let spec = CommandSpec(
        name: "update", summary: "change attributes; history keeps each old and new value",
        usage: "tripstore update ID... | --where PREDICATE --set KEY=VALUE [--set …] [--from TYPE] [--author NAME]",
        valueOptions: ["set": "KEY=VALUE, read in the attribute's type (quotes optional for text, null for nil); repeat for more",
                       "where": "update every object that matches this predicate",
                       "from": "the root type for --where (default: the store's first root type, Trip for trips)",
                       "author": "who made the change, for history (default $USER)"],
        examples: ["tripstore update rome-summit --set perDiemRate=175 --set 'purpose=Sales summit 2026'",
                   "tripstore update --where 'is PersonalTrip && notes == nil' --set 'notes=\"to plan\"'"], touchesLittle: true)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let sets = ctx.args.all("set")
        guard !sets.isEmpty else { throw ctx.usageError("missing --set KEY=VALUE") }
        var assignments: [(name: String, text: String)] = []
        for s in sets {
            guard let eq = s.firstIndex(of: "=") else { throw ctx.usageError("--set needs KEY=VALUE, got '\(s)'") }
            assignments.append((String(s[..<eq]).trimmed, String(s[s.index(after: eq)...])))
        }
        guard let (store, rows) = try QuerySupport.openAndSelect(ctx, verb: "update") else { return 0 }
        guard let t = try ctx.reportingWarnings(of: store, { try store.update(rows, set: assignments, author: ctx.author) }) else {
            ctx.console.line("the values are already set; nothing changed")
            return 0
        }
        ctx.console.line(ImportCommand.summary(t))
        return 0
    }
}
