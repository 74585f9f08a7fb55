import TripStoreEngine

/// `tripstore completions bash|zsh|fish`: a completion script for the shell
/// (see `Completions`); `completions names types|properties|keys|ids [--] WORD`
/// is what the scripts ask for the store's own names that complete WORD.
enum CompletionsCommand {
    static let spec = CommandSpec(
        name: "completions", summary: "print a shell completion script (bash, zsh or fish)",
        usage: "tripstore completions bash|zsh|fish",
        examples: ["tripstore completions bash > ~/.local/share/bash-completion/completions/tripstore",
                   "tripstore completions zsh > ~/.zsh/tripstore.zsh   # then source it from ~/.zshrc",
                   "tripstore completions fish > ~/.config/fish/completions/tripstore.fish"],
        needsStore: false, touchesLittle: true)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        let shell = try ctx.positional(0, "the shell: bash, zsh or fish")
        // A script for one shell, or one list of names (those that complete a word).
        let most = shell != "names" ? 1 : 3
        if ctx.args.positionals.count > most { throw ctx.usageError("unexpected '\(ctx.args.positionals[most])'") }
        switch shell {
        case "bash": ctx.console.out(Completions.bash)
        case "zsh": ctx.console.out(Completions.zsh)
        case "fish": ctx.console.out(Completions.fish)
        case "names":
            // The store's schema record (or the program's), never the objects: quick enough for Tab.
            let kind = try ctx.positional(1, "types, properties, keys or ids")
            let word = ctx.args.positionals.count > 2 ? ctx.args.positionals[2] : ""
            let entities = ctx.schema.entities
            switch kind {
            case "types":
                for name in Completions.names(entities.map(\.name), completing: word, kind: kind) { ctx.console.line(name) }
            case "properties", "keys":
                var seen = Set<String>()
                let names = entities.flatMap { $0.properties.map(\.name) }.filter { seen.insert($0).inserted }
                for name in Completions.names(names, completing: word, kind: kind) { ctx.console.line(name) }
            case "ids":
                // Opens the store's image, as any reader does: the rows near the prefix are read.
                guard try Store.exists(in: ctx.storePath) else { return 0 }
                let store = try ctx.openStore(.read)
                for id in store.ids(withPrefix: word, limit: Completions.idLimit) {
                    ctx.console.line(id)
                }
            default: throw ctx.usageError("completions names takes types, properties, keys or ids, got '\(kind)'")
            }
        default: throw ctx.usageError("completions takes bash, zsh or fish, got '\(shell)'")
        }
        return 0
    }
}
