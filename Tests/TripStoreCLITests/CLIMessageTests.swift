import Foundation
import Testing
import TripStoreCLI

/// Usage mistakes get a usage error that names the option; sort keys get
/// their own caret.
@Suite struct CLIMessageTests {
    func store() -> String {
        let s = NSTemporaryDirectory() + "messages-\(UUID().uuidString)"
        _ = CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s)
        return s
    }

    @Test(arguments: [
        (["query", "--sort", "-"], "--sort needs property names"),
        (["query", "--fields", ""], "--fields needs property names"),
        (["query", "--fields", "name,"], "--fields needs property names"),
        (["history", "--kind", ""], "--kind takes insert, update and delete"),
        (["history", "prune", "--before", "99999999999999999999"], "--before takes a token"),
    ])
    func emptyOrOutOfRangeOptionsAreUsageErrors(_ args: [String], _ message: String) {
        let r = CLIRunner.run(args, store: store())
        #expect(r.code == 1)
        #expect(r.err.contains(message))
    }

    @Test func aBadSortKeyIsShownWithItsOwnCaret() {
        let r = CLIRunner.run(["query", "is Trip", "--sort", "nam"], store: store())
        #expect(r.code == 1)
        #expect(r.err == "error: sort key 'nam': Trip and its subclasses have no property 'nam' (did you mean 'name'?) at column 1\n  nam\n  ^\n")
    }
}

@Suite struct CLISyntaxPositionTests {
    @Test func aSyntaxErrorInJSONLinesNamesTheLineOnceAndTheColumn() throws {
        let path = NSTemporaryDirectory() + "syntax-\(UUID().uuidString).jsonl"
        try #"{"type":"Trip","id":"a","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}"#
            .appending("\n{\"type\":\"Trip\", bad}\n").write(toFile: path, atomically: true, encoding: .utf8)
        let r = CLIRunner.run(["validate", path])
        #expect(r.code == 1)
        #expect(r.err.contains("\(path): line 2: invalid JSON at column 17: expected a member name in double quotes but found 'b'\n"))
    }
}

@Suite struct CLIStandardInputTests {
    @Test func standardInputThatCannotBeJSONFailsAtOnce() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", NSTemporaryDirectory() + "stdin-\(UUID().uuidString)", "import", "-"]
        p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/zero"))
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 1)
    }
}
