import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The change feed of a bulk import is written from its records and
/// replayed from its bytes: against the walk back, which makes every
/// envelope as JSON (the reference), and against the usual replay.
@Suite struct FeedFromRecordsTests {
    static let time = ISODate.parse("2026-11-28T09:00:00Z")!

    /// The feed as the walk back writes it: every envelope made as JSON.
    static func walkedFeed(_ store: Store, _ ts: [HistoryTransaction]) throws -> [UInt8] {
        guard let first = ts.map(\.token).min() else { return [] }
        let envelopes = try store.insertEnvelopes(after: first - 1, wanted: Set(ts.map(\.token)))
        var out: [UInt8] = []
        for t in ts {
            var w = JSONWriter()
            HistoryCoding.write(t, to: &w, envelopes: envelopes[t.token], deletedValues: true)
            out += w.bytes + [0x0A]
        }
        return out
    }

    static func feed(_ store: Store, _ ts: [HistoryTransaction]) throws -> [UInt8] {
        var out: [UInt8] = []
        try FeedWriter(store).write(ts) { out += $0 }
        return out
    }

    /// Every slice `history --format feed` can print (all, from a token on,
    /// up to a token, newest first) is the walk back's, byte for byte.
    static func expectFeedsAsWalked(_ store: Store, _ label: String) throws {
        let h = try store.checkedHistory()
        var slices = [h, h.reversed()]
        for k in h.indices { slices += [Array(h[k...]), Array(h[...k])] }
        for s in slices {
            let mine = try feed(store, s), walked = try walkedFeed(store, s)
            #expect(mine == walked, "\(label): tokens \(s.map(\.token))")
        }
    }

    static func commit(_ store: Store, _ tx: TransactionBuilder) throws {
        _ = try store.commit(tx, author: "feed", timestamp: time)
    }

    /// A store whose one transaction imports `trips` generated trips the usual way (`stage`, then `commit`).
    static func storeWithImport(_ name: String, seed: UInt64, trips: Int) throws -> Store {
        let store = try Store.open(TestFolders.make(name), schema: TripSchema.schema, access: .write)
        var g = TripDataGenerator(seed: seed)
        try TestStores.commit(g.jsonArray(trips: trips), to: store, timestamp: time)
        return store
    }

    /// A primary with a bulk import, then updates, relationship changes,
    /// cascading deletes and a second import drawn with a fixed seed; its
    /// feed is checked after each step, and again from its image.
    @Test(arguments: [3, 17, 29] as [UInt64]) func aBulkImportsFeedFromItsRecordsIsTheWalkBacks(_ seed: UInt64) throws {
        let folder = TestFolders.make("feed-records-\(seed)")
        var options = StoreOptions()
        options.snapshotCommitChanges = 100
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: options)
        var g = TripDataGenerator(seed: seed)
        var input = g.jsonArray(trips: 25)
        #expect(try BulkImporter(store).insert(&input, author: "feed", timestamp: Self.time) != nil)
        #expect(InsertEnvelopeSources.isBulkInsert(try #require(store.checkedHistory().first)))
        try Self.expectFeedsAsWalked(store, "the import alone")
        var random = SplitMix64(seed: seed)
        let schema = store.schema
        let trip = try #require(schema.entity(named: "Trip"))
        let bucketList = try #require(trip.property(named: "bucketList")).slot
        for step in 0..<8 {
            // Live trips only (`Redactor.idsMatching` also names deleted ones).
            let trips = try Redactor(store).idsMatching(try Query("is Trip")).filter { store.table.row(for: $0) != nil }
            let id = trips[Int(random.next() % UInt64(trips.count))]
            let row = try #require(store.table.row(for: id))
            var tx = store.transaction()
            switch step % 4 {
            case 0:
                try store.stageUpdate([row], set: [("name", "renamed \(step)")], into: &tx)
            case 1:
                try tx.setRelationship(row, slot: bucketList, to: [], deletingDropped: false)
            case 2:
                try tx.delete(row)
            default:
                var more = TripDataGenerator(seed: seed &+ UInt64(step))
                try store.stage(try EnvelopeInput.decode(more.jsonArray(trips: 3), schema: schema), mode: .insert, into: &tx)
            }
            try Self.commit(store, tx)
            try Self.expectFeedsAsWalked(store, "seed \(seed), step \(step)")
        }
        try store.compact()
        store.close()
        let reopened = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(reopened.loadedFromImage)
        try Self.expectFeedsAsWalked(reopened, "seed \(seed), reopened")
        // The same feed, its records read from the image or from the JSON.
        var jsonOnly = StoreOptions()
        jsonOnly.useSnapshotImage = false
        let fromJSON = try Store.open(folder, schema: TripSchema.schema, access: .read, options: jsonOnly)
        #expect(try Self.feed(reopened, reopened.checkedHistory()) == Self.feed(fromJSON, fromJSON.checkedHistory()), "seed \(seed)")
    }

    /// The same for another hierarchy, its records read from an image.
    @Test func aFilmImportsFeedFromItsImageIsTheWalkBacks() throws {
        let folder = TestFolders.make("feed-records-films")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var envelopes: [String] = [#"{"type":"Studio","id":"studio","data":{"name":"North"}}"#]
        for k in 0..<40 {
            envelopes.append(#"{"type":"FeatureFilm","id":"film-\#(k)","data":{"title":"Film \#(k)","screens":\#(k),"runtimeMinutes":90,"genre":"drama","studio":{"type":"Studio","id":"studio"}}}"#)
            envelopes.append(#"{"type":"Credit","id":"credit-\#(k)","data":{"person":"P\#(k)","role":"director","production":{"type":"FeatureFilm","id":"film-\#(k)"}}}"#)
        }
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array(("[" + envelopes.joined(separator: ",") + "]").utf8), schema: store.schema),
                        mode: .insert, into: &tx)
        try Self.commit(store, tx)
        tx = store.transaction()
        try tx.delete(try #require(store.table.row(for: "film-3")))
        try Self.commit(store, tx)
        tx = store.transaction()
        try store.stageUpdate([try #require(store.table.row(for: "credit-5"))], set: [("role", "writer")], into: &tx)
        try Self.commit(store, tx)
        try store.compact()
        store.close()
        let reopened = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(reopened.loadedFromImage)
        try Self.expectFeedsAsWalked(reopened, "films")
    }

    /// A primary whose first transaction is a bulk import of more than
    /// `snapshotCommitChanges` objects, then a few changes; its feed lines.
    static func primaryFeed(_ name: String, options: StoreOptions) throws -> (store: Store, lines: [[UInt8]]) {
        let store = try Store.open(TestFolders.make(name), schema: TripSchema.schema, access: .write, options: options)
        var g = TripDataGenerator(seed: 41)
        var input = g.jsonArray(trips: 20)
        #expect(try BulkImporter(store).insert(&input, author: "primary", timestamp: Self.time) != nil)
        let ids = try Redactor(store).idsMatching(try Query("is BusinessTrip"))
        var tx = store.transaction()
        try store.stageUpdate([try #require(store.table.row(for: ids[0]))], set: [("name", "later")], into: &tx)
        try tx.delete(try #require(store.table.row(for: ids[1])))
        try Self.commit(store, tx)
        let lines = try feed(store, store.checkedHistory()).split(separator: 0x0A).map(Array.init)
        return (store, lines)
    }

    @Test func aBulkImportsLineIsReplayedAsAnImportIntoAnEmptyStandby() throws {
        var options = StoreOptions()
        options.snapshotCommitChanges = 100
        let (primary, lines) = try Self.primaryFeed("apply-bulk-primary", options: options)
        let standby = try Store.open(TestFolders.make("apply-bulk-standby"), schema: TripSchema.schema, access: .write, options: options)
        let first = try FeedLine(lines[0], number: 1)
        let t = try FeedApplier.read(first, expecting: 1, after: 0, notBefore: nil)
        #expect(try FeedApplier(standby).applyInBulk(t, first) != nil, "the import's path took the line")
        #expect(try FeedApplier(standby).apply(FeedLine(lines[1], number: 2)).transaction.token == 2)
        #expect(try TimeTravelTests.export(standby) == TimeTravelTests.export(primary))
        #expect(try Self.feed(standby, standby.checkedHistory()) == Self.feed(primary, primary.checkedHistory()))
        #expect(standby.checkInvariants().isEmpty)
        // The bulk path leaves a store that already held an object to the usual one.
        #expect(try FeedApplier(standby).applyInBulk(t, first) == nil)
    }

    /// A bulk import's line whose inserts are in another order than an
    /// import of them makes is replayed object by object, in the feed's order.
    @Test func aBulkLineInAnotherOrderIsReplayedInItsOwnOrder() throws {
        var options = StoreOptions()
        options.snapshotCommitChanges = 100
        let (primary, _) = try Self.primaryFeed("apply-order-primary", options: options)
        var t = try #require(primary.checkedHistory().first)
        t.changes.swapAt(0, t.changes.count - 1)
        let line = try Self.walkedFeed(primary, [t]).dropLast()
        let standby = try Store.open(TestFolders.make("apply-order-standby"), schema: TripSchema.schema, access: .write, options: options)
        let feedLine = try FeedLine(Array(line), number: 1)
        #expect(try FeedApplier(standby).applyInBulk(try FeedApplier.read(feedLine, expecting: 1, after: 0, notBefore: nil), feedLine) == nil)
        let applied = try FeedApplier(standby).apply(feedLine)
        #expect(applied.transaction.changes.map(\.id) == t.changes.map(\.id))
        #expect(try standby.checkedHistory().first?.changes.map(\.id) == t.changes.map(\.id))
    }

    /// A line of inserts in no order of types, replayed object by object
    /// into a journal line: each insert keeps its own object's data, so the
    /// standby opens again (from its JSON too) and equals its primary.
    @Test func insertsInAnyOrderKeepTheirOwnDataInTheJournal() throws {
        let primary = try Self.storeWithImport("apply-shuffled-primary", seed: 77, trips: 12)
        var t = try #require(primary.checkedHistory().first)
        var random = SplitMix64(seed: 77)
        for i in t.changes.indices.reversed() where i > 0 { t.changes.swapAt(i, Int(random.next() % UInt64(i + 1))) }
        let line = try Self.walkedFeed(primary, [t]).dropLast()
        let folder = TestFolders.make("apply-shuffled-standby")
        let standby = try Store.open(folder, schema: TripSchema.schema, access: .write)
        #expect(try FeedApplier(standby).apply(FeedLine(Array(line), number: 1)).transaction.changes.map(\.id) == t.changes.map(\.id))
        standby.close()
        var jsonOnly = StoreOptions()
        jsonOnly.useSnapshotImage = false
        let again = try Store.open(folder, schema: TripSchema.schema, access: .read, options: jsonOnly)
        #expect(try TimeTravelTests.export(again) == TimeTravelTests.export(primary))
        #expect(try again.checkedHistory().first?.changes.map(\.id) == t.changes.map(\.id))
    }

    /// A bulk import with a redacted object still goes into PostgreSQL through `COPY`.
    @Test func aRedactedBulkImportIsStillCopiedIntoPostgres() throws {
        let store = try Self.storeWithImport("sql-redacted-bulk", seed: 9, trips: 10)
        let id = try #require(store.checkedHistory().first?.changes.first?.id)
        _ = try Redactor(store).redact(ids: [id], author: "feed", timestamp: Self.time)
        var sql: [UInt8] = []
        try SQLWriter(store).writeHistory(try store.checkedHistory(), in: SQLSchema()) { sql += $0 }
        let text = String(decoding: sql, as: UTF8.self)
        let first = try #require(text.range(of: "COMMIT;"))
        #expect(text[..<first.lowerBound].contains("COPY \(SQLSchema().objects)"), "token 1 as COPY rows")
    }
}
