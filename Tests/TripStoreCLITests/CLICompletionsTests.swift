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

    /// Runs `body` in bash with the script loaded and the built binary first on the PATH.
    func bash(_ body: String) throws -> String? {
        guard FileManager.default.isExecutableFile(atPath: "/bin/bash") else { return nil }
        let script = CLIRunner.scratch() + ".bash"
        try CLIRunner.run(["completions", "bash"]).out.write(toFile: script, atomically: true, encoding: .utf8)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/bash")
        p.arguments = ["-c", "source '\(script)' && " + body]
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
        """
        guard let out = try bash(complete) else { return }
        #expect(out.split(separator: "\n").map(String.init)
                == ["complete -F _tripstore tripstore", "query", "--format", "json jsonl", "BusinessTrip BusinessMeal", "destination"])
    }

    @Test func theNamesAreTheStoresOwn() {
        let store = CLIRunner.scratch() + "/film"
        // No store: the program's schema (the trips).
        #expect(CLIRunner.run(["completions", "names", "types"], store: store).out.contains("BusinessTrip"))
        #expect(CLIRunner.run(["completions", "names", "properties"], store: store).out.contains("destination\n"))
        #expect(CLIRunner.run(["completions", "names", "colours"], store: store).code == 1)
        #expect(CLIRunner.run(["completions", "tcsh"]).code == 1)
    }
}
