import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The readers this history work added, fed mutated bytes with fixed seeds:
/// a feed line into `apply`, and a snapshot's history lines read backwards
/// (`history(after:)`, `lastCommitTime`, `token(at:)`, `rewind`). Nothing
/// traps; each answers or throws, and a store that accepted a line stays sound.
@Suite(.serialized) struct HistoryFuzzTests {
    static let cases = max(50, ReaderFuzzTests.cases / 2)

    /// A primary whose token 2 inserts, updates and deletes (with a cascade),
    /// its feed line for token 2, and a standby folder at token 1.
    static func primaryAndStandby() throws -> (line: [UInt8], standby: String) {
        let primary = try Store.open(TestFolders.make("fuzz-primary"), schema: TripSchema.schema, access: .write)
        var tx = primary.transaction()
        try primary.stage(try EnvelopeInput.decode(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"), schema: primary.schema),
                          mode: .insert, into: &tx)
        try primary.commit(tx, author: "a", timestamp: 1000)
        tx = primary.transaction()
        try primary.stage(try EnvelopeInput.decode(Array(#"[{"type":"Trip","id":"new","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}]"#.utf8),
                                                   schema: primary.schema), mode: .insert, into: &tx)
        try primary.stageUpdate([primary.table.row(for: "zurich-reunion")!], set: [("destination", "Bern")], into: &tx)
        try tx.delete(primary.table.row(for: "rome-summit")!)
        try primary.commit(tx, author: "b", timestamp: 2000)
        let feed = primary.history.map { t -> [UInt8] in
            var w = JSONWriter()
            HistoryCoding.write(t, to: &w, envelopes: (try? primary.insertEnvelopes(after: t.token - 1, wanted: [t.token]))?[t.token], deletedValues: true)
            return w.bytes
        }
        let standby = TestFolders.make("fuzz-standby")
        let s = try Store.open(standby, schema: TripSchema.schema, access: .write)
        try FeedApplier(s).apply(try JSONReader.parse(feed[0]), line: 1)
        s.close()
        return (feed[1], standby)
    }

    @Test func mutatedFeedLinesNeverTrapAndLeaveTheStandbySound() throws {
        let (line, standby) = try Self.primaryAndStandby()
        // The line as it is applies (to a copy: every case starts from token 1).
        let cleanFolder = TestFolders.make("fuzz-clean")
        try FileManager.default.removeItem(atPath: cleanFolder)
        try FileManager.default.copyItem(atPath: standby, toPath: cleanFolder)
        let clean = try Store.open(cleanFolder, schema: TripSchema.schema, access: .write)
        let base = try TimeTravelTests.export(clean)
        #expect(try FeedApplier(clean).apply(try JSONReader.parse(line), line: 2).transaction.token == 2)
        clean.close()
        var rng = RandomQueries(state: 1818)
        var applied = 0, refused = 0
        for k in 0..<Self.cases {
            let folder = TestFolders.make("fuzz-standby-\(k)")
            try FileManager.default.removeItem(atPath: folder)
            try FileManager.default.copyItem(atPath: standby, toPath: folder)
            let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
            guard store.lastToken == 1 else { store.close(); continue }
            let mutated = ReaderFuzzTests.mutate(line, &rng)
            guard let value = try? JSONReader.parse(mutated) else { store.close(); continue }
            do {
                try FeedApplier(store).apply(value, line: 2)
                applied += 1
            } catch {
                refused += 1
                #expect(try TimeTravelTests.export(store) == base, "case \(k): a refused line changed the standby")
            }
            #expect(store.checkInvariants().isEmpty, "case \(k)")
            store.close()
            try? FileManager.default.removeItem(atPath: folder)
        }
        #expect(refused > 0)
        _ = applied
    }

    /// A feed line read without its envelopes (`FeedLineReader`) against
    /// the whole line parsed: the same lines refused, the same transaction,
    /// and each envelope's bytes the envelope the whole line holds.
    @Test func aFeedLineReadWithoutItsEnvelopesReadsAsTheWholeLine() throws {
        let (line, _) = try Self.primaryAndStandby()
        var rng = RandomQueries(state: 2727)
        var read = 0
        for k in 0..<(Self.cases * 4) {
            let mutated = k == 0 ? line : ReaderFuzzTests.mutate(line, &rng)
            let whole = try? JSONReader.parse(mutated)
            let partial = try? mutated.withUnsafeBufferPointer { try FeedLineReader.read($0, 0..<$0.count) }
            #expect((whole == nil) == (partial == nil), "case \(k): read by one reader only")
            guard let whole, let partial else { continue }
            read += 1
            #expect(partial.transaction == HistoryCoding.read(whole), "case \(k)")
            guard case .array(let items)? = whole["changes"] else { continue }
            #expect(partial.elements == items.count, "case \(k)")
            for (i, item) in items.enumerated() where i < partial.envelopes.count {
                let envelope = partial.envelopes[i].flatMap { r in try? JSONReader.parse(Array(mutated[r])) }
                #expect(envelope == item["envelope"], "case \(k), change \(i)")
            }
        }
        #expect(read > 1)
    }

    @Test func mutatedSnapshotHistoryNeverTrapsItsReaders() throws {
        let folder = TestFolders.make("fuzz-history")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"), schema: store.schema),
                        mode: .insert, into: &tx)
        try store.commit(tx, author: "a", timestamp: 1000)
        let trip = store.schema.entity(named: "Trip")!
        let rows = try store.run(Query("is Trip")).rows
        for k in 0..<40 {
            var tx = store.transaction()
            if k % 9 == 4 {
                try tx.delete(rows[k])
            } else {
                tx.setAttribute(rows[k], slot: trip.property(named: "destination")!.slot, to: .string("Stop \(k)"))
            }
            try store.commit(tx, author: "a", timestamp: Double(1000 + 10 * k))
        }
        try store.compact()
        store.close()
        let path = folder + "/snapshot-\(41).jsonl"
        let original = try FileIO.readFile(path)
        var rng = RandomQueries(state: 4242)
        for k in 0..<Self.cases {
            let copy = TestFolders.make("fuzz-history-\(k)")
            try FileManager.default.removeItem(atPath: copy)
            try FileManager.default.copyItem(atPath: folder, toPath: copy)
            FileIO.unlink(copy + "/snapshot-41.image")
            try Data(original).write(to: URL(fileURLWithPath: copy + "/snapshot-41.jsonl"))
            // Mutate one history line (they follow the objects), keeping the checksum right.
            try SchemaEvolutionTests.rewrite(copy + "/snapshot-41.jsonl") { lines in
                let history = lines.indices.filter { lines[$0].hasPrefix(#"{"token":"#) }
                guard let i = history.isEmpty ? nil : history[rng.int(history.count)] else { return }
                lines[i] = String(decoding: ReaderFuzzTests.mutate(Array(lines[i].utf8), &rng), as: UTF8.self)
            }
            guard let reader = try? Store.open(copy, schema: TripSchema.schema, access: .read) else { continue }
            let after = Int64(rng.int(42))
            _ = try? reader.history(after: after)
            _ = try? reader.lastCommitTime()
            _ = try? reader.token(at: Double(1000 + rng.int(500)))
            if let past = try? reader.past(at: .token(after)) {
                // What a rewind accepts is a sound table (history itself may be the damaged part).
                #expect(past.table.referenceProblems().isEmpty, "case \(k): rewound to \(after)")
            }
            try? FileManager.default.removeItem(atPath: copy)
        }
    }
}
