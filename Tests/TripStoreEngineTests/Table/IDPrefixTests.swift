import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// `Store.ids(withPrefix:)` (completing an id) against a filter of every id.
@Suite struct IDPrefixTests {
    @Test func idsWithAPrefixAreEveryLiveIdThatBeginsWithIt() throws {
        let folder = TestFolders.make("id-prefix")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var g = TripDataGenerator(seed: 5)
        try TestStores.commit(g.jsonArray(trips: 200), to: store)
        try store.compact()  // the id-ordered rows, from the image
        try TestStores.commit(TestStores.trip("rome-late"), to: store)  // rows after them
        let doomed = try #require(store.rowsInIDOrder().dropFirst(40).first.flatMap { store.id(at: $0) })
        var tx = store.transaction()
        try tx.delete(id: doomed)
        try store.commit(tx, author: "t")
        store.close()
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        var fromJSON = StoreOptions()
        fromJSON.useSnapshotImage = false
        let json = try Store.open(folder, schema: TripSchema.schema, access: .read, options: fromJSON)
        #expect(reader.loadedFromImage && !json.loadedFromImage)
        let all = reader.rowsInIDOrder().compactMap { reader.id(at: $0) }
        #expect(!all.contains(doomed))
        var random = RandomQueries(state: 77)
        var prefixes = ["", "r", "rome", "zz", doomed, String(doomed.prefix(3))]
        for _ in 0..<40 { let id = random.pick(all); prefixes.append(String(id.prefix(random.int(5)))) }
        for p in prefixes {
            let expected = all.filter { $0.utf8.starts(with: p.utf8) }.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) }
            #expect(reader.ids(withPrefix: p, limit: 10_000) == expected, "prefix '\(p)'")
            #expect(json.ids(withPrefix: p, limit: 10_000) == expected, "prefix '\(p)', from the JSON alone")
            #expect(reader.ids(withPrefix: p, limit: 3) == Array(expected.prefix(3)), "prefix '\(p)', 3 at most")
        }
    }
}
