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

    /// A bulk import writes its line's inserts in pieces of ids on every core
    /// (`appendInsertRuns`): any pieces that follow one another make the line
    /// `appendCompact` writes for the same inserts.
    @Test func insertRunsWrittenInPiecesMakeTheGroupedLine() {
        let runs: [(type: String, ids: [String])] = [("Trip", ["t1"]), ("Attraction", ["a1", "a2", "a\u{22}3"]), ("Leg", []),
                                                      ("Note", ["n1", "n2"]), ("Stop", ["s1"])]
        let transaction = HistoryTransaction(token: 3, timestamp: 800_000_000, author: "bulk",
                                             changes: runs.flatMap { run in run.ids.map { Change(kind: .insert, type: run.type, id: $0) } })
        var whole: [UInt8] = []
        HistoryCoding.appendCompact(transaction, to: &whole, groupInserts: true)
        let counts = runs.map { ($0.type, $0.ids.count) }
        let total = counts.reduce(0) { $0 + $1.1 }
        var random = SplitMix64(seed: 16)
        for _ in 0..<200 {
            var w = JSONWriter()
            HistoryCoding.appendHeader(token: 3, timestamp: 800_000_000, author: "bulk", to: &w)
            var start = 0
            while start < total {
                let end = min(total, start + Int(random.next() % 4))
                HistoryCoding.appendInsertRuns(counts, positions: start..<end, id: { n, k, w in w.appendQuoted(runs[n].ids[k]) }, to: &w)
                start = end
            }
            #expect(String(decoding: w.bytes, as: UTF8.self) == String(decoding: whole, as: UTF8.self))
        }
        #expect(String(decoding: whole, as: UTF8.self).hasSuffix(#"{"kind":"insert","type":"Stop","id":"s1"}]}"#))
    }

    /// A transaction whose line passes a megabyte is handed out in pieces
    /// as it is written (a snapshot writes them as they come): the pieces
    /// and what is left make the line written whole, grouped or not.
    /// A snapshot that commits a transaction whose line passes a megabyte
    /// (written as it is encoded, in pieces) checksums and reads back as
    /// the history and objects it was given, from the JSON alone.
    @Test func aSnapshotWithALongHistoryLineReadsBack() throws {
        let folder = TestFolders.make("long-line")
        let store = try TestStores.bulkImported(folder, seed: 31, trips: 2_000, timestamp: 1_790_000_000)
        let long = String(repeating: "a long note that makes the line long ", count: 20)
        // Committed by a snapshot (the bulk options' threshold), then by a compaction too.
        try store.update(store.run(try Query("is Trip")).rows, set: [("destination", "\"" + long + "\"")], author: "bulk", timestamp: 1_790_000_100)
        try Store.verifySnapshotChecksum(at: store.files.snapshot(store.snapshotToken))
        try store.compact()
        let path = store.files.snapshot(store.snapshotToken)
        let lines = try FileIO.readFile(path).split(separator: 0x0A)
        #expect(lines.contains { $0.count > 1 << 20 }, "a line of more than a megabyte")
        try Store.verifySnapshotChecksum(at: path)
        let history = try store.checkedHistory()
        store.close()
        var o = StoreOptions()
        o.useSnapshotImage = false
        let json = try Store.open(folder, schema: TripSchema.schema, access: .read, options: o)
        #expect(try json.checkedHistory() == history)
        let trip = try #require(json.run(try Query("is Trip")).rows.first)
        let destination = try #require(TripSchema.schema.entity(named: "Trip")?.property(named: "destination")).slot
        #expect(json.table.value(at: trip, slot: destination) == .string(long))
    }

    @Test(arguments: [true, false])
    func aLongLineDrainedInPiecesIsTheLineWrittenWhole(grouped: Bool) {
        var changes: [Change] = []
        for k in 0..<40_000 {
            let id = String(format: "%08d-id", k)
            switch k % 4 {
            case 0: changes.append(Change(kind: .delete, type: "Trip", id: id, tombstone: [JSONMember("name", .string("gone \(k)"))]))
            case 1: changes.append(Change(kind: .update, type: "Trip", id: id, values: [ValueChange(name: "name", old: .string("a"), new: .string("b \(k)"))]))
            default: changes.append(Change(kind: .insert, type: k % 8 < 4 ? "Trip" : "Note", id: id))
            }
        }
        let t = HistoryTransaction(token: 9, timestamp: 800_000_000, author: "bulk", changes: changes)
        var whole: [UInt8] = Array("before\n".utf8)
        HistoryCoding.appendCompact(t, to: &whole, groupInserts: grouped)
        var pieces: [UInt8] = [], drains = 0
        var rest: [UInt8] = Array("before\n".utf8)
        HistoryCoding.appendCompact(t, to: &rest, groupInserts: grouped, drain: { bytes in
            #expect(bytes.count >= 1 << 20)
            pieces += bytes
            bytes.removeAll(keepingCapacity: true)
            drains += 1
        })
        #expect(whole.count > 2 << 20)
        #expect(drains >= 2)
        #expect(rest.count < 1 << 20 + 4_096)
        #expect(pieces + rest == whole)
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

    /// Ids in history are ids: empty ones and control characters make the
    /// line unreadable (history and verify say so); another normal form is
    /// read as NFC, as the objects' ids are.
    @Test func historyIdsAreCheckedAndNormalised() throws {
        for bad in [#"{"kind":"insert","type":"Trip","id":""}"#, #"{"kind":"insert","type":"Trip","ids":["a","b\u0001"]}"#,
                    #"{"kind":"delete","type":"Trip","id":"x\u0085","tombstone":{}}"#, #"{"kind":"insert","type":"","id":"t"}"#,
                    #"{"kind":"update","type":"Trip","id":"","values":{}}"#] {
            let line = Array((#"{"token":1,"timestamp":"2026-05-08T04:53:20Z","author":"a","changes":["# + bad + "]}").utf8)
            #expect(line.withUnsafeBufferPointer { HistoryFastReader.read($0) } == nil, "\(bad)")
            #expect(HistoryCoding.read(try JSONReader.parse(line)) == nil, "\(bad)")
        }
        let nfd = Array((#"{"token":1,"timestamp":"2026-05-08T04:53:20Z","author":"a","changes":[{"kind":"insert","type":"Trip","id":"cafe\u0301"},{"kind":"insert","type":"Trip","ids":["re\u0301","x"]}]}"#).utf8)
        let fast = nfd.withUnsafeBufferPointer { HistoryFastReader.read($0) }
        #expect(fast?.changes.map(\.id) == ["caf\u{E9}", "r\u{E9}", "x"])
        #expect(HistoryCoding.read(try JSONReader.parse(nfd))?.changes.map(\.id) == ["caf\u{E9}", "r\u{E9}", "x"])
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
        #expect(snapshot.hasPrefix(#"{"format":3,"#))
        store.close()
        let reopened = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(reopened.history == store.history)
    }
}

@Suite struct InsertOrderTests {
    /// Nested input lists a trip, its items, the next trip…: history lists the
    /// inserts by type (in the order types first appear), the same from the
    /// writer, from the journal and from the snapshot, and the snapshot stores
    /// each type's run once.
    @Test func insertsAreGroupedByTypeInEveryView() throws {
        let folder = TestFolders.make("insert-order")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        let input = #"""
        [{"type":"Trip","id":"t1","data":{"name":"A","destination":"X","startDate":"2026-01-01","endDate":"2026-01-02",
          "bucketList":[{"type":"BucketListItem","id":"i1","data":{"title":"a","isCompleted":false}},
                        {"type":"BucketListItem","id":"i2","data":{"title":"b","isCompleted":false}}]}},
         {"type":"Trip","id":"t2","data":{"name":"B","destination":"Y","startDate":"2026-01-01","endDate":"2026-01-02",
          "bucketList":[{"type":"BucketListItem","id":"i3","data":{"title":"c","isCompleted":true}}]}}]
        """#
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array(input.utf8), schema: store.schema), mode: .insert, into: &tx)
        let t = try #require(try store.commit(tx, author: "a"))
        let expected = ["Trip t1", "Trip t2", "BucketListItem i1", "BucketListItem i2", "BucketListItem i3"]
        #expect(t.changes.map { "\($0.type) \($0.id)" } == expected)
        store.close()
        let fromJournal = try Store.open(folder, schema: TripSchema.schema, access: .write)
        #expect(fromJournal.history.first?.changes.map { "\($0.type) \($0.id)" } == expected)
        #expect(fromJournal.table.count == 5)
        try fromJournal.compact()
        fromJournal.close()
        let snapshot = String(decoding: try FileIO.readFile(folder + "/snapshot-1.jsonl"), as: UTF8.self)
        #expect(snapshot.contains(#"{"kind":"insert","type":"Trip","ids":["t1","t2"]},{"kind":"insert","type":"BucketListItem","ids":["i1","i2","i3"]}"#))
        let fromSnapshot = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(fromSnapshot.history.first?.changes.map { "\($0.type) \($0.id)" } == expected)
    }
}
