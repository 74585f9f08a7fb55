import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// A journal long enough that its replay readies the table for scattered
/// changes (`Store.longJournalBytes`: the locators' pages, the state tables
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
        while w.journal.size < Store.longJournalBytes + 4096 {
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
}
