import Foundation
import Testing
import TripStoreCLI

@Suite struct CLIFoundationTests {
    let sample = CLIRunner.projectRoot + "/SampleData/trips.json"

    @Test func validateAcceptsTheSampleData() {
        let r = CLIRunner.run(["validate", sample])
        #expect(r.code == 0)
        #expect(r.out == "\(sample): 493 objects, valid\n")
    }

    @Test func validateReportsEveryErrorWithRecordAndProperty() throws {
        let path = CLIRunner.runRoot + "bad-\(UUID().uuidString).json"
        try """
        [{"type":"Trp","id":"a","data":{}},
         {"type":"Trip","id":"b","data":{"name":"x","destination":"y","startDate":"soon","endDate":"2026-01-01"}}]
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["validate", path])
        #expect(r.code == 1)
        #expect(r.err.contains("record 1: unknown type 'Trp'"))
        #expect(r.err.contains("record 2: property 'startDate' of Trip: expected an ISO 8601 date"))
        #expect(r.err.hasSuffix("2 errors\n"))
    }

    @Test func validateReportsEveryReferenceError() throws {
        let path = CLIRunner.runRoot + "refs-\(UUID().uuidString).jsonl"
        try """
        {"type":"BucketListItem","id":"b1","data":{"title":"x","isCompleted":false,"trip":{"type":"Trip","id":"nope"}}}
        {"type":"BucketListItem","id":"b2","data":{"title":"y","isCompleted":false,"trip":{"type":"BusinessTrip","id":"t"}}}
        {"type":"Trip","id":"t","data":{"name":"T","destination":"D","startDate":"2026-01-01","endDate":"2026-01-02"}}
        {"type":"Trip","id":"t","data":{"name":"T","destination":"D","startDate":"2026-01-01","endDate":"2026-01-02"}}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["validate", path])
        #expect(r.code == 1)
        #expect(r.err == """
        error: \(path): line 4: Trip: id 't' appears twice in the input
        error: \(path): line 1 at data.trip: property 'trip' of BucketListItem: reference to id 'nope', which is neither in the input nor in the store
        error: \(path): line 2 at data.trip: property 'trip' of BucketListItem: reference says id 't' is a BusinessTrip, but it is a Trip
        \(path): 3 errors

        """)
    }

    @Test func schemaPrintsTheHierarchy() {
        let r = CLIRunner.run(["schema"])
        #expect(r.code == 0)
        #expect(r.out.hasPrefix("Trip\n  name: String  [preserved on deletion, indexed]\n"))
        #expect(r.out.contains("  BusinessTrip : Trip\n    purpose: String\n"))
        #expect(r.out.contains("    familyMembers: [FamilyMember]  -> delete rule nullify, inverse trips\n"))
        #expect(r.out.contains("  trips: [PersonalTrip]  -> delete rule deny, inverse familyMembers\n"))
    }

    @Test func unknownOptionsAndCommandsAreUsageErrors() {
        let a = CLIRunner.run(["import", "--mdoe", "upsert", "x.json"])
        #expect(a.code == 1)
        #expect(a.err == "error: unknown option '--mdoe' for 'tripstore import' (did you mean 'mode'?)\nusage: tripstore import FILE|- [--mode insert|upsert|skip-existing] [--author NAME]\n")
        let b = CLIRunner.run(["improt"])
        #expect(b.code == 1)
        #expect(b.err.hasPrefix("error: unknown command 'improt' (did you mean 'import'?)"))
        let c = CLIRunner.run(["get"])
        #expect(c.err.hasPrefix("error: missing ID"))
        let d = CLIRunner.run(["import", "--mode"])
        #expect(d.err.hasPrefix("error: option '--mode' needs a value"))
    }

    @Test func helpDescribesEveryCommand() {
        let r = CLIRunner.run(["--help"])
        #expect(r.code == 0)
        for name in ["import", "validate", "export", "get", "stats", "compact", "verify", "schema"] {
            #expect(r.out.contains("  \(name) "), "overview lists \(name)")
            let h = CLIRunner.run([name, "--help"])
            #expect(h.code == 0)
            #expect(h.out.contains("Usage: tripstore \(name)"))
            #expect(h.out.contains("Examples:"))
        }
    }

    @Test func readCommandsOnAnEmptyFolderSayThereIsNoStore() {
        let folder = CLIRunner.runRoot + "empty-\(UUID().uuidString)"
        let r = CLIRunner.run(["stats"], store: folder)
        #expect(r.code == 1)
        #expect(r.err == "error: no store at \(folder); import a file to create one\n")
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test func storeComesFromTheEnvironmentOrTheFlagInAnyPosition() {
        let folder = CLIRunner.runRoot + "env-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", sample], env: ["TRIPSTORE_DIR": folder]).code == 0)
        let r = CLIRunner.run(["stats", "--store", folder])
        #expect(r.out.contains("objects      493\n"))
    }

    @Test func statsSaysWhetherTheStoreOpenedFromItsImage() throws {
        let folder = CLIRunner.runRoot + "image-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", sample], store: folder).code == 0)
        #expect(!CLIRunner.run(["stats"], store: folder).out.contains("image "))  // no snapshot yet
        #expect(CLIRunner.run(["compact"], store: folder).code == 0)
        #expect(CLIRunner.run(["stats"], store: folder).out.contains("image        snapshot-1.image, "))
        #expect(CLIRunner.run(["stats"], store: folder).out.contains(" bytes (opened from it)\n"))
        try FileManager.default.removeItem(atPath: folder + "/snapshot-1.image")
        #expect(CLIRunner.run(["stats"], store: folder).out.contains("image        none (opened from the JSON)\n"))
        #expect(CLIRunner.run(["query", "is PersonalTrip", "--count"], store: folder).out == "11\n")
    }

    @Test func importGetExportRoundTrip() throws {
        let folder = CLIRunner.runRoot + "rt-\(UUID().uuidString)"
        let i = CLIRunner.run(["import", sample], store: folder)
        #expect(i.code == 0)
        #expect(i.out.hasPrefix("inserted 493 objects (Attraction 26, BucketListItem 100, BusinessMeal 107, BusinessTrip 36"))
        let g = CLIRunner.run(["get", "romeoville-audit"], store: folder)
        #expect(g.out == """
        {
          "type": "BusinessTrip",
          "id": "romeoville-audit",
          "data": {
            "name": "Warehouse audit",
            "destination": "Romeoville, USA",
            "startDate": "2026-05-11T00:00:00Z",
            "endDate": "2026-05-12T00:00:00Z",
            "bucketList": [],
            "livingAccommodation": null,
            "purpose": "Audit visit with Bluebird Logistics",
            "expenseCode": "EX-2",
            "perDiemRate": 80,
            "mileageRate": 0.6,
            "itinerary": null,
            "milesDriven": [],
            "businessMeals": [],
            "sessionsAttended": []
          }
        }

        """)
        #expect(CLIRunner.run(["get", "nope"], store: folder).code == 1)
        let e1 = CLIRunner.run(["export", "--format", "jsonl"], store: folder)
        let other = CLIRunner.runRoot + "rt2-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", "-"], store: other, stdin: e1.out).code == 0)
        #expect(CLIRunner.run(["export", "--format", "jsonl"], store: other).out == e1.out)
        let part = CLIRunner.run(["export", "--from", "PersonalTrip"], store: folder)
        let third = CLIRunner.runRoot + "rt3-\(UUID().uuidString)"
        let imported = CLIRunner.run(["import", "-"], store: third, stdin: part.out)
        #expect(imported.code == 0, "\(imported.err)")
        #expect(imported.out.contains("PersonalTrip 11"))
    }
}
