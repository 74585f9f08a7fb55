import TripStoreEngine

/// Shell completion scripts, made from the command table that `--help`
/// prints (`tripstore completions bash|zsh|fish`). Type and property names
/// come from the store the command line points at, through
/// `tripstore completions names types|properties|keys`, which reads only the
/// store's schema record; ids through `completions names ids`.
///
/// A name taken from a store is data, never code (docs/cli.md): the scripts
/// hand each one to the shell's own quoting (zsh's `compadd`, fish) or quote
/// it themselves (bash), so it lands on the line as one word whatever it holds.
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

    /// Options whose value is a name from the store, and which kind
    /// (`keys`: property names that may start with `-`, for `--sort`).
    static let storeNames: [String: String] = ["from": "types", "type": "types", "sort": "keys", "fields": "properties"]
    /// Options whose value is a folder (`d`) or a file (`f`).
    static let paths: [String: String] = ["store": "d", "schema": "f", "output": "f"]
    /// Options that take a value before any command.
    static let globalValueOptions = ["store", "wait", "schema"]
    /// Commands whose arguments are files, and those whose arguments are ids.
    static let fileArguments: Set<String> = ["import", "validate", "apply"]
    static let idArguments: Set<String> = ["get", "delete", "update"]
    /// How many ids `completions names ids` gives at most.
    static let idLimit = 200

    static var commandNames: [String] { Commands.names + ["help"] }

    static func options(_ spec: CommandSpec) -> [String] {
        (Array(spec.valueOptions.keys) + Array(spec.flagOptions.keys)).sorted().map { "--" + $0 } + ["--help"]
    }

    /// What `completions names types|properties|keys WORD` prints: the
    /// names that complete WORD. For properties and keys WORD is a comma
    /// list whose last item is completed (`name,st` → `name,startDate`); a
    /// key keeps a `-` before that item (`-st` → `-startDate`, descending).
    static func names(_ names: [String], completing word: String, kind: String) -> [String] {
        var head = ""
        var item = Substring(word)
        if kind != "types", let comma = word.lastIndex(of: ",") {
            head = String(word[...comma])
            item = word[word.index(after: comma)...]
        }
        if kind == "keys", item.first == "-" {
            head += "-"
            item = item.dropFirst()
        }
        return names.filter { $0.hasPrefix(item) }.map { head + $0 }
    }

    // MARK: bash and zsh

    /// What bash and zsh share: `_tripstore_complete` reads the words typed
    /// after the program (`_ts_w`, unquoted) and the word being typed
    /// (`_ts_cur`), and leaves the candidates, unquoted, in `_ts_r` (or a
    /// kind of path in `_ts_files`); each shell quotes them its own way.
    static var sharedFunctions: String {
        var s = #"""
        # Adds each word that starts with $1 to the candidates.
        _tripstore_words() {
            local w c=$1
            shift
            for w in "$@"; do [[ $w == "$c"* ]] && _ts_r+=("$w"); done
            return 0
        }
        # Adds what `completions names KIND -- WORD` prints, one line a name; nothing
        # where the program was not found.
        _tripstore_names() {
            local out line
            [[ -n $_ts_prog ]] || return 0
            if [[ -n $_ts_store ]]; then out=$("$_ts_prog" --store "$_ts_store" completions names "$1" -- "$2" 2>/dev/null)
            else out=$("$_ts_prog" completions names "$1" -- "$2" 2>/dev/null)
            fi
            while IFS= read -r line; do [[ -n $line ]] && _ts_r+=("$line"); done <<< "$out"
            return 0
        }
        # The ids that start with $1; $2 is 1 after the command's '--'.
        _tripstore_ids() {
            local c
            local -a keep
            _tripstore_names ids "$1"
            # A list cut at its limit must not let the shell insert the longer prefix its ids share.

        """#
        s += "    (( ${#_ts_r[@]} >= \(idLimit) )) && _ts_r+=(\"$1\")\n"
        s += #"""
            # Before '--' an id that starts with '-' would be read as an option: it is offered after it.
            (( $2 )) && return 0
            for c in "${_ts_r[@]}"; do [[ $c == -* ]] || keep+=("$c"); done
            _ts_r=("${keep[@]}")
        }
        _tripstore_complete() {
            [[ -n ${ZSH_VERSION-} ]] && { emulate -L zsh; setopt ksharrays; }
            local cur=$_ts_cur prev="" cmd="" w i=0 n=${#_ts_w[@]} ended=0

        """#
        s += "    local vals=\" \(globalValueOptions.map { "--" + $0 }.joined(separator: " ")) \"\n"
        s += #"""
            _ts_r=()
            _ts_pre=""
            _ts_files=""
            _ts_store=""
            # The command is the first word that is neither an option nor an option's
            # value; after its '--' every word is an argument.
            while (( i < n )); do
                w=${_ts_w[i]}
                (( i++ ))
                if [[ -n $cmd && $w == -- ]]; then ended=1; break; fi
                [[ $w == --store ]] && _ts_store=${_ts_w[i]-}
                [[ $w == --store=* ]] && _ts_store=${w#--store=}
                if [[ $vals == *" $w "* ]]; then (( i++ ))
                elif [[ -z $cmd && $w != -* ]]; then
                    cmd=$w
                    case $cmd in

        """#
        for (spec, _) in Commands.all where !spec.valueOptions.isEmpty {
            s += "                \(spec.name)) vals+=\"\(spec.valueOptions.keys.sorted().map { "--" + $0 }.joined(separator: " ")) \" ;;\n"
        }
        s += #"""
                    esac
                fi
            done
            [[ $_ts_store == "~" || $_ts_store == "~/"* ]] && _ts_store=$HOME${_ts_store#"~"}
            if (( ! ended )); then
                if [[ $cur == --*=* ]]; then
                    _ts_pre=${cur%%=*}=
                    prev=${_ts_pre%=}
                    cur=${cur#*=}
                elif (( n > 0 )); then
                    prev=${_ts_w[n-1]}
                fi
            fi
            case $prev in

        """#
        for (option, kind) in paths.sorted(by: { $0.key < $1.key }) {
            s += "        --\(option)) _ts_files=\(kind); return ;;\n"
        }
        for (option, kind) in storeNames.sorted(by: { $0.key < $1.key }) {
            s += "        --\(option)) _tripstore_names \(kind) \"$cur\"; return ;;\n"
        }
        s += "        --wait) return ;;\n    esac\n    case $cmd in\n"
        s += "        \"\") _tripstore_words \"$cur\" \(commandNames.joined(separator: " ")) --store --wait --schema --version --help ;;\n"
        s += "        help) _tripstore_words \"$cur\" \(Commands.names.joined(separator: " ")) --man ;;\n"
        for (spec, _) in Commands.all {
            s += "        \(spec.name))\n            case $prev in\n"
            let known = values(spec)
            for (option, values) in known.sorted(by: { $0.key < $1.key }) {
                s += "                --\(option)) _tripstore_words \"$cur\" \(values.joined(separator: " ")) ;;\n"
            }
            // Any other option's value is the user's to type: offer nothing (not ids or files).
            let free = spec.valueOptions.keys.sorted().filter { known[$0] == nil && storeNames[$0] == nil && paths[$0] == nil }
            if !free.isEmpty { s += "                " + free.map { "--" + $0 }.joined(separator: "|") + ") ;;\n" }
            s += "                *)\n"
            // `--flag=` takes no value: nothing to offer after its '='.
            s += "                    if [[ -n $_ts_pre ]]; then :\n"
            s += "                    elif (( ! ended )) && [[ $cur == -* ]]; then _tripstore_words \"$cur\" \(options(spec).joined(separator: " "))\n"
            if fileArguments.contains(spec.name) {
                s += "                    else _ts_files=f\n"
            } else if idArguments.contains(spec.name) {
                s += "                    else _tripstore_ids \"$cur\" \"$ended\"\n"
            } else if !positionalValues(spec).isEmpty {
                s += "                    else _tripstore_words \"$cur\" \(positionalValues(spec).joined(separator: " "))\n"
            }
            s += "                    fi ;;\n            esac ;;\n"
        }
        s += "    esac\n    return 0\n}\n"
        return s
    }

    static var bash: String {
        #"""
        # tripstore completion for bash. Load it from ~/.bashrc:
        #     source <(tripstore completions bash)
        # or save it as ~/.local/share/bash-completion/completions/tripstore.
        # It finds the program however the line reaches it: on PATH, by a path, or
        # through an alias (alias tripstore=.build/release/tripstore). Aliases of the
        # program defined before this script complete too; for any other name:
        #     complete -F _tripstore ts
        # Ids and names from the store are inserted quoted, one word each. An id that
        # starts with '-' is offered after '--' (tripstore get -- --draft).

        # Splits $1 into the words the shell will pass, quotes and backslashes
        # removed, in _ts_split; the last one (perhaps empty) is the word being typed.
        # Of that word, readline replaces only the part after an open quote or a
        # COMP_WORDBREAKS character: _ts_at is how many characters come before that
        # part, and _ts_q the quote still open (' " or $').
        _tripstore_split() {
            local s=$1 c w="" q="" i=0 n=${#1} brk=0 qat=0 inword=0
            _ts_split=() _ts_op=0
            while (( i < n )); do
                c=${s:i:1}
                (( i++ ))
                if [[ $q == "'" ]]; then
                    if [[ $c == "'" ]]; then q=""; else w+=$c; fi
                    continue
                elif [[ $q == '"' ]]; then
                    if [[ $c == '"' ]]; then q=""
                    elif [[ $c == '\' && ( ${s:i:1} == '"' || ${s:i:1} == '\' || ${s:i:1} == '$' || ${s:i:1} == '`' ) ]]; then w+=${s:i:1}; (( i++ ))
                    else w+=$c
                    fi
                    continue
                elif [[ $q == "\$'" ]]; then
                    # \n and the like are not decoded: enough for a prefix to match.
                    if [[ $c == "'" ]]; then q=""
                    elif [[ $c == '\' ]]; then w+=${s:i:1}; (( i++ ))
                    else w+=$c
                    fi
                    continue
                fi
                case $c in
                    ' '|$'\t'|$'\n')
                        (( inword )) && _ts_split+=("$w")
                        w=""; inword=0; brk=0; _ts_op=0
                        continue ;;
                    '\') w+=${s:i:1}; (( i++ )) ;;
                    "'"|'"') q=$c; qat=${#w} ;;
                    '$')
                        if [[ ${s:i:1} == "'" ]]; then q="\$'"; qat=${#w}; (( i++ ))
                        else w+=$c
                        fi ;;
                    # An operator the user typed (a redirect, a pipe): what follows is not one word.
                    ';'|'&'|'|'|'<'|'>'|'('|')') w+=$c; _ts_op=1; [[ $COMP_WORDBREAKS == *"$c"* ]] && brk=${#w} ;;
                    *) w+=$c; [[ $COMP_WORDBREAKS == *"$c"* ]] && brk=${#w} ;;
                esac
                inword=1
            done
            _ts_split+=("$w")
            _ts_q=$q
            if [[ -n $q ]]; then _ts_at=$qat; else _ts_at=$brk; fi
        }
        # $1 as the shell reads it back as one word, where $2 is the quote open on
        # the line before it; the quote is closed after it.
        _tripstore_quote() {
            local s=$1
            case $2 in
                "'") s=${s//\'/\'\\\'\'}; _ts_quoted=$s\' ;;
                '"')
                    s=${s//\\/\\\\}; s=${s//\"/\\\"}; s=${s//\$/\\\$}; s=${s//\`/\\\`}
                    # A '!' inside double quotes is history expansion: it goes outside them.
                    _ts_quoted=${s//!/\"\\!\"}\" ;;
                "\$'") s=${s//\\/\\\\}; _ts_quoted=${s//\'/\\\'}\' ;;
                *)
                    if [[ $s == *[!A-Za-z0-9_.,:/@%+=-]* ]]; then printf -v _ts_quoted %q "$s"
                    else _ts_quoted=$s
                    fi ;;
            esac
        }
        # The program to ask for names, in _ts_prog: the line's first word, an alias
        # replaced by its words (which go before the typed ones), a name looked up
        # on PATH. Inside a function an alias is not expanded, so it must be here.
        _tripstore_program() {
            local w=$1 seen=" " k
            local -a a
            while [[ -n $w && $seen != *" $w "* && -n ${BASH_ALIASES[$w]+set} ]]; do
                seen+="$w "
                _tripstore_split "${BASH_ALIASES[$w]} "
                a=("${_ts_split[@]:0:${#_ts_split[@]}-1}")
                # A wrapper before the program (sudo tripstore) is not run for a Tab.
                for ((k = 1; k < ${#a[@]}; k++)); do [[ ${a[k]##*/} == tripstore ]] && { a=("${a[@]:k}"); break; }; done
                w=${a[0]-}
                _ts_w=("${a[@]:1}" "${_ts_w[@]}")
            done
            [[ $w == "~" || $w == "~/"* ]] && w=$HOME${w#"~"}
            [[ -z $w || $w == */* ]] || w=$(type -P -- "$w")
            _ts_prog=$w
        }

        """# + sharedFunctions + #"""
        _tripstore() {
            local _ts_cur _ts_pre _ts_files _ts_store _ts_prog _ts_at _ts_q _ts_quoted _ts_op line at q c
            local -a _ts_w _ts_r _ts_split
            COMPREPLY=()
            if [[ -n ${COMP_LINE+set} ]]; then line=${COMP_LINE:0:COMP_POINT}
            else
                # Called by hand with COMP_WORDS alone: the line they make.
                printf -v line '%q ' "${COMP_WORDS[@]:0:COMP_CWORD}"
                line+=${COMP_WORDS[COMP_CWORD]}
            fi
            _tripstore_split "$line"
            # A word that holds an operator typed unquoted is the shell's to read, not a name to complete.
            (( ${#_ts_split[@]} > 1 && ! _ts_op )) || return 0
            at=$_ts_at q=$_ts_q
            _ts_cur=${_ts_split[${#_ts_split[@]}-1]}
            _ts_w=("${_ts_split[@]:1:${#_ts_split[@]}-2}")
            _tripstore_program "${_ts_split[0]}"
            _tripstore_complete
            if [[ -n $_ts_files ]]; then
                compopt -o filenames 2>/dev/null
                while IFS= read -r c; do COMPREPLY+=("$c"); done < <(compgen -"$_ts_files" -- "${_ts_cur#"$_ts_pre"}")
                return 0
            fi
            for c in "${_ts_r[@]}"; do
                c=$_ts_pre$c
                _tripstore_quote "${c:at}" "$q"
                COMPREPLY+=("$_ts_quoted")
            done
            return 0
        }
        complete -F _tripstore tripstore
        for _ts_a in "${!BASH_ALIASES[@]}"; do
            [[ ${BASH_ALIASES[$_ts_a]} =~ ^[[:space:]]*([^[:space:]]*/)?tripstore([[:space:]]|$) ]] && complete -F _tripstore "$_ts_a"
        done
        unset _ts_a

        """#
    }

    /// zsh completes natively (`compadd` quotes each name for the line) with
    /// the logic it shares with bash.
    static var zsh: String {
        #"""
        # tripstore completion for zsh. Load it from ~/.zshrc (after compinit):
        #     source <(tripstore completions zsh)
        # It finds the program however the line reaches it: on PATH, by a path, or
        # through an alias (alias tripstore=.build/release/tripstore). With
        # complete_aliases set, aliases of the program defined before this script
        # complete too; for any other name:
        #     compdef _tripstore ts
        # Ids and names from the store are inserted quoted, one word each. An id that
        # starts with '-' is offered after '--' (tripstore get -- --draft).
        (( $+functions[compdef] )) || { autoload -Uz compinit && compinit -i; }

        """# + sharedFunctions + #"""
        _tripstore() {
            local -a _ts_w _ts_r a
            local _ts_cur _ts_pre _ts_files _ts_store _ts_prog w=${(Q)words[1]} seen=" " k
            _ts_w=("${(@Q)words[2,CURRENT-1]}")
            # With complete_aliases set the first word is still the alias: its words, as zsh runs them.
            while [[ -n $w && $seen != *" $w "* && -n ${aliases[$w]-} ]]; do
                seen+="$w "
                a=("${(@Q)${(z)aliases[$w]}}")
                # A wrapper before the program (sudo tripstore) is not run for a Tab.
                k=${a[(i)(*/|)tripstore]}
                (( k <= $#a )) && a=("${(@)a[k,-1]}")
                w=${a[1]-}
                _ts_w=("${(@)a[2,-1]}" "${(@)_ts_w}")
            done
            [[ $w == "~" || $w == "~/"* ]] && w=$HOME${w#"~"}
            [[ -z $w || $w == */* ]] || w=${commands[$w]-}
            _ts_prog=$w
            _ts_cur=${(Q)PREFIX}
            _tripstore_complete
            compset -p ${#_ts_pre}
            case $_ts_files in
                d) _files -/ ;;
                f) _files ;;
                *) (( ${#_ts_r} )) && compadd -- "${(@)_ts_r}" ;;
            esac
        }
        compdef _tripstore tripstore
        for _ts_a in ${(k)aliases}; do
            [[ ${aliases[$_ts_a]} =~ '^[[:space:]]*([^[:space:]]*/)?tripstore([[:space:]]|$)' ]] && compdef _tripstore $_ts_a
        done
        unset _ts_a

        """#
    }

    static var fish: String {
        var s = #"""
        # tripstore completion for fish: tripstore completions fish > ~/.config/fish/completions/tripstore.fish
        # It finds the program however the line reaches it: on PATH, by a path, or
        # through an alias (alias tripstore=.build/release/tripstore), which wraps the
        # program and so completes as it does; for any other name:
        #     complete -c ts --wraps tripstore
        # Ids and names from the store are inserted quoted, one word each. An id that
        # starts with '-' is offered after '--' (tripstore get -- --draft).

        # Runs the program as the line reaches it, with the line's --store: an alias
        # is a function, a path runs as typed; any other first word (a wrapper such
        # as sudo) is not run, the program on PATH is.
        function __tripstore_run
            set -l words (commandline -opc)
            set -l cmd (string replace -r -- '^~(?=/|$)' $HOME $words[1])
            switch "$cmd"
                case tripstore '*/tripstore'
                case '*'
                    functions -q -- $cmd; or set cmd tripstore
            end
            set -l store (string replace -r -- '^--store=' '' (string match -r -- '^--store=.*' $words))
            set -l i (contains -i -- --store $words)
            and set store $words[(math $i + 1)]
            set store (string replace -r -- '^~(?=/|$)' $HOME $store)
            if test -n "$store"
                $cmd --store $store $argv 2>/dev/null
            else
                $cmd $argv 2>/dev/null
            end
        end
        # The names that complete the word being typed (the part after --option=).
        function __tripstore_names
            set -l word (commandline -ct | string unescape | string replace -r -- '^--[^=]*=' '')
            __tripstore_run completions names $argv[1] -- "$word"
        end
        # Before -- an id that starts with - would be read as an option: it is offered after it.
        function __tripstore_ids
            # A brace or wildcard typed before any quote is fish's to expand, not part of an id.
            string match -qr -- '^[^\'"]*(?<!\\\\)[{*?]' (commandline -ct); and return
            set -l word (commandline -ct | string unescape)
            if contains -- -- (commandline -opc)
                __tripstore_run completions names ids -- "$word"
            else if not string match -q -- '-*' "$word"
                __tripstore_run completions names ids -- "$word" | string match -v -- '-*'
            end
        end
        # Whether the word before the one being typed is $argv[1].
        function __tripstore_after
            set -l words (commandline -opc)
            test "$words[-1]" = "$argv[1]"
        end
        # A command is wanted until a word that is neither an option nor a global option's value.
        function __tripstore_needs_command
            set -l words (commandline -opc)
            set -e words[1]
            while set -q words[1]
                switch $words[1]
                    case --store --wait --schema
                        set -e words[1]
                    case '-*'
                    case '*'
                        return 1
                end
                set -e words[1]
            end
            return 0
        end
        complete -c tripstore -f

        """#
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
                // Any other option's value is the user's to type: offer nothing (not ids).
                if spec.valueOptions[name] != nil && values[name] == nil && storeNames[name] == nil && paths[name] == nil { line += " -x" }
                s += line + "\n"
                // fish offers an option's values only for a word that does not start with '-'.
                if storeNames[name] == "keys" {
                    s += "complete -c tripstore -n '__fish_seen_subcommand_from \(spec.name); and __tripstore_after --\(name)' -xa '(__tripstore_names keys)'\n"
                }
            }
            if fileArguments.contains(spec.name) { s += "complete -c tripstore \(when) -F\n" }
            if idArguments.contains(spec.name) {
                s += "complete -c tripstore \(when) -xa '(__tripstore_ids)'\n"
            }
            if !positionalValues(spec).isEmpty {
                s += "complete -c tripstore \(when) -xa '\(positionalValues(spec).joined(separator: " "))'\n"
            }
        }
        return s
    }
}
