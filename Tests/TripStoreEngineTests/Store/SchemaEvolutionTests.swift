import Foundation
import Testing
@testable import TripStoreEngine
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

    @Test func otherDifferencesAreRefusedNamingEach() throws {
        let folder = try filmStore()
        var changed = FilmSchema.entities
        changed[1].attributes[0] = AttributeDescription("screens", .string)
        do {
            _ = try Store.open(folder, schema: try Schema(changed), access: .read)
            Issue.record("opened a store with an incompatible schema")
        } catch let e as StoreError {
            #expect(e.exitCode == 2)
            #expect(e.description == "the store's schema differs from this program's: attribute 'TheatricalRelease.screens' changed type from Int to String")
        }
    }

    @Test func aNewerFormatIsRefused() throws {
        let folder = try filmStore()
        let path = folder + "/snapshot-1.jsonl"
        var text = String(decoding: try FileIO.readFile(path), as: UTF8.self)
        text = text.replacingOccurrences(of: #"{"format":1,"#, with: #"{"format":2,"#)
        // Keep the checksum right, so only the version is the problem.
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast(2)
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        let crc = CRC32C.checksum(body)
        let trailer = #"{"end":{"objects":1,"history":1,"crc32c":"\#(CRC32C.hex(crc))"}}"# + "\n"
        try Data(body + Array(trailer.utf8)).write(to: URL(fileURLWithPath: path))
        do {
            _ = try Store.open(folder, schema: FilmSchema.schema, access: .read)
            Issue.record("opened a newer format")
        } catch let e as StoreError {
            #expect(e.exitCode == 2)
            #expect(e.description.hasSuffix("was written in store format 2, newer than this tripstore reads (1); upgrade tripstore"))
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
}
