import Foundation
import Testing
@testable import TripStoreCLI
import TripStoreEngine

/// `--version`, `help [COMMAND]` as `--help`, `-h` everywhere.
@Suite struct CLIConventionsTests {
    @Test func versionNamesTheProgramAndTheStoreFormats() {
        let r = CLIRunner.run(["--version"])
        #expect(r.code == 0 && r.err.isEmpty)
        let lines = r.out.split(separator: "\n")
        #expect(lines.first == "tripstore \(StoreFormats.programVersion)")
        #expect(r.out.contains("snapshot and journal \(StoreFormats.snapshot)") && r.out.contains("snapshot image \(StoreFormats.image)"))
    }

    @Test(arguments: Commands.all.map(\.0.name))
    func helpCommandIsTheCommandsHelp(_ name: String) {
        let help = CLIRunner.run([name, "--help"])
        #expect(help.code == 0 && !help.out.isEmpty)
        #expect(CLIRunner.run(["help", name]).out == help.out)
        #expect(CLIRunner.run([name, "-h"]).out == help.out)
    }

    @Test func helpOfHelpIsTheOverviewAndTheStartOfACommandNamesIt() {
        #expect(CLIRunner.run(["help", "help"]).out == CLIRunner.run(["--help"]).out)
        #expect(CLIRunner.run(["help", "help"]).code == 0)
        let r = CLIRunner.run(["hist"])
        #expect(r.code == 1 && r.err.contains("did you mean 'history'?"), "\(r.err)")
    }

    /// A word more than a command takes (a second file, a second id) is a
    /// usage error, never dropped: nothing runs and nothing changes.
    @Test func aWordTooManyIsAUsageError() throws {
        let s = CLIRunner.scratch() + "/store", trips = CLIRunner.projectRoot + "/SampleData/trips.json"
        let two = CLIRunner.run(["import", trips, trips], store: s)
        #expect(two.code == 1 && two.err.hasPrefix("error: unexpected '\(trips)'") && two.err.contains("usage: tripstore import"), "\(two.err)")
        #expect(!FileManager.default.fileExists(atPath: s), "no store was made")
        #expect(CLIRunner.run(["import", trips], store: s).code == 0)
        let before = CLIRunner.run(["export"], store: s).out
        for args in [["get", "rome-summit", "zurich-reunion"], ["stats", "extra"], ["compact", "extra"], ["verify", "extra"],
                     ["verify", "--repair", "extra"], ["schema", "extra"], ["history", "prune", "--before", "1", "extra"],
                     ["import", trips, "--mode", "upsert", "junk"], ["apply", "-", "extra"], ["validate", trips, "extra"],
                     ["shell", "extra"], ["migrate", "--schema", "s.json", "extra"], ["completions", "bash", "zsh"],
                     ["completions", "names", "types", "Bus", "extra"], ["completions", "names", "ids", "rome", "extra"]] {
            let r = CLIRunner.run(args, store: s)
            #expect(r.code == 1 && r.err.hasPrefix("error: unexpected '") && r.out.isEmpty, "\(args): \(r.err)")
        }
        #expect(CLIRunner.run(["export"], store: s).out == before)
        // Commands that take any number still do.
        #expect(CLIRunner.run(["get", "rome-summit"], store: s).code == 0)
        #expect(CLIRunner.run(["completions", "names", "ids", "rome-summit-k"], store: s).out == "rome-summit-keynote\n")
        #expect(CLIRunner.run(["query", "destination", "~", "\"Rome\"", "--count"], store: s).out
                    == CLIRunner.run(["query", "destination ~ \"Rome\"", "--count"], store: s).out)
    }

    /// `--` ends the options for every command that takes ids, so an id
    /// that starts with '-' is an id after it (where completion offers
    /// it); options, `update`'s `--set` too, go before it.
    @Test func doubleDashEndsTheOptions() throws {
        let s = CLIRunner.scratch()
        let file = s + "/dashes.json"
        let ids = ["--dry-run", "-h", "--set"]
        try JSONSerialization.data(withJSONObject: ids.map { ["type": "BucketListItem", "id": $0, "data": ["title": "t", "isCompleted": false]] })
            .write(to: URL(fileURLWithPath: file))
        #expect(CLIRunner.run(["import", file], store: s + "/store").code == 0)
        func run(_ args: [String]) -> CLIRunner.Result { CLIRunner.run(args, store: s + "/store") }
        for id in ids {
            let r = run(["get", "--", id])
            #expect(r.code == 0 && r.out.contains("\"id\": \"\(id)\""), "\(id): \(r.err)")
        }
        #expect(run(["completions", "names", "ids", "--", "-h"]).out == "-h\n")
        #expect(run(["update", "--set", "title=u", "--", "--dry-run", "-h"]).out.hasPrefix("updated 2 objects"))
        let late = run(["update", "--", "--dry-run", "--set", "title=v"])
        #expect(late.code == 1 && late.err.contains("missing --set"), "\(late.err)")
        let dry = run(["delete", "--dry-run", "--", "--set"])
        #expect(dry.code == 0 && dry.out.contains("BucketListItem --set"), "\(dry.out)")
        #expect(run(["delete", "--", "--dry-run", "--set"]).out.hasPrefix("deleted 2 objects"))
        #expect(run(["completions", "names", "ids", "--", "-"]).out == "-h\n")
    }

    @Test func helpAloneIsTheOverview() {
        let overview = CLIRunner.run(["--help"])
        #expect(overview.code == 0 && overview.out.contains("--version"))
        #expect(CLIRunner.run(["help"]).out == overview.out && CLIRunner.run(["help"]).code == 0)
        #expect(CLIRunner.run(["-h"]).out == overview.out)
    }

    /// A command is found by the name in the table and runs with the spec of
    /// that name (the table builds a spec only when asked).
    @Test func theTablesNamesAreItsSpecsNames() {
        #expect(Commands.table.map(\.name) == Commands.table.map { $0.spec().name })
        #expect(Set(Commands.names).count == Commands.names.count)
        #expect(Commands.spec("get")?.name == "get" && Commands.spec("nope") == nil)
    }

    /// The table is the one source: every option a command takes is in its `--help`.
    @Test func everyOptionOfTheTableIsInItsHelp() {
        for (spec, _) in Commands.all {
            let help = CLIRunner.run([spec.name, "--help"]).out
            for option in Array(spec.valueOptions.keys) + Array(spec.flagOptions.keys) {
                #expect(help.contains("--\(option)"), "\(spec.name) --\(option)")
            }
            #expect(CLIRunner.run(["--help"]).out.contains(spec.name))
        }
    }
}
