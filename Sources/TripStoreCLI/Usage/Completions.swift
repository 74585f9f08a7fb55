import TripStoreEngine

/// Shell completion scripts, made from the command table that `--help`
/// prints (`tripstore completions bash|zsh|fish`). Type and property names
/// come from the store the command line points at, through
/// `tripstore completions names types|properties`, which reads only the
/// store's schema record.
enum Completions {
    /// The values an option takes, as its usage line lists them
    /// (`--format table|json`, `--kind insert,update`).
    static func values(_ spec: CommandSpec) -> [String: [String]] {
        var out: [String: [String]] = [:]
        let words = spec.usage.split(whereSeparator: { $0 == " " || $0 == "[" || $0 == "]" || $0 == "\n" }).map(String.init)
        for (k, w) in words.enumerated() where w.hasPrefix("--") && k + 1 < words.count {
            let next = words[k + 1]
            let separator: Character? = next.contains("|") ? "|" : next.contains(",") && !next.contains("KEY") && next.first?.isLowercase == true ? "," : nil
            guard let separator, next.allSatisfy({ $0.isLowercase || $0 == "-" || $0 == separator }) else { continue }
            out[String(w.dropFirst(2)), default: []] = next.split(separator: separator).map(String.init)
        }
        return out
    }

    /// The words a command's first argument is one of, as its usage lists
    /// them (`completions bash|zsh|fish`).
    static func positionalValues(_ spec: CommandSpec) -> [String] {
        var out: [String] = []
        // Each usage line: `tripstore NAME a|b|c`, or a subcommand `tripstore NAME sub …`.
        for line in spec.usage.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard let at = words.firstIndex(of: Substring(spec.name)), at + 1 < words.count else { continue }
            let word = words[at + 1]
            guard word.allSatisfy({ $0.isLowercase || $0 == "|" }) else { continue }
            out += word.split(separator: "|").map(String.init)
        }
        return out
    }

    /// Options whose value is a name from the store, and which kind.
    static let storeNames: [String: String] = ["from": "types", "type": "types", "sort": "properties", "fields": "properties"]
    /// Options whose value is a file or a folder.
    static let paths: [String: String] = ["store": "-d", "schema": "-f", "output": "-f"]
    /// Commands whose arguments are files, and those whose arguments are ids.
    static let fileArguments: Set<String> = ["import", "validate", "apply"]
    static let idArguments: Set<String> = ["get", "delete", "update"]
    /// How many ids `completions names ids` gives at most.
    static let idLimit = 200

    static var commandNames: [String] { Commands.names + ["help"] }

    static func options(_ spec: CommandSpec) -> [String] {
        (Array(spec.valueOptions.keys) + Array(spec.flagOptions.keys)).sorted().map { "--" + $0 } + ["--help"]
    }

    static var bash: String {
        var s = #"""
        # tripstore completion for bash: source it from ~/.bashrc, or put it in
        # ~/.local/share/bash-completion/completions/tripstore
        _tripstore_names() {
            local store="" i w
            for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
                w=${COMP_WORDS[i]}
                if [[ $w == --store ]]; then
                    # bash splits --store=DIR at the '='.
                    store=${COMP_WORDS[i+1]}
                    [[ $store == = ]] && store=${COMP_WORDS[i+2]}
                elif [[ $w == --store=* ]]; then
                    store=${w#--store=}
                fi
            done
            # The word as typed: quotes, escaped spaces and a leading ~ mean what the shell would make of them.
            store=${store#[\"\']}; store=${store%[\"\']}; store=${store//\\ / }
            [[ $store == "~"* ]] && store=$HOME${store#"~"}
            local args=()
            [[ -n $store ]] && args=(--store "$store")
            "${COMP_WORDS[0]}" "${args[@]}" completions names "$@" 2>/dev/null
        }
        # Fills COMPREPLY one line a word, never splitting or expanding them.
        _tripstore_reply() {
            local IFS=$'\n' noglob=0
            [[ $- == *f* ]] && noglob=1
            set -f
            COMPREPLY=($("$@"))
            (( noglob )) || set +f
        }
        _tripstore() {
            local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]} cmd="" i
            [[ $prev == = ]] && prev=${COMP_WORDS[COMP_CWORD-2]}
            for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                    --store|--wait|--schema) ((i++)); [[ ${COMP_WORDS[i]} == = ]] && ((i++)) ;;
                    -*) ;;
                    *) cmd=${COMP_WORDS[i]}; break ;;
                esac
            done
            case $prev in

        """#
        for (option, flag) in paths.sorted(by: { $0.key < $1.key }) {
            s += "        --\(option)) compopt -o filenames 2>/dev/null; _tripstore_reply compgen \(flag) -- \"$cur\"; return ;;\n"
        }
        for (option, kind) in storeNames.sorted(by: { $0.key < $1.key }) {
            s += "        --\(option)) _tripstore_reply compgen -W \"$(_tripstore_names \(kind))\" -- \"$cur\"; return ;;\n"
        }
        s += "        --wait) return ;;\n    esac\n    case $cmd in\n"
        s += "        \"\") COMPREPLY=($(compgen -W \"\(commandNames.joined(separator: " ")) --store --wait --schema --version --help\" -- \"$cur\")); return ;;\n"
        s += "        help) COMPREPLY=($(compgen -W \"\(Commands.names.joined(separator: " ")) --man\" -- \"$cur\")); return ;;\n"
        for (spec, _) in Commands.all {
            s += "        \(spec.name))\n            case $prev in\n"
            let known = values(spec)
            for (option, values) in known.sorted(by: { $0.key < $1.key }) {
                s += "                --\(option)) COMPREPLY=($(compgen -W \"\(values.joined(separator: " "))\" -- \"$cur\")); return ;;\n"
            }
            // Any other option's value is the user's to type: offer nothing (not ids or files).
            for option in spec.valueOptions.keys.sorted() where known[option] == nil && storeNames[option] == nil && paths[option] == nil {
                s += "                --\(option)) return ;;\n"
            }
            s += "            esac\n"
            s += "            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W \"\(options(spec).joined(separator: " "))\" -- \"$cur\"))\n"
            if fileArguments.contains(spec.name) {
                s += "            else compopt -o filenames 2>/dev/null; _tripstore_reply compgen -f -- \"$cur\"\n"
            } else if idArguments.contains(spec.name) {
                // A list cut at its limit must not let the shell insert the longer prefix its ids share.
                s += "            else _tripstore_reply _tripstore_names ids \"$cur\"; (( ${#COMPREPLY[@]} >= \(idLimit) )) && COMPREPLY+=(\"$cur\")\n"
            } else if !positionalValues(spec).isEmpty {
                s += "            else COMPREPLY=($(compgen -W \"\(positionalValues(spec).joined(separator: " "))\" -- \"$cur\"))\n"
            }
            s += "            fi\n"
            s += "            return ;;\n"
        }
        s += "    esac\n}\ncomplete -F _tripstore tripstore\n"
        return s
    }

    /// zsh runs the bash function through its own bash-completion layer.
    static var zsh: String {
        "# tripstore completion for zsh: source it from ~/.zshrc after compinit\n"
            + "autoload -U +X bashcompinit && bashcompinit\n" + bash
    }

    static var fish: String {
        var s = "# tripstore completion for fish: put it in ~/.config/fish/completions/tripstore.fish\n"
        s += "function __tripstore_names\n    set -l store (string replace -r -- '^--store=' '' (commandline -opc | string match -r -- '^--store=.*'))\n"
        s += "    set -l words (commandline -opc)\n    set -l i (contains -i -- --store $words)\n"
        s += "    and set store $words[(math $i + 1)]\n"
        s += "    if test -n \"$store\"\n        tripstore --store $store completions names $argv 2>/dev/null\n"
        s += "    else\n        tripstore completions names $argv 2>/dev/null\n    end\nend\n"
        // A command is wanted until a word that is neither an option nor a global option's value.
        s += "function __tripstore_needs_command\n    set -l words (commandline -opc)\n    set -e words[1]\n"
        s += "    while set -q words[1]\n        switch $words[1]\n            case --store --wait --schema\n                set -e words[1]\n"
        s += "            case '-*'\n            case '*'\n                return 1\n        end\n        set -e words[1]\n    end\n    return 0\nend\n"
        s += "complete -c tripstore -f\n"
        s += "complete -c tripstore -n __tripstore_needs_command -a '\(commandNames.joined(separator: " "))'\n"
        s += "complete -c tripstore -n __tripstore_needs_command -l help\n"
        s += "complete -c tripstore -l store -r -F\ncomplete -c tripstore -l schema -r -F\ncomplete -c tripstore -l wait -x\ncomplete -c tripstore -l version\n"
        for (spec, _) in Commands.all {
            let when = "-n '__fish_seen_subcommand_from \(spec.name)'"
            let values = values(spec)
            for option in options(spec) {
                let name = String(option.dropFirst(2))
                var line = "complete -c tripstore \(when) -l \(name)"
                if let v = values[name] { line += " -xa '\(v.joined(separator: " "))'" }
                if let kind = storeNames[name] { line += " -xa '(__tripstore_names \(kind))'" }
                if paths[name] != nil { line += " -r -F" }
                s += line + "\n"
            }
            if fileArguments.contains(spec.name) { s += "complete -c tripstore \(when) -F\n" }
            if idArguments.contains(spec.name) {
                s += "complete -c tripstore \(when) -xa '(__tripstore_names ids (commandline -ct))'\n"
            }
            if !positionalValues(spec).isEmpty {
                s += "complete -c tripstore \(when) -xa '\(positionalValues(spec).joined(separator: " "))'\n"
            }
        }
        return s
    }
}
