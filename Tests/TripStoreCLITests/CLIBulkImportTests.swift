import Foundation
import Testing
import TripStoreCLI
import TripStoreEngine
import TripStoreModels

/// `tripstore import` into an empty store takes the bulk path when the input
/// is big enough (`TRIPSTORE_SNAPSHOT_COMMIT_CHANGES` lowers the bar here):
/// what it prints, its exit code and the store it leaves are those of the
/// usual path, and bad input gets the usual message naming record, path and property.
@Suite struct CLIBulkImportTests {
    static let inputs: [(String, String)] = [
        ("valid", #"[{"type":"Trip","id":"t1","data":{"name":"A","destination":"Rome","startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T00:00:00Z","bucketList":[{"type":"BucketListItem","id":"b1","data":{"title":"x","isCompleted":false}}]}}]"#),
        ("duplicate id", #"[{"type":"Trip","id":"t1","data":{"name":"A","destination":"Rome","startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T00:00:00Z"}},{"type":"Trip","id":"t1","data":{"name":"B","destination":"Oslo","startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T00:00:00Z"}}]"#),
        ("dangling reference", #"[{"type":"BucketListItem","id":"b1","data":{"title":"x","isCompleted":false,"trip":{"type":"Trip","id":"nope"}}}]"#),
        ("wrong value type", #"[{"type":"Trip","id":"t1","data":{"name":"A","destination":"Rome","startDate":"2026-01-01T00:00:00Z","endDate":"2026-01-02T00:00:00Z","bucketList":[{"type":"BucketListItem","id":"b1","data":{"title":"x","isCompleted":"no"}}]}}]"#),
        ("not JSON", #"[{"type":"Trip","id":"t1","data":{"name":"A"}"#),
        ("JSON Lines, a bad line", "{\"type\":\"BucketListItem\",\"id\":\"b1\",\"data\":{\"title\":\"x\",\"isCompleted\":false}}\n{\"type\":\"BucketListItem\",\"id\":\"b2\",\"data\":{\"title\":7,\"isCompleted\":false}}\n"),
    ]

    @Test func bulkAndUsualImportsPrintAndStoreTheSame() throws {
        for (name, text) in Self.inputs {
            let folder = CLIRunner.scratch()
            let file = folder + "/input.json"
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            var results: [CLIRunner.Result] = []
            var exports: [String] = []
            // The largest bar there is turns the bulk path off (and overflows nothing).
            for env in [["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "1"], ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "\(Int.max)"]] {
                let store = CLIRunner.scratch() + "/store"
                results.append(CLIRunner.run(["import", file], store: store, env: env))
                // Bad input leaves no trace, not even a new store's folder.
                #expect(results.last?.code == 0 || !FileManager.default.fileExists(atPath: store), "\(name): \(env)")
                exports.append(CLIRunner.run(["export", "--format", "jsonl"], store: store).out)
            }
            #expect(results[0].code == results[1].code, "\(name)")
            #expect(results[0].out == results[1].out, "\(name)")
            #expect(results[0].err == results[1].err, "\(name)")
            #expect(exports[0] == exports[1], "\(name)")
            #expect(results[0].code == (name == "valid" ? 0 : 1), "\(name): \(results[0].err)")
        }
    }

    /// A failed import into a store that holds objects leaves the store as it was.
    /// A first import whose snapshot cannot be written (here the file size
    /// limit; a full disk alike) exits 3 and leaves no folder, on both paths.
    @Test func anImportThatCannotWriteLeavesNoFolder() throws {
        let folder = CLIRunner.scratch()
        let file = folder + "/input.json"
        let items = (0..<2000).map { #"{"type":"BucketListItem","id":"item-\#($0)","data":{"title":"something to do, number \#($0)","isCompleted":false}}"# }
        try ("[" + items.joined(separator: ",") + "]").write(toFile: file, atomically: false, encoding: .utf8)
        for bar in ["1", "\(Int.max)"] {
            let store = CLIRunner.scratch() + "/store"
            // 64 blocks of 512 bytes (or 1024) at most per file; the signal for a bigger write ignored, so the write fails.
            let status = try CLIRunner.runProcess(["/bin/sh", "-c", "trap '' XFSZ; ulimit -f 64; exec \"$0\" --store \"$1\" import \"$2\"",
                                                   CLIRunner.binary, store, file],
                                                  env: ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": bar], executable: "/bin/sh")
            #expect(status.status == 3 && !status.killed, "bar \(bar)")
            #expect(!FileManager.default.fileExists(atPath: store), "bar \(bar)")
        }
    }

    @Test func aFailedImportLeavesAnExistingStoreAlone() throws {
        let folder = CLIRunner.scratch()
        let store = folder + "/store", file = folder + "/input.json"
        try Self.inputs[0].1.write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", file], store: store).code == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        try Self.inputs[2].1.write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", file], store: store).code == 1)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == before)
        #expect(CLIRunner.run(["query", "is Trip", "--count"], store: store).out == "1\n")
    }

    /// An input with no envelopes makes no store where there was none
    /// (found by a hostile review: it left a folder and lock file, after
    /// which every command said there was no store), and changes none where there is one.
    @Test(arguments: ["", "[]", "\n\n"])
    func nothingToImportMakesNoStore(_ input: String) throws {
        let folder = CLIRunner.scratch()
        let store = folder + "/store", file = folder + "/input.json"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try input.write(toFile: file, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["import", file], store: store)
        #expect(r.code == 0 && r.out == "nothing to import: no store was made at \(store)\n", "\(r.out)\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: store))
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: store).sorted()
        let again = CLIRunner.run(["import", file], store: store)
        #expect(again.code == 0 && again.out == "nothing to import: the store is unchanged\n", "\(again.out)\(again.err)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: store).sorted() == before)
    }

    /// The input is read and decoded before the store is opened: into an
    /// empty folder, or a path whose parents do not exist, nothing to import
    /// or a bad input leaves nothing (not a lock file, not a parent), and an
    /// input that cannot be read is named at once, even while another writer
    /// holds the lock (found by a hostile review: it waited and said "locked").
    @Test func theInputIsReadBeforeTheStoreIsOpened() throws {
        let folder = CLIRunner.scratch()
        let empty = folder + "/empty.json", bad = folder + "/bad.json"
        try "[]".write(toFile: empty, atomically: false, encoding: .utf8)
        try #"[{"type":"Trip","id":"a","data":{"name":1}}]"#.write(toFile: bad, atomically: false, encoding: .utf8)
        let existing = folder + "/existing"
        try FileManager.default.createDirectory(atPath: existing, withIntermediateDirectories: true)
        for input in [empty, bad] {
            _ = CLIRunner.run(["import", input], store: existing)
            #expect(try FileManager.default.contentsOfDirectory(atPath: existing).isEmpty, "\(input)")
            _ = CLIRunner.run(["import", input], store: folder + "/no/such/parents")
            #expect(!FileManager.default.fileExists(atPath: folder + "/no"), "\(input)")
        }
        let store = folder + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        let holder = try Store.open(store, schema: TripSchema.schema, access: .write)
        defer { holder.close() }
        let r = CLIRunner.run(["import", folder + "/missing.json", "--wait", "0"], store: store)
        #expect(r.code == 1 && r.err.hasPrefix("error: cannot read \(folder)/missing.json"), "\(r.err)")
        // A file where the store's folder goes is named as such, not an internal error.
        let r2 = CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: empty)
        #expect(r2.code == 1 && r2.err == "error: \(empty) is not a folder; a store is a folder of its own\n", "\(r2.err)")
    }

    /// `--mode skip-existing` leaves an existing trip's values alone but links
    /// a missing child the file nests under it back to it (found by a hostile
    /// review: the meal came back with no trip), and takes no to-one away.
    @Test func skipExistingLinksANewChildToItsExistingParent() throws {
        let store = CLIRunner.scratch() + "/store", sample = CLIRunner.projectRoot + "/SampleData/trips.json"
        #expect(CLIRunner.run(["import", sample], store: store).code == 0)
        #expect(CLIRunner.run(["delete", "rome-summit-meal-2"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Milan"], store: store).code == 0)
        let r = CLIRunner.run(["import", sample, "--mode", "skip-existing"], store: store)
        #expect(r.out == "inserted 1 object (BusinessMeal 1); updated 1 object (BusinessTrip 1); committed as token 4\n", "\(r.out)\(r.err)")
        let meal = CLIRunner.run(["get", "rome-summit-meal-2"], store: store).out.filter { !$0.isWhitespace }
        #expect(meal.contains(#""trip":{"type":"BusinessTrip","id":"rome-summit"}"#), "\(meal)")
        let trip = CLIRunner.run(["get", "rome-summit"], store: store).out.filter { !$0.isWhitespace }
        #expect(trip.contains(#""destination":"Milan""#) && trip.contains(#"{"type":"BusinessMeal","id":"rome-summit-meal-2"}"#), "\(trip)")
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// A temporary file that an interrupted write left is noted by `verify`
    /// and removed by `verify --repair` (as by any writer).
    @Test func verifyNotesAndRepairRemovesLeftovers() throws {
        let folder = CLIRunner.scratch()
        let store = folder + "/store", file = folder + "/input.json"
        try Self.inputs[0].1.write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", file], store: store, env: ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "1"]).code == 0)
        let leftover = store + "/snapshot-1.image.tmp"
        try "torn".write(toFile: leftover, atomically: false, encoding: .utf8)
        let noted = CLIRunner.run(["verify"], store: store)
        #expect(noted.code == 0)
        #expect(noted.out.contains("note: \(leftover) left by an interrupted write"))
        #expect(FileManager.default.fileExists(atPath: leftover))
        let repaired = CLIRunner.run(["verify", "--repair"], store: store)
        #expect(repaired.code == 0 && repaired.out.contains("repaired: removed \(leftover)"))
        #expect(!FileManager.default.fileExists(atPath: leftover))
        #expect(!CLIRunner.run(["verify"], store: store).out.contains("note:"))
    }

    /// A first import killed before it committed leaves no store but its
    /// snapshot's temporary files (as big as the store would be): `verify`
    /// names them instead of only saying there is no store, and `--repair`
    /// removes them, with the folder they were all that was left in.
    @Test func verifyNamesWhatAnInterruptedFirstImportLeft() throws {
        let folder = CLIRunner.scratch()
        let made = folder + "/made", store = folder + "/store", file = folder + "/input.json"
        try Self.inputs[0].1.write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", file], store: made).code == 0)
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: made + "/schema.json", toPath: store + "/schema.json")
        let leftovers = [store + "/snapshot-1.jsonl.tmp", store + "/snapshot-1.image.tmp"]
        for l in leftovers { try "half a snapshot".write(toFile: l, atomically: false, encoding: .utf8) }
        let noted = CLIRunner.run(["verify"], store: store)
        #expect(noted.code == 1)
        #expect(leftovers.allSatisfy { noted.err.contains($0) } && noted.err.contains("nothing was committed"), "\(noted.err)")
        #expect(leftovers.allSatisfy { FileManager.default.fileExists(atPath: $0) }, "verify alone changes nothing")
        let repaired = CLIRunner.run(["verify", "--repair"], store: store)
        #expect(repaired.code == 0 && repaired.out.contains("repaired: removed"), "\(repaired.out)\(repaired.err)")
        #expect(!FileManager.default.fileExists(atPath: store))
        let after = CLIRunner.run(["verify"], store: store)
        #expect(after.code == 1 && after.err.contains("no store at") && !after.err.contains(".tmp"))
    }

    /// Only the temporary files a write of the store makes are a writer's
    /// or `verify --repair`'s to remove: a user's own `.tmp` in the folder
    /// (or in a folder wrongly given as the store) stays, and so does a
    /// folder named like a leftover, which no write makes.
    @Test func aUsersTemporaryFilesAreNeverRemoved() throws {
        let folder = CLIRunner.scratch()
        let notAStore = folder + "/documents", store = folder + "/store"
        try FileManager.default.createDirectory(atPath: notAStore, withIntermediateDirectories: true)
        try "precious".write(toFile: notAStore + "/report.tmp", atomically: false, encoding: .utf8)
        for args in [["verify"], ["verify", "--repair"]] {
            let r = CLIRunner.run(args, store: notAStore)
            #expect(r.code == 1 && r.err.contains("no store at") && !r.err.contains("report.tmp"), "\(args): \(r.err)")
        }
        #expect(FileManager.default.fileExists(atPath: notAStore + "/report.tmp"))
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        try "mine".write(toFile: store + "/notes.tmp", atomically: false, encoding: .utf8)
        try FileManager.default.createDirectory(atPath: store + "/snapshot-9.jsonl.tmp", withIntermediateDirectories: true)
        let verified = CLIRunner.run(["verify", "--repair"], store: store)
        #expect(verified.code == 0 && !verified.out.contains("removed"), "\(verified.out)")
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-TMP"], store: store).code == 0)
        #expect(FileManager.default.fileExists(atPath: store + "/notes.tmp"))
        #expect(FileManager.default.fileExists(atPath: store + "/snapshot-9.jsonl.tmp"))
    }
}
