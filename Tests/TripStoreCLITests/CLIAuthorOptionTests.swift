import Foundation
import Testing
@testable import TripStoreCLI

/// Every command that changes the store accepts `--author`
/// (`verify --repair` records its transaction by author `repair`).
@Suite struct CLIAuthorOptionTests {
    @Test(arguments: [["compact"], ["update", "rome-summit", "--set", "destination=Roma"], ["delete", "rome-summit"],
                      ["history", "prune", "--before", "1"], ["history", "redact", "--id", "rome-summit"]])
    func everyWriteAcceptsAnAuthor(_ command: [String]) throws {
        let store = CLIRunner.scratch() + "/author"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let r = CLIRunner.run(command + ["--author", "alice"], store: store)
        #expect(r.code == 0, "\(command): \(r.err)")
    }
}
