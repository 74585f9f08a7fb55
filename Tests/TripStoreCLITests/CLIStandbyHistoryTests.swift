import Foundation
import Testing
@testable import TripStoreCLI

/// A standby that applies its primary's feed keeps the same history, byte
/// for byte: the changes of each transaction in the primary's order.
@Suite struct CLIStandbyHistoryTests {
    @Test func aStandbysHistoryAndFeedAreThePrimarysByteForByte() throws {
        let primary = CLIRunner.scratch() + "/primary", standby = CLIRunner.scratch() + "/standby"
        let sample = CLIRunner.projectRoot + "/SampleData/trips.json"
        for args in [["import", sample],
                     ["update", "rome-summit", "--set", "destination=Roma"],
                     ["update", "cousin-lucia", "--set", "relationship=aunt"],
                     ["delete", "--where", "is BusinessTrip && destination ~ \"Romeo\""],
                     // A family member's inverse changes with the trip: the upsert brings both back.
                     ["delete", "malaga-family"],
                     ["import", sample, "--mode", "upsert"],
                     ["update", "--where", "is PersonalTrip", "--set", "notes=checked"],
                     ["import", sample, "--mode", "upsert"]] {
            let r = CLIRunner.run(args, store: primary)
            #expect(r.code == 0, "\(args): \(r.err)")
        }
        let feed = CLIRunner.run(["history", "--format", "feed"], store: primary).out
        let applied = CLIRunner.run(["apply", "-"], store: standby, stdin: feed)
        #expect(applied.code == 0, "\(applied.err)")
        for format in ["jsonl", "feed"] {
            let mine = CLIRunner.run(["history", "--format", format], store: primary).out
            let theirs = CLIRunner.run(["history", "--format", format], store: standby).out
            #expect(!mine.isEmpty && mine == theirs, "history --format \(format)")
        }
    }
}
