import TripStoreEngine

/// What a command accepts, and its help text.
struct CommandSpec: Sendable {
    var name: String
    var summary: String
    var usage: String
    /// Options that take a value (`--limit 5` or `--limit=5`).
    var valueOptions: [String: String] = [:]
    /// Options that are flags (`--count`).
    var flagOptions: [String: String] = [:]
    var examples: [String] = []
    var needsStore = true
    /// It touches little of a store (a query, one object, a small write): it
    /// checks the image's pieces as it reads them, not all at open, and holds
    /// its output back until it knows none was damaged.
    var touchesLittle = false
    /// The most words after the command (a file, an id), where it takes a
    /// fixed number; nil where it takes any (ids, a predicate in pieces).
    var maxPositionals: Int?

    var help: String {
        var s = "\(summary)\n\nUsage: \(usage)\n"
        let all = valueOptions.map { ("--\($0.key) VALUE", $0.value) } + flagOptions.map { ("--\($0.key)", $0.value) }
        let globals = [("--store DIR", "the store folder (default $TRIPSTORE_DIR, else ./tripstore)"),
                       ("--wait SECONDS", "how long a writer waits for another writer's lock (default 5)")]
        let rows = all.sorted { $0.0 < $1.0 } + globals
        if !rows.isEmpty {
            s += "\nOptions:\n"
            let width = rows.map(\.0.count).max() ?? 0
            for (k, v) in rows { s += "  " + k.padded(to: width) + "  " + v + "\n" }
        }
        if !examples.isEmpty {
            s += "\nExamples:\n" + examples.map { "  " + $0 }.joined(separator: "\n") + "\n"
        }
        return s
    }
}

