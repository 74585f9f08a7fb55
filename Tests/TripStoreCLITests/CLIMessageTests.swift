import Foundation
import Testing
import TripStoreCLI

/// Usage mistakes get a usage error that names the option; sort keys get
/// their own caret.
@Suite struct CLIMessageTests {
    func store() -> String {
        let s = CLIRunner.runRoot + "messages-\(UUID().uuidString)"
        _ = CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s)
        return s
    }

    @Test(arguments: [
        (["query", "--sort", "-"], "--sort needs property names"),
        (["query", "--fields", ""], "--fields needs property names"),
        (["query", "--fields", "name,"], "--fields needs property names"),
        (["history", "--kind", ""], "--kind takes insert, update, delete, redact and migrate"),
        (["history", "prune", "--before", "99999999999999999999"], "--before takes a token"),
        (["history", "--since", "-5"], "--since needs a token"),
        (["query", "--wait", "1e400"], "--wait needs a number of seconds"),
        (["query", "--sort", "name,,destination"], "--sort needs property names"),
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
        let path = CLIRunner.runRoot + "syntax-\(UUID().uuidString).jsonl"
        try #"{"type":"Trip","id":"a","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}"#
            .appending("\n{\"type\":\"Trip\", bad}\n").write(toFile: path, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["validate", path])
        #expect(r.code == 1)
        #expect(r.err.contains("\(path): line 2: invalid JSON at column 17: expected a member name in double quotes but found 'b'\n"))
    }
}

@Suite struct CLIStandardInputTests {
    @Test func standardInputThatCannotBeJSONFailsAtOnce() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", CLIRunner.runRoot + "stdin-\(UUID().uuidString)", "import", "-"]
        p.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/dev/zero"))
        p.standardOutput = FileHandle.nullDevice
        p.standardError = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 1)
    }
}

@Suite struct CLIHostileReviewTests {
    func store() -> String {
        let s = CLIRunner.runRoot + "review-\(UUID().uuidString)"
        _ = CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s)
        return s
    }

    @Test func aNumberLiteralPastDoublesRangeIsAQueryError() {
        let r = CLIRunner.run(["query", "perDiemRate > 1e400", "--from", "BusinessTrip", "--count"], store: store())
        #expect(r.code == 1)
        #expect(r.err.contains("outside the range of a Double"))
    }

    @Test func historyTablesAndErrorMessagesEscapeControlCharacters() {
        let s = store()
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=x\u{1b}]0;pwned\u{7}y"], store: s).code == 0)
        let history = CLIRunner.run(["history", "--format", "table"], store: s)
        #expect(!history.out.contains("\u{1b}") && history.out.contains(#"x\u001b]0;pwned\u0007y"#))
        let error = CLIRunner.run(["query", "--from", "T\u{1b}[2J"], store: s)
        #expect(error.code == 1 && !error.err.contains("\u{1b}"))
    }

    @Test func validateReportsAnObjectListedTwiceInARelationship() throws {
        let path = CLIRunner.runRoot + "twice-\(UUID().uuidString).jsonl"
        try """
        {"type":"FamilyMember","id":"caf\u{E9}","data":{"name":"x"}}
        {"type":"PersonalTrip","id":"t1","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02","reason":"family","frequentFlyerCodes":[],"venuePasses":[],"familyMembers":[{"id":"caf\u{E9}"},{"id":"cafe\u{301}"}]}}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["validate", path])
        #expect(r.code == 1)
        #expect(r.err.contains("lists id 'caf\u{E9}' twice"))
    }
}

@Suite struct CLIVerifyImageTests {
    @Test func verifyChecksTheImageAndRepairDeletesADamagedOne() throws {
        let s = CLIRunner.runRoot + "verify-image-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        #expect(CLIRunner.run(["verify"], store: s).out.contains("ids, the image and the history index verified"))
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: s).first { $0.hasSuffix(".image") })
        try FileManager.default.removeItem(atPath: s + "/" + image)
        try FileManager.default.createSymbolicLink(atPath: s + "/" + image, withDestinationPath: "/dev/zero")
        let verify = CLIRunner.run(["verify"], store: s)
        #expect(verify.code == 2)
        #expect(verify.err.contains("'tripstore verify --repair' deletes it"))
        #expect(CLIRunner.run(["verify", "--repair"], store: s).code == 0)
        #expect(!FileManager.default.fileExists(atPath: s + "/" + image))
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
    }
}
