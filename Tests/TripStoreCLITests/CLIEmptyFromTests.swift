import Foundation
import Testing
@testable import TripStoreCLI

@Suite struct CLIEmptyFromTests {
    /// An empty `--from` is named as such, without a caret under an empty line.
    @Test func anEmptyFromTypeHasNoCaretUnderNothing() {
        let store = CLIRunner.scratch() + "/from"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let r = CLIRunner.run(["query", "--from", "", "--count"], store: store)
        #expect(r.code == 1)
        #expect(r.err.contains("unknown type '' to query from") && !r.err.contains("^"), "\(r.err)")
    }
}
