import Foundation
import Testing
@testable import TripStoreCLI

extension CLICompletionsTests {
    /// The scripts in real bash, zsh and fish sessions, typed into through
    /// tmux as a person types (docs/cli.md): a name from the store is data,
    /// and completion works however the program is reached. One session at
    /// a time, so that the shells' waits stay short on a small machine.
    @Suite(.serialized) struct Typed {
        /// Ids that a shell would run, split, expand or cut if it put them on
        /// the line as they are; each starts with its own two letters.
        static let hostileIDs = ["zq$(touch MARK)", "bq`touch MARK`", "sp ace and $HOME", "qu'ote", "dq\"uote",
                                 "st*ar", "ba!ng", "se;mi|pipe&amp>gt<lt", "gt>MARK6", "br{a,b}"]

        static var binaryFolder: String { URL(fileURLWithPath: CLIRunner.binary).deletingLastPathComponent().path }

        /// A store under `folder` holding the hostile ids, `--dry-run` and
        /// `malaga-beach`; its path.
        static func store(in folder: String) throws -> String {
            let ids = hostileIDs + ["--dry-run", "malaga-beach"]
            let objects = ids.map { ["type": "BucketListItem", "id": $0, "data": ["title": "t", "isCompleted": false]] as [String: Any] }
            let file = folder + "/items.json"
            try JSONSerialization.data(withJSONObject: objects).write(to: URL(fileURLWithPath: file))
            let store = folder + "/store"
            #expect(CLIRunner.run(["import", file], store: store).code == 0)
            return store
        }

        /// The line that loads the script, as the README gives it, and for
        /// zsh compinit before it.
        static func load(_ shell: String, program: String = "tripstore") -> [String] {
            switch shell {
            case "bash": ["source <(\(program) completions bash)"]
            case "zsh": ["autoload -U compinit && compinit -u", "source <(\(program) completions zsh)"]
            default: ["\(program) completions fish | source"]
            }
        }

        /// How `get` prints the id it was given.
        static func printed(_ id: String) -> String {
            "\"id\": \"" + id.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
        }

        @Test(arguments: ["bash", "zsh", "fish"])
        func anIDFromTheStoreGoesOnTheLineQuotedAndRunsNothing(_ shell: String) throws {
            let folder = CLIRunner.scratch()
            let store = try Self.store(in: folder)
            // A file that `st*ar` would name, were it left a pattern.
            #expect(FileManager.default.createFile(atPath: folder + "/stXar", contents: Data()))
            guard let sh = try TypedShell(shell, folder: folder, path: Self.binaryFolder + ":/usr/bin:/bin",
                                          environment: ["TRIPSTORE_DIR": store], setup: Self.load(shell)) else { return }
            #expect(try sh.complete("tripstore get zq") == #"tripstore get zq\$\(touch\ MARK\)"#, "\(shell)")
            for id in Self.hostileIDs {
                let typed = "tripstore get " + id.prefix(2)
                let line = try sh.complete(typed)
                #expect(line.hasPrefix(typed) && line.count > typed.count, "\(shell) \(id): \(line)")
                let out = try sh.enter()
                // One argument, the id itself: `get` refuses a second word.
                #expect(out.contains { $0.contains(Self.printed(id)) }, "\(shell) \(id): \(line) printed \(out)")
                #expect(!FileManager.default.fileExists(atPath: folder + "/MARK"), "\(shell) \(id): \(line)")
                try? FileManager.default.removeItem(atPath: folder + "/MARK")
            }
            // After an open quote the id goes inside it, and the quote is closed.
            for (quote, id) in [("'", "zq$(touch MARK)"), ("\"", "zq$(touch MARK)"), ("\"", "ba!ng"), ("'", "qu'ote")] {
                let typed = "tripstore get " + quote + id.prefix(2)
                let line = try sh.complete(typed)
                #expect(line.hasPrefix(typed) && line.hasSuffix(quote) && line.count > typed.count + 1, "\(shell): \(line)")
                let out = try sh.enter()
                #expect(out.contains { $0.contains(Self.printed(id)) }, "\(shell): \(line) printed \(out)")
            }
            #expect(!FileManager.default.fileExists(atPath: folder + "/MARK"))
            let left = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
            #expect(left == ["home", "items.json", "stXar", "store"], "\(shell): a word ran as a redirection")
        }

        /// A redirect or a brace the user typed unquoted is the shell's to
        /// read: bash offers no id there (it would name the redirect's file
        /// with the rest of the id), and fish none after a brace.
        @Test(arguments: ["bash", "fish"])
        func anOperatorTypedUnquotedGetsNoID(_ shell: String) throws {
            let folder = CLIRunner.scratch()
            let store = try Self.store(in: folder)
            guard let sh = try TypedShell(shell, folder: folder, path: Self.binaryFolder + ":/usr/bin:/bin",
                                          environment: ["TRIPSTORE_DIR": store], setup: Self.load(shell)) else { return }
            let typed = shell == "bash" ? "tripstore get gt>" : "tripstore get br{"
            #expect(try sh.complete(typed) == typed, "\(shell)")
            #expect(try sh.complete("tripstore get gt") != "tripstore get gt", "\(shell): quoted, it completes")
            try sh.clear()
            #expect(!FileManager.default.fileExists(atPath: folder + "/MARK6"))
        }

        /// An id that starts with '-' is offered after '--', where every
        /// command reads it as an id; before it, it would be an option.
        @Test(arguments: ["bash", "zsh", "fish"])
        func anIDThatStartsWithADashIsCompletedAfterTheEndOfOptions(_ shell: String) throws {
            let folder = CLIRunner.scratch()
            let store = try Self.store(in: folder)
            guard let sh = try TypedShell(shell, folder: folder, path: Self.binaryFolder + ":/usr/bin:/bin",
                                          environment: ["TRIPSTORE_DIR": store], setup: Self.load(shell)) else { return }
            #expect(try sh.complete("tripstore get --dr") == "tripstore get --dr", "\(shell)")
            #expect(try sh.complete("tripstore get -- --dr") == "tripstore get -- --dry-run", "\(shell)")
            #expect(try sh.enter().contains { $0.contains(Self.printed("--dry-run")) }, "\(shell)")
            #expect(try sh.complete("tripstore update --set title=u -- --dr") == "tripstore update --set title=u -- --dry-run", "\(shell)")
            #expect(try sh.enter().contains { $0.hasPrefix("updated 1 object") }, "\(shell)")
            #expect(try sh.complete("tripstore delete -- --dr") == "tripstore delete -- --dry-run", "\(shell)")
            #expect(try sh.enter().contains { $0.hasPrefix("deleted 1 object") }, "\(shell)")
        }

        /// Through an alias (the README's `alias tripstore=…`, or another
        /// name), a relative path or a path from ~, with the program not on
        /// PATH; and a sort key, a descending one, after '=', in a list.
        @Test(arguments: ["bash", "zsh", "fish"])
        func completesThroughAnAliasOrAPath(_ shell: String) throws {
            let folder = CLIRunner.scratch()
            let store = try Self.store(in: folder)
            for link in ["/tools/tripstore", "/home/bin/tripstore"] {
                try FileManager.default.createDirectory(atPath: folder + link.dropLast(10), withIntermediateDirectories: true)
                try FileManager.default.createSymbolicLink(atPath: folder + link, withDestinationPath: CLIRunner.binary)
            }
            let setup = ["alias tripstore=./tools/tripstore", "alias ts=./tools/tripstore"] + Self.load(shell, program: "./tools/tripstore")
            guard let sh = try TypedShell(shell, folder: folder, path: "/usr/bin:/bin", environment: ["TRIPSTORE_DIR": store],
                                          setup: setup) else { return }
            for program in ["tripstore", "./tools/tripstore", "~/bin/tripstore", "ts"] {
                #expect(try sh.complete(program + " get mal") == program + " get malaga-beach", "\(shell)")
            }
            #expect(try sh.enter().contains { $0.contains(Self.printed("malaga-beach")) }, "\(shell)")
            for (typed, completed) in [("--sort -st", "--sort -startDate"), ("--sort=st", "--sort=startDate"),
                                       ("--fields name,st", "--fields name,startDate"), ("--sort name,-st", "--sort name,-startDate")] {
                #expect(try sh.complete("tripstore query " + typed) == "tripstore query " + completed, "\(shell)")
            }
        }
    }

    /// bash quotes names itself (zsh's compadd and fish quote theirs): each
    /// reads back as the one word it was, after whichever quote is open,
    /// a newline too (no store holds one: ids refuse control characters and
    /// names are identifiers).
    @Test func bashQuotesAWordForTheQuoteOpenOnTheLine() throws {
        let folder = CLIRunner.scratch()
        let words = ["a\nb", "zq$(touch MARK)", "bq`touch MARK`", "q'uote", "d\"q", "sp ace", "st*ar", "ba!ng", "--dry-run",
                     "~tilde", "#hash", "back\\slash", "é", ""]
        var body = "cd '\(folder)'\nq() { _tripstore_quote \"$2\" \"$1\"; eval \"w=$1$_ts_quoted\"; [[ $w == \"$2\" ]] && echo ok || echo \"no: $_ts_quoted\"; }\n"
        for word in words {
            let literal = "$'" + word.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'").replacingOccurrences(of: "\n", with: "\\n") + "'"
            for open in ["''", "\"'\"", "'\"'", "\"$'\""] { body += "q \(open) \(literal)\n" }
        }
        guard let out = try run("bash", body) else { return }
        #expect(out.split(separator: "\n") == Array(repeating: "ok", count: words.count * 4), "\(out)")
        #expect(!FileManager.default.fileExists(atPath: folder + "/MARK"))
    }
}
