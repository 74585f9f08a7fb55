import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// History as a snapshot stores it: format 2 groups a run of inserts of one
/// type into one change with `ids`; format 1 (one change per insert) still opens.
@Suite struct StoredHistoryFormatTests {
    static let transaction = HistoryTransaction(token: 7, timestamp: 800_000_000, author: "ann", changes: [
        Change(kind: .insert, type: "Trip", id: "t1"),
        Change(kind: .insert, type: "Attraction", id: "a1"),
        Change(kind: .insert, type: "Attraction", id: "a2"),
        Change(kind: .insert, type: "Attraction", id: "a\u{22}3"),
        Change(kind: .update, type: "Trip", id: "t0", values: [ValueChange(name: "name", old: .string("x"), new: .string("y"))]),
        Change(kind: .insert, type: "Trip", id: "t2"),
        Change(kind: .insert, type: "Trip", id: "t3"),
        Change(kind: .delete, type: "Trip", id: "t9", tombstone: [JSONMember("name", .string("gone"))]),
    ])

    static func bytes(grouped: Bool) -> [UInt8] {
        var out: [UInt8] = []
        HistoryCoding.appendCompact(transaction, to: &out, groupInserts: grouped)
        return out
    }

    @Test func aRunOfInsertsOfOneTypeIsStoredOnceWithItsIDs() {
        let text = String(decoding: Self.bytes(grouped: true), as: UTF8.self)
        #expect(text == #"{"token":7,"timestamp":"2026-05-09T06:13:20Z","author":"ann","changes":[{"kind":"insert","type":"Trip","id":"t1"},"#
            + #"{"kind":"insert","type":"Attraction","ids":["a1","a2","a\"3"]},"#
            + #"{"kind":"update","type":"Trip","id":"t0","values":{"name":{"old":"x","new":"y"}}},"#
            + #"{"kind":"insert","type":"Trip","ids":["t2","t3"]},"#
            + #"{"kind":"delete","type":"Trip","id":"t9","tombstone":{"name":"gone"}}]}"#)
    }

    @Test(arguments: [true, false])
    func bothReadersGiveBackTheSameTransaction(_ grouped: Bool) throws {
        let bytes = Self.bytes(grouped: grouped)
        let fast = bytes.withUnsafeBufferPointer { HistoryFastReader.read($0) }
        #expect(fast == Self.transaction)
        #expect(HistoryCoding.read(try JSONReader.parse(bytes)) == Self.transaction)
    }

    @Test func aMalformedGroupIsRefusedByBothReaders() throws {
        for bad in [#"{"kind":"insert","type":"Trip","ids":["t2"]}"#, #"{"kind":"insert","type":"Trip","ids":[]}"#,
                    #"{"kind":"insert","type":"Trip","ids":["t2",3]}"#, #"{"kind":"insert","type":"Trip","id":"t","ids":["a","b"]}"#] {
            let line = Array((#"{"token":1,"timestamp":"2026-05-08T04:53:20Z","author":"a","changes":["# + bad + "]}").utf8)
            #expect(line.withUnsafeBufferPointer { HistoryFastReader.read($0) } == nil, "\(bad)")
            #expect(HistoryCoding.read(try JSONReader.parse(line)) == nil, "\(bad)")
        }
    }

    /// Mutated lines never trap either reader, and what both accept they read alike.
    @Test func mutatedLinesNeverTrapAndTheReadersAgree() {
        var rng = RandomQueries(state: 909)
        let good = Self.bytes(grouped: true)
        for _ in 0..<ReaderFuzzTests.cases {
            let line = ReaderFuzzTests.mutate(good, &rng)
            let fast = line.withUnsafeBufferPointer { HistoryFastReader.read($0) }
            let tree = (try? JSONReader.parse(line)).flatMap(HistoryCoding.read)
            if let fast { #expect(fast == tree) }
        }
    }

    /// A store written before format 2 opens, and its history reads as it was written.
    @Test func aFormatOneSnapshotStillOpens() throws {
        let folder = TestFolders.make("format1")
        let fixtures = TestFolders.projectRoot + "/Tests/TripStoreEngineTests/Fixtures/format1"
        for name in ["snapshot-2.jsonl", "schema.json", "journal-2.jsonl"] {
            try Data(try FileIO.readFile(fixtures + "/" + name)).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        #expect(store.history.map(\.token) == [1, 2, 3])
        #expect(store.history[0].changes.map { "\($0.kind) \($0.type) \($0.id)" } == ["insert BusinessTrip b1", "insert BusinessMeal m1"])
        #expect(store.table.count == 0)
        // The next snapshot is written in the current format.
        try store.compact()
        let snapshot = String(decoding: try FileIO.readFile(folder + "/snapshot-3.jsonl"), as: UTF8.self)
        #expect(snapshot.hasPrefix(#"{"format":2,"#))
        store.close()
        let reopened = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(reopened.history == store.history)
    }
}
