import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// `Store.update` of many objects (`BulkUpdater`, no staging) against the
/// staged way (`stageUpdate` then `commit`): the same snapshot byte for
/// byte, the same history, and nothing written when it refuses.
@Suite struct BulkUpdateTests {
    static let time = ISODate.parse("2026-12-07T09:00:00Z")!

    /// Two identical stores of generated trips, opened so that any update
    /// of one object or more takes the bulk way in `update` and is committed
    /// by a snapshot in `commit`: one to update in bulk, one staged.
    static func pair(_ name: String, seed: UInt64) throws -> (bulk: Store, staged: Store) {
        var o = StoreOptions()
        o.snapshotCommitChanges = 1
        let stores = try ["-bulk", "-staged"].map { side in
            let folder = TestFolders.make(name + side)
            try TestStores.bulkImported(folder, seed: seed, trips: 40, timestamp: time).close()
            return try Store.open(folder, schema: TripSchema.schema, access: .write, options: o)
        }
        return (stores[0], stores[1])
    }

    static func staged(_ store: Store, _ rows: [RowID], _ assignments: [(name: String, text: String)], at t: Double) throws -> HistoryTransaction? {
        var tx = store.transaction()
        try store.stageUpdate(rows, set: assignments, into: &tx)
        return try store.commit(tx, author: "u", timestamp: t)
    }

    static func rows(_ store: Store, _ predicate: String) throws -> [RowID] {
        try store.run(try Query(predicate, from: "Trip")).rows
    }

    static let predicates = ["is Trip", "is BusinessTrip", "destination ~ \"a\"", "perDiemRate > 100", "is PersonalTrip || is BusinessTrip"]
    static let assignments: [[(name: String, text: String)]] = [
        [("destination", "Oslo")], [("name", "\"Renamed\""), ("notes", "null")], [("notes", "'to plan'")],
        [("startDate", "2026-05-01")], [("destination", "Oslo"), ("name", "Same")],
    ]

    @Test(arguments: [UInt64(1), 2, 3])
    func aBulkUpdateWritesWhatTheStagedOneWrites(seed: UInt64) throws {
        let (bulk, staged) = try Self.pair("bulk-update-\(seed)", seed: seed)
        defer { bulk.close(); staged.close() }
        var rng = SplitMix64(seed: seed)
        for step in 0..<6 {
            let predicate = Self.predicates[Int(rng.next() % UInt64(Self.predicates.count))]
            var set = Self.assignments[Int(rng.next() % UInt64(Self.assignments.count))]
            // Attributes only some types have: the types without them refuse, in both ways alike.
            if predicate == "is BusinessTrip" && rng.next() % 2 == 0 { set.append(("expenseCode", "EX-\(step)")) }
            var rows = try Self.rows(bulk, predicate)
            #expect(rows == (try Self.rows(staged, predicate)))
            if rows.count > 2 { rows.append(rows[1]) }  // a row named twice changes once
            let t = Self.time + Double(step + 1)
            let a = Result { try bulk.update(rows, set: set, author: "u", timestamp: t) }
            let b = Result { try Self.staged(staged, rows, set, at: t) }
            switch (a, b) {
            case (.success(let x), .success(let y)):
                #expect(x == y, "step \(step): \(predicate) \(set)")
                #expect(bulk.lastToken == staged.lastToken)
                if let x {
                    #expect(try FileIO.readFile(bulk.files.snapshot(x.token)) == (try FileIO.readFile(staged.files.snapshot(x.token))),
                            "step \(step): snapshots differ")
                }
            case (.failure(let x), .failure(let y)):
                #expect("\(x)" == "\(y)")
            default:
                Issue.record("step \(step): bulk \(a), staged \(b)")
            }
        }
        // Read again from the files: the same objects and history.
        let folders = (bulk.files.folder, staged.files.folder)
        bulk.close(); staged.close()
        let x = try Store.open(folders.0, schema: TripSchema.schema, access: .read)
        let y = try Store.open(folders.1, schema: TripSchema.schema, access: .read)
        defer { x.close(); y.close() }
        #expect(x.history == y.history)
        #expect(x.exportAllRows().map { x.table.object(at: $0)! } == y.exportAllRows().map { y.table.object(at: $0)! })
    }

    /// The way is chosen by what changes, not by what matches: an update
    /// matching every trip and changing one is a journal line, not a snapshot.
    @Test func matchingManyAndChangingFewIsAJournalLine() throws {
        let folder = TestFolders.make("bulk-update-few")
        try TestStores.bulkImported(folder, seed: 5, trips: 40, timestamp: Self.time).close()
        var o = StoreOptions()
        o.snapshotCommitChanges = 10
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: o)
        defer { store.close() }
        let rows = try Self.rows(store, "is Trip")
        #expect(rows.count >= 10)
        let many = try #require(try store.update(rows, set: [("destination", "Oslo")], author: "u"))
        #expect(store.snapshotToken == many.token, "changing them all is a snapshot")
        try store.update([rows[3]], set: [("destination", "Bergen")], author: "u")
        let few = try #require(try store.update(rows + rows, set: [("destination", "Oslo")], author: "u"))
        #expect(few.changes.count == 1)
        #expect(store.snapshotToken == many.token, "changing one is a journal line")
        #expect(store.journalTransactionCount == 2)
    }

    @Test func aRefusedBulkUpdateWritesNothing() throws {
        let (store, _) = try Self.pair("bulk-update-refused", seed: 4)
        defer { store.close() }
        let rows = try Self.rows(store, "is Trip")
        let before = try FileIO.readFile(store.files.snapshot(store.lastToken))
        let token = store.lastToken
        // expenseCode is a BusinessTrip's: a PersonalTrip among the rows refuses the whole update.
        #expect(throws: StoreError.self) { try store.update(rows, set: [("name", "x"), ("expenseCode", "E")], author: "u") }
        #expect(throws: StoreError.self) { try store.update(rows, set: [("perDiemRate", "lots")], author: "u") }
        #expect(store.lastToken == token)
        #expect(try FileIO.readFile(store.files.snapshot(token)) == before)
        #expect(try Self.rows(store, "name == \"x\"").isEmpty)
        // Values set already: nothing committed.
        let t = try #require(try store.update(rows, set: [("destination", "Oslo")], author: "u"))
        #expect(t.changes.count == rows.count)
        #expect(try store.update(rows, set: [("destination", "Oslo")], author: "u") == nil)
        #expect(store.lastToken == token + 1)
    }
}
