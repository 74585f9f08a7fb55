import Foundation
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// Small stores the tests start from.
enum TestStores {
    /// An import array of one plain trip with this id.
    static func trip(_ id: String) -> [UInt8] {
        Array(#"[{"type":"Trip","id":"\#(id)","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}]"#.utf8)
    }

    /// Commits `bytes` (an import array) as one transaction.
    static func commit(_ bytes: [UInt8], to store: Store, timestamp: Double? = nil) throws {
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(bytes, schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t", timestamp: timestamp)
    }

    /// Options under which a generated import goes the bulk way (a
    /// transaction of 50 changes or more commits by snapshot).
    static var bulkOptions: StoreOptions {
        var o = StoreOptions()
        o.snapshotCommitChanges = 50
        return o
    }

    /// A writing store in `folder` holding `trips` generated trips (of
    /// `seed`), imported the bulk way at `timestamp`.
    static func bulkImported(_ folder: String, seed: UInt64, trips: Int, timestamp: Double) throws -> Store {
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: bulkOptions)
        var data = TripDataGenerator(seed: seed)
        var input = data.jsonArray(trips: trips)
        guard try BulkImporter(store).insert(&input, author: "bulk", timestamp: timestamp) != nil else {
            store.close()
            throw BulkPathNotTaken()
        }
        return store
    }

    /// A generated import that went the usual way instead of the bulk one.
    struct BulkPathNotTaken: Error {}

    /// A writing store of `FilmSchema` in `folder` holding one studio, `id`, committed.
    static func filmStudio(_ folder: String, id: String) throws -> Store {
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("Studio", id: id, values: ["name": .string("Ealing")])
        try store.commit(tx, author: "test")
        return store
    }

    /// A writing store in a new folder holding `SampleData/trips.json`.
    static func sampleTrips(_ name: String) throws -> Store {
        let store = try Store.open(TestFolders.make(name), schema: TripSchema.schema, access: .write)
        try commit(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"), to: store)
        return store
    }
}
