import TripStoreEngine

/// The scanned command line: the command, its options and its other words.
struct ParsedArguments {
    var command: String?
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []
    var help = false
    /// `--version` before any command.
    var version = false
    /// `help --man`: the manual page.
    var manualPage = false

    func value(_ name: String) -> String? { values[name]?.last }
    /// Every value of a repeatable option, in order.
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func has(_ flag: String) -> Bool { flags.contains(flag) }
}

/// Scans arguments without a package: global options anywhere, `--x=v` or
/// `--x v`, `--` ends the options, unknown options are usage errors.
enum ArgumentScanner {
    static let globalValues: Set<String> = ["store", "wait", "schema"]

    static func scan(_ args: [String]) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var i = 0
        var onlyPositionals = false
        var commandSpec: CommandSpec?
        func spec() -> CommandSpec? { commandSpec }
        func usage() -> String? { spec().map { "usage: " + $0.usage } }
        while i < args.count {
            let a = args[i]
            i += 1
            if onlyPositionals || !a.hasPrefix("--") || a == "--" {
                if a == "--" && !onlyPositionals { onlyPositionals = true; continue }
                if a == "-h" && !onlyPositionals { parsed.help = true; continue }
                // `tripstore help [COMMAND]` is `tripstore [COMMAND] --help`.
                if a == "help" && parsed.command == nil && !parsed.help { parsed.help = true; continue }
                // `tripstore help help`: the help of help is the overview.
                if a == "help" && parsed.command == nil { continue }
                if parsed.command == nil {
                    guard let named = Commands.spec(a) else {
                        throw CLIError("unknown command '\(a)'" + hint(a, Commands.names) + "; run 'tripstore --help' for the list")
                    }
                    parsed.command = a
                    commandSpec = named
                } else {
                    parsed.positionals.append(a)
                }
                continue
            }
            var name = String(a.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            if name == "help" { parsed.help = true; continue }
            if name == "version" && parsed.command == nil { parsed.version = true; continue }
            if name == "man" && parsed.command == nil && parsed.help { parsed.manualPage = true; continue }
            let takesValue = globalValues.contains(name) || spec()?.valueOptions[name] != nil
            let isFlag = spec()?.flagOptions[name] != nil
            if takesValue {
                var v = inline
                if v == nil {
                    guard i < args.count else {
                        throw CLIError("option '--\(name)' needs a value", usage: usage())
                    }
                    v = args[i]
                    i += 1
                }
                parsed.values[name, default: []].append(v!)
            } else if isFlag {
                if inline != nil { throw CLIError("option '--\(name)' takes no value", usage: usage()) }
                parsed.flags.insert(name)
            } else {
                let known = Array((spec()?.valueOptions.keys).map(Array.init) ?? []) + Array((spec()?.flagOptions.keys).map(Array.init) ?? []) + Array(globalValues)
                let whose = parsed.command.map { " for 'tripstore \($0)'" } ?? ""
                throw CLIError("unknown option '--\(name)'\(whose)" + hint(name, known), usage: usage())
            }
        }
        return parsed
    }

    static func hint(_ name: String, _ known: [String]) -> String {
        NameSuggestion.hint(for: name, in: known)
    }
}
