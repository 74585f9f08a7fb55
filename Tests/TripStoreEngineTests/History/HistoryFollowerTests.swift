import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// `HistoryFollower`: every token once, whether it arrives as a journal line
/// (taken in by `catchUp`) or after a compaction (the store opened again).
@Suite struct HistoryFollowerTests {
    func commitTrip(_ store: Store, _ k: Int) throws {
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array(#"[{"type":"Trip","id":"t\#(k)","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}]"#.utf8),
                                                 schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "a")
    }

    @Test func everyTokenOnceAcrossJournalLinesAndCompactions() throws {
        let folder = TestFolders.make("follower")
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        try commitTrip(writer, 0)
        let follower = try HistoryFollower(folder: folder, since: nil) {
            try Store.open(folder, schema: TripSchema.schema, access: .read)
        }
        #expect(follower.cursor == 1)
        #expect(try follower.poll() == nil)  // the first poll reads the open store: nothing new
        #expect(try follower.poll() == nil)  // nothing changed on disk
        var seen: [Int64] = []
        for k in 1...12 {
            try commitTrip(writer, k)
            if k % 5 == 0 { try writer.compact() }
            if k % 3 == 0, let (store, ts) = try follower.poll() {
                seen += ts.map(\.token)
                // The store it read holds every object committed so far.
                #expect(store.table.row(for: "t\(k)") != nil)
            }
        }
        if let (_, ts) = try follower.poll() { seen += ts.map(\.token) }
        #expect(seen == Array(2...13))
        #expect(follower.cursor == 13)
    }

    @Test func catchUpTakesInNewLinesAndRefusesANewSnapshot() throws {
        let folder = TestFolders.make("catchup")
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        try commitTrip(writer, 0)
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(try reader.catchUp())
        try commitTrip(writer, 1)
        try commitTrip(writer, 2)
        #expect(try reader.catchUp())
        #expect(reader.lastToken == 3 && reader.table.row(for: "t2") != nil && reader.history.map(\.token) == [1, 2, 3])
        try writer.compact()
        #expect(try !reader.catchUp())
    }

    /// A query after `catchUp()` reads the values it took in, not an index
    /// built before them (from the image, and from the JSON).
    @Test(arguments: [true, false]) func aQueryAfterCatchingUpSeesTheNewValues(image: Bool) throws {
        let folder = TestFolders.make("catchup-index-\(image)")
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        for k in 0..<4 { try commitTrip(writer, k) }
        try writer.compact()
        var options = StoreOptions()
        options.useSnapshotImage = image
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read, options: options)
        let renamed = try Query("name == \"renamed\"")
        #expect(try reader.run(renamed).rows.isEmpty)
        let slot = try #require(writer.schema.entity(named: "Trip")?.property(named: "name")?.slot)
        var tx = writer.transaction()
        tx.setAttribute(try #require(writer.table.row(for: "t1")), slot: slot, to: .string("renamed"))
        try writer.commit(tx, author: "a")
        try commitTrip(writer, 9)
        #expect(try reader.catchUp())
        #expect(try reader.run(renamed).rows.map { reader.table.id(at: $0) } == ["t1"])
        let unchanged = try writer.run(Query("name == \"n\"")).rows.count
        #expect(try reader.run(Query("name == \"n\"")).rows.count == unchanged)
    }

    /// `history(after:)` reads the snapshot's history backwards in a growing
    /// window; whatever the token, it gives what the whole history gives.
    @Test func historyAfterATokenEqualsTheTailOfTheWholeHistory() throws {
        let folder = TestFolders.make("history-after")
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        try commitTrip(writer, 0)
        let trip = writer.schema.entity(named: "Trip")!
        let row = writer.table.row(for: "t0")!
        for k in 0..<1500 {
            var tx = writer.transaction()
            tx.setAttribute(row, slot: trip.property(named: "destination")!.slot, to: .string(String(repeating: "d", count: 40) + "\(k)"))
            try writer.commit(tx, author: "a")
        }
        try writer.compact()
        let all = try Store.open(folder, schema: TripSchema.schema, access: .read).checkedHistory()
        #expect(all.count == 1501)
        for after: Int64 in [0, 1, 2, 700, 1499, 1500, 1501, 1502] {
            let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
            #expect(try reader.history(after: after) == all.filter { $0.token > after }, "after \(after)")
            #expect(reader.oldestRetainedToken == 1)
        }
    }
}
