import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The on-disk formats, byte for byte, against files kept in
/// `Fixtures/golden/` (set `UPDATE_GOLDEN=1` to write them anew after a
/// deliberate format change, and review the diff).
@Suite struct GoldenFileTests {
    static let folder = TestFolders.projectRoot + "/Tests/TripStoreEngineTests/Fixtures/golden"

    func check(_ produced: String, _ name: String) throws {
        let path = Self.folder + "/" + name
        if ProcessInfo.processInfo.environment["UPDATE_GOLDEN"] != nil {
            try produced.write(toFile: path, atomically: false, encoding: .utf8)
        }
        let expected = try String(contentsOfFile: path, encoding: .utf8)
        #expect(produced == expected, "\(name) differs from the golden file")
    }

    @Test func journalAndSnapshotMatchTheGoldenFiles() throws {
        let store = try Store.open(TestFolders.make("golden"), schema: TripSchema.schema, access: .write)
        let input = try FileIO.readFile(Self.folder + "/input.json")
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(input, schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "alice", timestamp: ISODate.parse("2026-11-21T10:00:00Z")!)
        tx = store.transaction()
        try store.stageUpdate([store.table.row(for: "b1")!], set: [("perDiemRate", "150")], into: &tx)
        try store.commit(tx, author: "alice", timestamp: ISODate.parse("2026-11-21T10:05:00.250Z")!)
        let folder = store.files.folder
        try check(String(decoding: try FileIO.readFile(folder + "/journal-0.jsonl"), as: UTF8.self), "journal-0.jsonl")
        try check(String(decoding: try FileIO.readFile(folder + "/schema.json"), as: UTF8.self), "schema.json")
        try store.compact()
        try check(String(decoding: try FileIO.readFile(folder + "/snapshot-2.jsonl"), as: UTF8.self), "snapshot-2.jsonl")
        tx = store.transaction()
        try tx.delete(store.table.row(for: "b1")!)
        try store.commit(tx, author: "bob", timestamp: ISODate.parse("2026-11-21T11:00:00Z")!)
        try check(String(decoding: try FileIO.readFile(folder + "/journal-2.jsonl"), as: UTF8.self), "journal-2.jsonl")
        var history = JSONWriter(pretty: true)
        history.beginArray()
        for t in store.history { HistoryCoding.write(t, to: &history) }
        history.endArray()
        try check(history.string + "\n", "history.json")
    }

    /// The JSON values a delete keeps in history, built without text, are
    /// the tree that writing an object's data and reading it back gives.
    @Test func dataMembersEqualTheWrittenDataReadBack() throws {
        let store = try Store.open(TestFolders.make("members"), schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        var g = TripDataGenerator(seed: 77)
        try store.stage(try EnvelopeInput.decode(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"), schema: store.schema),
                        mode: .insert, into: &tx)
        try store.stage(try EnvelopeInput.decode(g.jsonArray(trips: 40), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        for row in store.table.liveRows {
            let o = try #require(store.table.object(at: row))
            var w = JSONWriter()
            EnvelopeEncoder.writeData(o, entity: store.schema.entities[o.entity], schema: store.schema, lookup: store.table, to: &w)
            #expect(.object(EnvelopeEncoder.dataMembers(o, schema: store.schema, lookup: store.table)) == (try JSONReader.parse(w.bytes)), "\(o.id)")
        }
        for d in [150.0, 0.45, -0.0, 1e300, 9.0e15, 123456789.125, -3] {
            var w = JSONWriter()
            EnvelopeEncoder.writeAttribute(.double(d), type: .double, to: &w)
            #expect(EnvelopeEncoder.jsonAttribute(.double(d), type: .double) == (try JSONReader.parse(w.bytes)), "\(d)")
        }
    }

    @Test func fastAndTreeEncodersWriteTheSameBytes() throws {
        let store = try Store.open(TestFolders.make("encoders"), schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        let sample = try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json")
        try store.stage(try EnvelopeInput.decode(sample, schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        let fast = EnvelopeFastEncoder(schema: store.schema)
        for row in store.table.liveRows {
            let o = store.table.object(at: row)!
            var a = JSONWriter(), b = JSONWriter()
            EnvelopeEncoder.write(o, schema: store.schema, lookup: store.table, to: &a)
            fast.write(o, lookup: store.table, storedSidesOnly: false, to: &b)
            #expect(a.bytes == b.bytes, "\(o.id)")
        }
    }
}
