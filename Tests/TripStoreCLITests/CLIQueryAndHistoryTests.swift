import Foundation
import Testing
import TripStoreCLI

@Suite struct CLIQueryAndHistoryTests {
    static let sample = CLIRunner.projectRoot + "/SampleData/trips.json"

    func store() -> String {
        let folder = CLIRunner.runRoot + "cliq-\(UUID().uuidString)"
        _ = CLIRunner.run(["import", Self.sample], store: folder)
        return folder
    }

    @Test func romeQueryPrintsAReadableTable() {
        let r = CLIRunner.run(["query", #"is BusinessTrip && destination ~ "Rome""#, "--format", "table",
                               "--fields", "name,destination,startDate"], store: store())
        #expect(r.code == 0)
        #expect(r.out == """
        id                                    name                     destination             startDate
        ------------------------------------  -----------------------  ----------------------  --------------------
        3A1ED8F1-DC70-4911-BA39-0EEA9780FF20  Q4 Sales summit: Cromer  Cromer, United Kingdom  2020-12-22T12:05:00Z
        rome-summit                           Q3 summit                Rome, Italy             2026-03-02T09:30:00Z
        romeoville-audit                      Warehouse audit          Romeoville, USA         2026-05-11T00:00:00Z
        (3 rows)

        """)
    }

    @Test func explainShowsTypeAndTextIndexes() {
        let r = CLIRunner.run(["query", #"is BusinessTrip && destination ~ "Rome""#, "--explain"], store: store())
        #expect(r.out.hasPrefix("text index  Trip.destination ~ \"Rome\" (3 of 48 values)  (estimated 3, actual 3)\nintersect   type index is BusinessTrip  (actual 3)\n"))
        let t = CLIRunner.run(["query", "is PersonalTrip", "--explain", "--count"], store: store())
        #expect(t.out == "type index  is PersonalTrip  (estimated 11, actual 11)\ncount       11 rows  (actual 11)\n")
    }

    @Test func formatsCountSortLimitAndFields() {
        let s = store()
        #expect(CLIRunner.run(["query", "is PersonalTrip", "--count"], store: s).out == "11\n")
        #expect(CLIRunner.run(["query", "--from", "FamilyMember", "name ~ \"garcia\"", "--count"], store: s).out == "2\n")
        let ids = CLIRunner.run(["query", "is PersonalTrip", "--sort=-startDate", "--limit", "2", "--format", "ids"], store: s)
        #expect(ids.out == "A479EF0F-8974-4CE4-8548-2E5E302C5D57\nzurich-reunion\n")
        let jsonl = CLIRunner.run(["query", "is exactly Trip && destination ~ \"lisbon\"", "--fields", "name", "--sort", "name", "--limit", "1"], store: s)
        #expect(jsonl.out == #"{"type":"Trip","id":"draft-lisbon","data":{"name":"Draft: weekend in Lisbon"}}"# + "\n")
        let csv = CLIRunner.run(["query", "reason == \"reunion\" && destination ~ \"zur\"", "--format", "csv", "--fields", "name,destination"], store: s)
        #expect(csv.out == "id,name,destination\nzurich-reunion,García family reunion,\"Zürich, Switzerland\"\n")
        #expect(CLIRunner.run(["query", "is Trip", "--limit", "0", "--format", "ids"], store: s).out == "")
        #expect(CLIRunner.run(["query", "is Trip", "--limit", "0", "--format", "table"], store: s).out == "")
    }

    @Test func queryErrorsShowTheQueryAndACaret() {
        let r = CLIRunner.run(["query", "is BusinessTrip && destination ~"], store: store())
        #expect(r.code == 1)
        #expect(r.err == "error: expected a value after '~' at column 33\n  is BusinessTrip && destination ~\n                                  ^\n")
    }

    @Test func shellKeepsTheStoreOpenAndReadsCommandsPerLine() {
        let input = """
        .format ids
        .sort -startDate
        .limit 2
        is PersonalTrip
        .count on
        destination ~ "zürich"
        nonsense ~ 1
        .quit
        is Trip
        """
        let r = CLIRunner.run(["shell"], store: store(), stdin: input)
        #expect(r.out == "A479EF0F-8974-4CE4-8548-2E5E302C5D57\nzurich-reunion\n2\n")
        #expect(r.err.hasPrefix("error: Trip and its subclasses have no property 'nonsense'"))
        #expect(r.code == 1)
    }

    /// Each line of the shell sees what other processes committed before
    /// it, across a compaction that replaced the files it opened too.
    @Test func theShellSeesCommitsMadeBetweenItsLines() throws {
        let s = store()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", s, "shell"]
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        p.standardError = FileHandle.nullDevice
        try p.run()
        // Never hang the run: a shell that stops answering is ended, and the reads then return.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { if p.isRunning { p.terminate() } }
        func ask(_ line: String) -> String {
            input.fileHandleForWriting.write(Data((line + "\n").utf8))
            return String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        }
        #expect(ask(".count on\nname == \"renamed\"") == "0\n")
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "name=renamed"], store: s).code == 0)
        #expect(ask("name == \"renamed\"") == "1\n")
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        #expect(CLIRunner.run(["update", "zurich-reunion", "--set", "name=renamed"], store: s).code == 0)
        #expect(ask("name == \"renamed\"") == "2\n")
        try input.fileHandleForWriting.close()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
    }

    @Test func deleteCascadesAndTheAuditViewShowsTombstones() {
        let s = store()
        let d = CLIRunner.run(["delete", "rome-summit", "--author", "alice"], store: s)
        #expect(d.out == "deleted 7 objects (BucketListItem 1, BusinessMeal 2, BusinessTrip 1, ConferenceSession 1, DailyMileageRecord 1, LivingAccommodation 1); committed as token 2\n")
        let h = CLIRunner.run(["history", "--deletes", "--type", "Trip", "--format", "jsonl"], store: s)
        #expect(h.out.contains(#""author":"alice","changes":[{"kind":"delete","type":"BusinessTrip","id":"rome-summit","tombstone":{"name":"Q3 summit","startDate":"2026-03-02T09:30:00Z","endDate":"2026-03-06T18:00:00Z"}}]}"#))
        let table = CLIRunner.run(["history", "--deletes", "--type", "Trip", "--format", "table"], store: s)
        #expect(table.out.hasPrefix("deleted at "))
        #expect(table.out.contains("  alice  2      BusinessTrip  rome-summit  name=Q3 summit, startDate=2026-03-02T09:30:00Z, endDate=2026-03-06T18:00:00Z\n"))
        #expect(CLIRunner.run(["get", "rome-summit"], store: s).code == 1)
        // The limit counts deletes: the cascade's transaction is cut to its newest two, in its order.
        let newest = CLIRunner.run(["history", "--deletes", "--limit", "2", "--format", "jsonl"], store: s).out
        #expect(newest.components(separatedBy: "\n").count == 2 && newest.components(separatedBy: #""kind":"delete""#).count == 3)
        #expect(newest.hasSuffix(#""id":"rome-summit","tombstone":{"name":"Q3 summit","startDate":"2026-03-02T09:30:00Z","endDate":"2026-03-06T18:00:00Z"}}]}"# + "\n"))
        // Without --deletes it still counts transactions.
        let line = CLIRunner.run(["history", "--kind", "delete", "--limit", "1", "--format", "jsonl"], store: s).out
        #expect(line.components(separatedBy: #""kind":"delete""#).count == 8)
    }

    @Test func deleteDenyAndUnknownIDsChangeNothing() {
        let s = store()
        let deny = CLIRunner.run(["delete", "cousin-lucia"], store: s)
        #expect(deny.code == 1)
        #expect(deny.err == "error: cannot delete FamilyMember 'cousin-lucia': its relationship 'trips' still holds 2 objects and its delete rule is deny\n")
        #expect(CLIRunner.run(["delete", "malaga-family", "nope"], store: s).code == 1)
        #expect(CLIRunner.run(["get", "malaga-family"], store: s).code == 0)
        let none = CLIRunner.run(["delete", "--where", "name == \"no such trip\""], store: s)
        #expect(none.code == 0)
        #expect(none.out == "nothing matches; nothing deleted\n")
        let dry = CLIRunner.run(["delete", "--where", "name ^= \"Draft:\" && destination ~ \"lisbon\"", "--dry-run"], store: s)
        #expect(dry.out == "would delete 1 object (dry run; nothing changed):\n  Trip draft-lisbon\n")
        #expect(CLIRunner.run(["history", "--format", "jsonl"], store: s).out.split(separator: "\n").count == 1)
    }

    @Test func updateRecordsOldAndNewValues() {
        let s = store()
        let u = CLIRunner.run(["update", "romeoville-audit", "--set", "perDiemRate=95", "--set", "purpose=\"Audit, again\"", "--author", "bob"], store: s)
        #expect(u.out == "updated 1 object (BusinessTrip 1); committed as token 2\n")
        let h = CLIRunner.run(["history", "--kind", "update", "--format", "jsonl"], store: s)
        #expect(h.out.hasSuffix(#""author":"bob","changes":[{"kind":"update","type":"BusinessTrip","id":"romeoville-audit","values":{"purpose":{"old":"Audit visit with Bluebird Logistics","new":"Audit, again"},"perDiemRate":{"old":80,"new":95}}}]}"# + "\n"))
        let again = CLIRunner.run(["update", "romeoville-audit", "--set", "perDiemRate=95"], store: s)
        #expect(again.out == "the values are already set; nothing changed\n")
        let bad = CLIRunner.run(["update", "romeoville-audit", "--set", "startDate=soon"], store: s)
        #expect(bad.code == 1)
        #expect(bad.err.hasPrefix("error: property 'startDate' of BusinessTrip 'romeoville-audit': expected an ISO 8601 date"))
        let many = CLIRunner.run(["update", "--where", "is PersonalTrip && notes == nil", "--set", "notes=to plan"], store: s)
        #expect(many.out.hasPrefix("updated "))
        #expect(CLIRunner.run(["query", "is PersonalTrip && notes == nil", "--count"], store: s).out == "0\n")
    }

    @Test func pruneDropsHistoryButNoObjects() {
        let s = store()
        _ = CLIRunner.run(["delete", "draft-lisbon"], store: s)
        let p = CLIRunner.run(["history", "prune", "--before", "2"], store: s)
        #expect(p.out == "dropped 1 transaction before token 2; 1 kept; the objects are unchanged\n")
        #expect(CLIRunner.run(["query", "--count"], store: s).out == "60\n")
        #expect(CLIRunner.run(["history", "--format", "jsonl"], store: s).out.hasPrefix(#"{"token":2,"#))
    }
}
