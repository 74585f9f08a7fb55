import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
import TripStoreModels

/// The feed into PostgreSQL writes each object's `data` straight from its
/// record (`RecordEnvelopeWriter` with every relationship); it must be the
/// bytes the export's encoder writes from the decoded object.
@Suite struct RecordDataWriterTests {
    @Test(arguments: [21, 22] as [UInt64])
    func dataFromTheRecordIsWhatTheExportWrites(seed: UInt64) throws {
        let store = try TestStores.sampleTrips("record-data-\(seed)")
        defer { store.close() }
        // Generated trips besides the sample data, some of their links cut
        // and some objects deleted, so references, empty lists and nulls all occur.
        var g = TripDataGenerator(seed: seed)
        try TestStores.commit(g.jsonArray(trips: 40), to: store)
        var tx = store.transaction()
        let rows = (0..<RowID(store.table.rowCount)).filter { store.table.entity(at: $0) != nil }
        let deletable = Set(["BucketListItem", "BusinessMeal", "Attraction"].compactMap { store.schema.entity(named: $0)?.id })
        for row in rows where row % 5 == 3 && deletable.contains(store.table.entity(at: row) ?? -1) { try tx.delete(row) }
        try store.commit(tx, author: "t")
        let schema = store.schema
        let writer = RecordEnvelopeWriter(schema: schema, everyRelationship: true)
        let lists = FlatLists(store.table.lists)
        let view = store.table.readView
        var out = ByteOutput(capacity: 256)
        var scratch = JSONWriter()
        var compared = 0
        for row in 0..<RowID(store.table.rowCount) {
            guard let o = store.table.object(at: row) else { continue }
            var w = JSONWriter()
            EnvelopeEncoder.writeData(o, entity: schema.entities[o.entity], schema: schema, lookup: store.table, to: &w)
            out.removeAll()
            writer.writeData(row: row, table: view, lists: lists.view, to: &out, scratch: &scratch)
            #expect(Array(out.bytes) == w.bytes, "\(o.id)")
            compared += 1
        }
        #expect(compared > 300)
        withExtendedLifetime(lists) {}
    }
}
