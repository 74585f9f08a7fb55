import TripStoreEngine

/// `tripstore completions bash|zsh|fish`: a completion script for the shell
/// (see `Completions`); `completions names types|properties` is what the
/// scripts ask for the store's own names.
enum CompletionsCommand {
    static let spec = CommandSpec(
        name: "completions", summary: "print a shell completion script (bash, zsh or fish)",
        usage: "tripstore completions bash|zsh|fish",
        examples: ["tripstore completions bash > ~/.local/share/bash-completion/completions/tripstore",
                   "tripstore completions zsh > ~/.zsh/tripstore.zsh   # then source it from ~/.zshrc",
                   "tripstore completions fish > ~/.config/fish/completions/tripstore.fish"],
        needsStore: false)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let shell = try ctx.positional(0, "the shell: bash, zsh or fish")
        // A script for one shell, or one list of names (ids after a prefix).
        let most = shell != "names" ? 1 : ctx.args.positionals.dropFirst().first == "ids" ? 3 : 2
        if ctx.args.positionals.count > most { throw ctx.usageError("unexpected '\(ctx.args.positionals[most])'") }
        switch shell {
        case "bash": ctx.console.out(Completions.bash)
        case "zsh": ctx.console.out(Completions.zsh)
        case "fish": ctx.console.out(Completions.fish)
        case "names":
            // The store's schema record (or the program's), never the objects: quick enough for Tab.
            let kind = try ctx.positional(1, "types, properties or ids")
            let entities = ctx.schema.entities
            switch kind {
            case "types": for e in entities { ctx.console.line(e.name) }
            case "properties":
                var seen = Set<String>()
                for e in entities { for p in e.properties where seen.insert(p.name).inserted { ctx.console.line(p.name) } }
            case "ids":
                // Opens the store's image, as any reader does: the rows near the prefix are read.
                guard try Store.exists(in: ctx.storePath) else { return 0 }
                let store = try ctx.openStore(.read)
                for id in store.ids(withPrefix: ctx.args.positionals.count > 2 ? ctx.args.positionals[2] : "", limit: Completions.idLimit) {
                    ctx.console.line(id)
                }
            default: throw ctx.usageError("completions names takes types, properties or ids, got '\(kind)'")
            }
        default: throw ctx.usageError("completions takes bash, zsh or fish, got '\(shell)'")
        }
        return 0
    }
}
