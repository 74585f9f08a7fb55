import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct SchemaEvolutionTests {
    func filmStore() throws -> String {
        let folder = TestFolders.make("evolve")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        let text = #"{"type":"ShortFilm","id":"s","data":{"title":"La Jetée","screens":3}}"#
        try store.stage(try EnvelopeInput.decode(Array(text.utf8), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        try store.compact()
        store.close()
        return folder
    }

    @Test func additionsOpenAndTheNextSnapshotRecordsThem() throws {
        let folder = try filmStore()
        var added = FilmSchema.entities
        added.append(EntityDescription("Documentary", parent: "FeatureFilm"))
        added[0].attributes.append(AttributeDescription("tagline", .string, optional: true))
        let schema = try Schema(added)
        let store = try Store.open(folder, schema: schema, access: .write)
        #expect(store.object(id: "s") != nil)
        try store.compact()
        let header = String(decoding: try FileIO.readFile(folder + "/snapshot-1.jsonl"), as: UTF8.self).split(separator: "\n")[0]
        #expect(header.contains(#""fingerprint":"\#(schema.fingerprint)""#))
        #expect(header.contains("Documentary"))
    }

    /// A snapshot writes `{"id":…}` for a destination without subclasses;
    /// adding a subclass to that destination is an addition, so the snapshot
    /// must still open (from the JSON, both decoders) with every link in place.
    @Test(arguments: [false, true]) func bareReferencesOpenAfterASubclassIsAddedToTheirDestination(_ slowPath: Bool) throws {
        let folder = TestFolders.make("bare")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"), schema: store.schema),
                        mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        try store.compact()
        let before = try TimeTravelTests.export(store)
        store.close()
        let path = folder + "/snapshot-1.jsonl"
        #expect(String(decoding: try FileIO.readFile(path), as: UTF8.self).contains(#""businessMeals":[{"id":""#))
        FileIO.unlink(folder + "/snapshot-1.image")
        if slowPath {
            // White space inside each envelope's data sends every line to the tree decoder.
            try Self.rewrite(path) { lines in
                for i in 1..<lines.count where lines[i].hasPrefix(#"{"type":"#) {
                    lines[i] = lines[i].replacingOccurrences(of: #","data":{"#, with: #","data": {"#)
                }
            }
        }
        var added = TripSchema.schema.descriptions
        added.append(EntityDescription("TeamDinner", parent: "BusinessMeal"))
        let evolved = try Schema(added)
        let reopened = try Store.open(folder, schema: evolved, access: .read)
        #expect(reopened.checkInvariants().isEmpty)
        #expect(try TimeTravelTests.export(reopened) == before)
    }

    @Test func otherDifferencesAreRefusedNamingEach() throws {
        let folder = try filmStore()
        var changed = FilmSchema.entities
        changed[1].attributes[0] = AttributeDescription("screens", .string, options: [.indexed])
        do {
            _ = try Store.open(folder, schema: try Schema(changed), access: .read)
            Issue.record("opened a store with an incompatible schema")
        } catch let e as StoreError {
            #expect(e.isDamage)
            #expect(e.description == "the store's schema differs from this program's: attribute 'TheatricalRelease.screens' changed type from Int to String")
        }
    }

    @Test func aNewerFormatIsRefused() throws {
        let folder = try filmStore()
        let path = folder + "/snapshot-1.jsonl"
        try Self.rewrite(path) { lines in
            lines[0] = lines[0].replacingOccurrences(of: #"{"format":3,"#, with: #"{"format":5,"#)
        }
        do {
            _ = try Store.open(folder, schema: FilmSchema.schema, access: .read)
            Issue.record("opened a newer format")
        } catch let e as StoreError {
            #expect(e.isDamage)
            #expect(e.description.hasSuffix("was written in store format 5, newer than this version reads (4)"))
        }
    }

    @Test func aTenMegabyteStringImports() throws {
        let big = String(repeating: "ab\u{e9}", count: 3_500_000)
        let text = #"{"type":"ShortFilm","id":"big","data":{"title":"\#(big)","screens":1}}"#
        let folder = TestFolders.make("big")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array(text.utf8), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        store.close()
        let again = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(again.object(id: "big")?.values[0] == .string(big))
    }

    /// Rewrites a snapshot's lines and its trailer's checksum, so that only the change is wrong.
    static func rewrite(_ path: String, _ change: (inout [String]) -> Void) throws {
        var lines = String(decoding: try FileIO.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
        let trailer = lines.removeLast()
        change(&lines)
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        let end = try JSONReader.parse(trailer)["end"]
        guard case .int(let objects)? = end?["objects"], case .int(let history)? = end?["history"] else { return }
        let fixed = #"{"end":{"objects":\#(objects),"history":\#(history),"crc32c":"\#(CRC32C.hex(CRC32C.checksum(body)))"}}"#
        try Data(body + Array((fixed + "\n").utf8)).write(to: URL(fileURLWithPath: path))
    }

    @Test func objectsOutOfIdOrderAreDamage() throws {
        let folder = TestFolders.make("order")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        let text = """
        {"type":"ShortFilm","id":"a","data":{"title":"A","screens":1}}
        {"type":"ShortFilm","id":"b","data":{"title":"B","screens":2}}
        """
        try store.stage(try EnvelopeInput.decode(Array(text.utf8), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        try store.compact()
        store.close()
        try Self.rewrite(folder + "/snapshot-1.jsonl") { lines in lines.swapAt(1, 2) }
        do {
            _ = try Store.open(folder, schema: FilmSchema.schema, access: .read)
            Issue.record("opened a snapshot whose objects are out of order")
        } catch let e as StoreError {
            #expect(e.isDamage)
            #expect(e.description.contains("snapshot-1.jsonl line 3: objects are not in strictly increasing id order"))
        }
    }
}
