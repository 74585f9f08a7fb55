import Foundation
import Testing
import TripStoreCLI

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
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            var results: [CLIRunner.Result] = []
            var exports: [String] = []
            for env in [["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "1"], [:]] {
                let store = CLIRunner.scratch() + "/store"
                results.append(CLIRunner.run(["import", file], store: store, env: env))
                // Bad input leaves no trace, not even a new store's folder.
                #expect(results.last?.code == 0 || !FileManager.default.fileExists(atPath: store) || name == "duplicate id" || name == "dangling reference",
                        "\(name): \(env)")
                exports.append(CLIRunner.run(["export", "--format", "jsonl"], store: store).out)
            }
            #expect(results[0].code == results[1].code, "\(name)")
            #expect(results[0].out == results[1].out, "\(name)")
            #expect(results[0].err == results[1].err, "\(name)")
            #expect(exports[0] == exports[1], "\(name)")
            #expect(results[0].code == (name == "valid" ? 0 : 1), "\(name): \(results[0].err)")
        }
    }
}
