import Foundation
import Testing
@testable import TripStoreCLI

/// Completion scripts made from the command table, loaded by a real shell.
@Suite struct CLICompletionsTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func everyCommandAndOptionIsInTheScript(_ shell: String) {
        let script = CLIRunner.run(["completions", shell])
        #expect(script.code == 0)
        for (spec, _) in Commands.all {
            #expect(script.out.contains(spec.name), "\(shell): \(spec.name)")
            for option in Array(spec.valueOptions.keys) + Array(spec.flagOptions.keys) {
                #expect(script.out.contains(shell == "fish" ? "-l \(option)" : "--\(option)"), "\(shell): \(spec.name) --\(option)")
            }
        }
    }

    /// Runs `body` in `shell` with its script loaded and the built binary
    /// first on the PATH; nil where the shell is not installed (CI installs
    /// bash, zsh and fish).
    func run(_ shell: String, _ body: String) throws -> String? {
        let path = "/usr/bin/" + shell
        guard FileManager.default.isExecutableFile(atPath: path) else { return nil }
        let script = CLIRunner.scratch() + "." + shell
        try CLIRunner.run(["completions", shell]).out.write(toFile: script, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: path)
        p.arguments = ["-c", "source '\(script)'; " + body]
        var env = ProcessInfo.processInfo.environment
        env["PATH"] = URL(fileURLWithPath: CLIRunner.binary).deletingLastPathComponent().path + ":" + (env["PATH"] ?? "")
        p.environment = env
        let out = Pipe()
        p.standardOutput = out
        p.standardError = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return text
    }

    @Test func bashCompletesACommandAnOptionAValueAndATypeFromTheStore() throws {
        let store = CLIRunner.scratch() + "/names"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let complete = """
        t() { COMP_WORDS=("$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=(); _tripstore; echo "${COMPREPLY[*]}"; }
        complete -p tripstore
        t tripstore qu
        t tripstore query --fo
        t tripstore query --format j
        t tripstore --store '\(store)' query --from Bus
        t tripstore --store '\(store)' query --sort dest
        t tripstore --store '\(store)' delete mal
        """
        guard let out = try run("bash", complete) else { return }
        #expect(out.split(separator: "\n").map(String.init)
                == ["complete -F _tripstore tripstore", "query", "--format", "json jsonl", "BusinessTrip BusinessMeal", "destination",
                    "malaga-alcazaba malaga-beach malaga-family"])
    }

    @Test func theNamesAreTheStoresOwn() {
        let store = CLIRunner.scratch() + "/film"
        // No store: the program's schema (the trips).
        #expect(CLIRunner.run(["completions", "names", "types"], store: store).out.contains("BusinessTrip"))
        #expect(CLIRunner.run(["completions", "names", "properties"], store: store).out.contains("destination\n"))
        #expect(CLIRunner.run(["completions", "names", "colours"], store: store).code == 1)
        #expect(CLIRunner.run(["completions", "tcsh"]).code == 1)
    }

    /// The names that complete the word typed: the last item of a comma
    /// list, and for a sort key after its '-' (docs/cli.md).
    @Test func theNamesCompleteTheWordTyped() {
        let store = CLIRunner.scratch() + "/none"
        func names(_ kind: String, _ word: String) -> String { CLIRunner.run(["completions", "names", kind, "--", word], store: store).out }
        #expect(names("types", "Bus") == "BusinessTrip\nBusinessMeal\n")
        #expect(names("keys", "-st") == "-startDate\n")
        #expect(names("keys", "st") == "startDate\n")
        #expect(names("keys", "name,-st") == "name,-startDate\n")
        #expect(names("properties", "name,st") == "name,startDate\n")
        #expect(names("properties", "-st") == "")
        #expect(names("types", "Trip,Bus") == "")
    }

    @Test func fishCompletesACommandAnOptionAValueAndATypeFromTheStore() throws {
        let store = CLIRunner.scratch() + "/fish"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let body = "complete -C 'tripstore qu'; complete -C 'tripstore query --fo'; complete -C 'tripstore query --format j'; "
            + "complete -C 'tripstore --store \(store) query --from Bus'; complete -C 'tripstore --store \(store) sta'"
        guard let out = try run("fish", body) else { return }
        let words = out.split(separator: "\n").map { String($0.split(separator: "\t").first ?? "") }
        #expect(words == ["query", "--format", "json", "jsonl", "BusinessMeal", "BusinessTrip", "stats"], "\(out)")
    }

    /// zsh runs the logic it shares with bash, whose arrays start at 0.
    @Test func zshLoadsTheScriptAndAsksTheStoreForNames() throws {
        let store = CLIRunner.scratch() + "/zsh"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let body = """
        autoload -U compinit && compinit -u
        t() { _ts_prog=$(whence -p tripstore); _ts_w=("${(@)argv[1,-2]}"); _ts_cur=$argv[-1]; _tripstore_complete; print -r -- "${_ts_r[*]}"; }
        t --store '\(store)' query --from Bus
        t query --format j
        """
        guard let out = try run("zsh", body) else { return }
        let lines = out.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && lines[0].split(separator: " ").contains("BusinessTrip") && lines[1].split(separator: " ").contains("jsonl"), "\(out)")
    }
}
