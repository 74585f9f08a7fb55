import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// A journal long enough that its replay readies the table for scattered
/// changes (`StoreLoader.longJournalBytes`: the locators' pages, the state tables
/// backed at once) reads over the image exactly as over the JSON.
@Suite struct LongJournalOverImageTests {
    let schema = TripSchema.schema

    @Test(arguments: [ImageChecks.onFirstTouch, .atOpen])
    func aLongJournalOfScatteredUpdatesReadsAsOverTheJSON(_ checks: ImageChecks) throws {
        let folder = try SnapshotImageTests().makeStore()
        var options = StoreOptions()
        options.snapshotAfterTransactions = 1_000_000
        options.snapshotAfterBytes = 1 << 30
        options.snapshotWhenJournalOutgrowsSnapshotAfter = 1 << 30
        let w = try Store.open(folder, schema: schema, access: .write, options: options)
        var trips = try w.run(try Query("is Trip")).rows
        var random = SplitMix64(seed: 47)
        trips.shuffle(using: &random)
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        var k = 0
        while w.journal.size < StoreLoader.longJournalBytes + 4096 {
            var change = w.transaction()
            change.setAttribute(trips[k % trips.count], slot: name, to: .string("scattered \(k)"))
            try w.commit(change, author: "test", timestamp: 1_800_001_000 + Double(k))
            k += 1
        }
        w.close()

        var fromImageOptions = StoreOptions()
        fromImageOptions.imageChecks = checks
        let fromImage = try Store.open(folder, schema: schema, access: .read, options: fromImageOptions)
        var jsonOptions = StoreOptions()
        jsonOptions.useSnapshotImage = false
        let fromJSON = try Store.open(folder, schema: schema, access: .read, options: jsonOptions)
        #expect(fromImage.loadedFromImage && !fromJSON.loadedFromImage)
        #expect(fromImage.table.count == fromJSON.table.count)
        for row in 0..<RowID(fromJSON.table.rowCount) {
            #expect(fromImage.table.object(at: row) == fromJSON.table.object(at: row), "row \(row)")
        }
        // The saved name index, with the journal's changes laid over it.
        let last = try Query("name == \"scattered \(k - 1)\"")
        #expect(try fromImage.run(last).rows == fromJSON.run(last).rows)
        #expect(try fromImage.run(last).rows.count == 1)
        let prefix = try Query("name ^= \"scattered\"")
        #expect(try fromImage.run(prefix).rows == fromJSON.run(prefix).rows)
        #expect(fromImage.imageDamage == nil)
    }

    /// The thread that takes a replay's page faults ahead of it reads pieces
    /// of the image no one has checked: an image damaged where the open does
    /// not look (the row group table, the columns, the records) never makes
    /// it trap, whatever ids it looks for.
    @Test func touchingAheadOverADamagedImageNeverTraps() throws {
        let folder = try SnapshotImageTests().makeStore()
        let image = try SnapshotImageTests().imagePath(folder)
        let good = try FileIO.readFile(image)
        let layout = try #require(good.withUnsafeBytes { SnapshotImage.Header.decode($0).flatMap(SnapshotImage.Layout.init) })
        let ids = try Store.open(folder, schema: schema, access: .read).table.rowsSortedByID().count
        #expect(ids > SnapshotImage.groupSize)
        var rng = RandomQueries(state: 4_747)
        var adopted = 0
        for _ in 0..<(ReaderFuzzTests.cases / 4) {
            var bytes = good
            for _ in 0..<(1 + rng.int(8)) {
                let at = rng.int(2) == 0
                    ? layout.rowGroupTable + rng.int(layout.typeStarts - layout.rowGroupTable)
                    : layout.entities + rng.int(bytes.count - layout.entities)
                bytes[at] ^= UInt8(1 << rng.int(8))
            }
            try Data(bytes).write(to: URL(fileURLWithPath: image))
            let store = try Store.open(folder, schema: schema, access: .read)
            guard let mapped = store.table.image else { continue }
            adopted += 1
            var journal: [UInt8] = []
            for _ in 0..<64 {
                let prefix = rng.next()
                _ = mapped.touchRow(prefix: prefix)
                let id = String(rng.next(), radix: 16, uppercase: true)
                journal += Array(#"{"changes":[{"kind":"update","id":"\#(id)","values":{}}]}"#.utf8) + [0x0A]
            }
            JournalTouchAhead.start(journal, image: mapped).stop()
        }
        #expect(adopted > ReaderFuzzTests.cases / 8)
    }
}
