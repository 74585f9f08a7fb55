import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// The automatic snapshot written on a thread of its own while commits go
/// on: put in place between commits with the journal's later lines as its
/// journal, the store it leaves is the store a foreground snapshot leaves.
@Suite struct BackgroundSnapshotTests {
    static func options(background: Bool, every transactions: Int = 25) -> StoreOptions {
        var o = TestStores.bulkOptions
        o.snapshotAfterTransactions = transactions
        o.snapshotsInBackground = background
        return o
    }

    /// A bulk import of 40 trips (a snapshot with its image), opened again
    /// to write under `options`.
    static func imported(_ name: String, _ options: StoreOptions) throws -> Store {
        let folder = TestFolders.make(name)
        try TestStores.bulkImported(folder, seed: 41, trips: 40, timestamp: 1_700_000_000).close()
        return try Store.open(folder, schema: TripSchema.schema, access: .write, options: options)
    }

    /// One random small transaction (fixed seed): a renamed trip, a new
    /// trip, or a deleted one.
    static func change(_ store: Store, _ random: inout SplitMix64, round: Int) throws {
        let name = store.schema.entity(named: "Trip")!.property(named: "name")!.slot
        let trips = try store.run(Query("is Trip")).rows
        var tx = store.transaction()
        switch random.next() % 10 {
        case 0:
            var tx2 = store.transaction()
            try store.stage(try EnvelopeInput.decode(TestStores.trip("new-\(round)"), schema: store.schema), mode: .insert, into: &tx2)
            tx = tx2
        case 1 where trips.count > 5:
            try tx.delete(trips[Int(random.next() % UInt64(trips.count))])
        default:
            tx.setAttribute(trips[Int(random.next() % UInt64(trips.count))], slot: name, to: .string("round \(round)"))
        }
        try store.commit(tx, author: "t", timestamp: 1_700_001_000 + Double(round))
    }

    /// Everything a reader of the folder sees (from the image, and the same from the JSON alone).
    static func contents(_ folder: String) throws -> (export: String, history: [HistoryTransaction], token: Int64, time: Double?) {
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { reader.close() }
        #expect(reader.checkInvariants().isEmpty)
        var jsonOnly = StoreOptions()
        jsonOnly.useSnapshotImage = false
        let fromJSON = try Store.open(folder, schema: TripSchema.schema, access: .read, options: jsonOnly)
        defer { fromJSON.close() }
        #expect(try TimeTravelTests.export(fromJSON) == TimeTravelTests.export(reader))
        #expect(try fromJSON.checkedHistory() == reader.checkedHistory())
        return (try TimeTravelTests.export(reader), try reader.checkedHistory(), reader.lastToken, try reader.lastCommitTime())
    }

    @Test func commitsGoOnWhileTheSnapshotIsWrittenAndTheStoreEndsAsAForegroundOne() throws {
        let background = try Self.imported("background", Self.options(background: true))
        let foreground = try Self.imported("foreground", Self.options(background: false))
        var a = SplitMix64(seed: 7), b = SplitMix64(seed: 7)
        var started = 0, installed = 0
        var token = background.snapshotToken
        // Once one is started, it is let finish after a few more commits
        // (0 to 5, at random), so each is put in place with that many lines after it.
        var finishAfter: Int64 = 0
        var pick = SplitMix64(seed: 8)
        for round in 0..<240 {
            if let b = background.snapshotWork.background, background.lastToken - b.token >= finishAfter { _ = b.work.wait() }
            try Self.change(background, &a, round: round)
            try Self.change(foreground, &b, round: round)
            if background.snapshotWork.background?.token == background.lastToken {
                // Due by the journal as it is: the lines carried over by the last one count, nothing before them.
                #expect(background.journalTransactionCount >= 25)
                started += 1
                finishAfter = Int64(pick.next() % 6)
            }
            if background.snapshotToken != token {
                token = background.snapshotToken
                installed += 1
                // Put in place at a commit after the one that started it: the commits since are the new journal.
                #expect(background.snapshotToken < background.lastToken)
                #expect(background.journalTransactionCount == Int(background.lastToken - background.snapshotToken))
                #expect(background.history.map(\.token) == Array(1...background.lastToken))
            }
            #expect(background.warnings.isEmpty)
        }
        #expect(started >= 7 && installed >= started - 1)
        #expect(foreground.snapshotWork.background == nil)
        background.close()
        foreground.close()
        let x = try Self.contents(background.files.folder), y = try Self.contents(foreground.files.folder)
        #expect(x.export == y.export)
        #expect(x.history == y.history)
        #expect(x.token == y.token && x.token == 241)
        #expect(x.time == y.time)
    }

    @Test func closeWaitsForTheSnapshotAndPutsItInPlace() throws {
        let store = try Self.imported("close-waits", Self.options(background: true, every: 10))
        var random = SplitMix64(seed: 3)
        for round in 0..<10 { try Self.change(store, &random, round: round) }
        #expect(store.snapshotWork.background?.token == store.lastToken)
        let folder = store.files.folder
        store.close()
        #expect(try store.files.list().snapshots == [11])
        #expect(try store.files.list().temporary.isEmpty)
        #expect(FileIO.exists(store.files.image(11)))
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { reader.close() }
        #expect(reader.loadedFromImage)
        #expect(reader.snapshotToken == 11 && reader.journalTransactionCount == 0)
    }

    /// A write that rewrites the snapshot or the history waits for the one
    /// being written: pruned, the history is what was asked for, whenever
    /// the background one took its place.
    @Test func pruningWhileOneIsWrittenPutsItInPlaceFirst() throws {
        let store = try Self.imported("prune-waits", Self.options(background: true, every: 10))
        var random = SplitMix64(seed: 4)
        for round in 0..<10 { try Self.change(store, &random, round: round) }
        #expect(store.snapshotWork.background != nil)
        try Self.change(store, &random, round: 10)
        #expect(try store.pruneHistory(before: 6) == 5)
        #expect(store.snapshotWork.background == nil)
        #expect(store.history.map(\.token) == Array(6...12))
        store.close()
        #expect(try Self.contents(store.files.folder).history.map(\.token) == Array(6...12))
    }

    /// What a crash leaves between carrying the journal's lines over and the
    /// snapshot's rename: the old snapshot and its whole journal, beside a
    /// journal of a snapshot that never took its place. Readers use the old
    /// files; the next writer removes the leftover.
    @Test func aJournalCarriedOverForASnapshotNeverPutInPlaceIsIgnored() throws {
        let store = try Self.imported("carried-left", Self.options(background: false, every: 1000))
        var random = SplitMix64(seed: 5)
        for round in 0..<6 { try Self.change(store, &random, round: round) }
        let folder = store.files.folder
        let journal = try FileIO.readFile(store.files.journal(1))
        store.close()
        let before = try Self.contents(folder)
        // The last three lines, as `install` copies them for a snapshot at token 4.
        let lines = journal.split(separator: 0x0A, omittingEmptySubsequences: true)
        let carried: [UInt8] = lines.suffix(3).flatMap { Array($0) + [UInt8(0x0A)] }
        try Data(carried).write(to: URL(fileURLWithPath: store.files.journal(4)))
        let after = try Self.contents(folder)
        #expect(after.export == before.export && after.history == before.history && after.token == 7)
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        #expect(!FileIO.exists(writer.files.journal(4)))
        try Self.change(writer, &random, round: 6)
        writer.close()
        #expect(try Self.contents(folder).token == 8)
    }

    /// An automatic snapshot that cannot be written warns once, and is tried
    /// again once the journal has grown by the thresholds again, not at every commit.
    @Test(arguments: [true, false])
    func aSnapshotThatCannotBeWrittenIsTriedAgainAfterAsManyCommits(background: Bool) throws {
        let store = try Self.imported("cannot-write-\(background)", Self.options(background: background, every: 10))
        // A folder where each snapshot's temporary file would go.
        for token in 2...60 { try FileManager.default.createDirectory(atPath: store.files.snapshot(Int64(token)) + ".tmp", withIntermediateDirectories: false) }
        var random = SplitMix64(seed: 6)
        for round in 0..<40 {
            try Self.change(store, &random, round: round)
            if let b = store.snapshotWork.background { _ = b.work.wait() }
        }
        // Tried at commits 10, 20, 30 and 40; in the background, the first
        // failure is known at the commit after it, and the next tries follow from there.
        #expect(store.warnings.count == (background ? 3 : 4), "\(store.warnings)")
        #expect(store.snapshotToken == 1 && store.journalTransactionCount == 40)
        for token in 2...60 { try FileManager.default.removeItem(atPath: store.files.snapshot(Int64(token)) + ".tmp") }
        store.close()
        #expect(try Self.contents(store.files.folder).token == 41)
    }

    /// Lines carried over to the new journal are copied a megabyte at a
    /// time: a line of several megabytes arrives whole.
    @Test func aJournalTailOfSeveralMegabytesIsCarriedOverWhole() throws {
        let store = try Self.imported("big-tail", Self.options(background: true, every: 2))
        let name = store.schema.entity(named: "Trip")!.property(named: "name")!.slot
        let trip = try store.run(Query("is Trip")).rows[0]
        var token = store.snapshotToken
        for k in 0..<6 {
            var tx = store.transaction()
            tx.setAttribute(trip, slot: name, to: .string(String(repeating: "\(k)", count: 1_200_000)))
            try store.commit(tx, author: "t")
            if let b = store.snapshotWork.background { _ = b.work.wait() }
            if store.snapshotToken != token {
                token = store.snapshotToken
                #expect(try FileIO.readFile(store.files.journal(token)).count > 2 << 20)
            }
        }
        #expect(token > 1)
        store.close()
        let reader = try Store.open(store.files.folder, schema: TripSchema.schema, access: .read)
        defer { reader.close() }
        #expect(reader.lastToken == 7 && reader.history.count == 7)
        #expect(reader.object(at: trip)?.values[name] == .string(String(repeating: "5", count: 1_200_000)))
    }
}
