import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The indexed engine and a naive scan agree on thousands of random queries.
@Suite struct QueryDifferentialTests {
    static func makeStore() throws -> (Store, ReferenceEvaluator) {
        let folder = TestFolders.make("diff")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        var g = TripDataGenerator(seed: 42)
        let sample = try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json")
        try store.stage(try EnvelopeInput.decode(sample, schema: store.schema), mode: .insert, into: &tx)
        try store.stage(try EnvelopeInput.decode(g.jsonArray(trips: 300), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        var export: [UInt8] = []
        try store.writeExport(rows: store.exportAllRows(), inlineOwned: false, jsonLines: true, pretty: false) { w in
            export += w.bytes
            w.bytes.removeAll()
        }
        return (store, try ReferenceEvaluator(schema: store.schema, exportJSONLines: export))
    }

    @Test func indexedEngineAgreesWithANaiveScan() throws {
        let (store, reference) = try Self.makeStore()
        var random = RandomQueries(state: 7)
        var nonEmpty = 0
        for _ in 0..<2000 {
            let text = random.query()
            let query = try Query(text)
            let got = Set(try store.run(query).rows.map { store.table.object(at: $0)!.id })
            let want = reference.ids(from: "Trip", query.predicate)
            #expect(got == want, "\(text): engine \(got.count), reference \(want.count)")
            if got != want { return }
            #expect(try store.run(query, countOnly: true).total == want.count, "count of \(text)")
            if !want.isEmpty { nonEmpty += 1 }
        }
        #expect(nonEmpty > 800)
    }

    @Test func sortedLimitedQueriesMatchAFullSort() throws {
        let (store, _) = try Self.makeStore()
        var random = RandomQueries(state: 11)
        for _ in 0..<300 {
            let text = random.query()
            let key = random.pick(["startDate", "-startDate", "name", "-destination", "perDiemRate", "-reason", "endDate,-name"])
            let limit = random.pick([1, 5, 20])
            let full = try store.run(try Query(text, sort: SortKey.parseList(key))).rows
            let page = try store.run(try Query(text, sort: SortKey.parseList(key), limit: limit, offset: 2)).rows
            #expect(page == Array(full.dropFirst(2).prefix(limit)), "\(text) sorted by \(key)")
        }
    }

    @Test func indexesStayCorrectAfterRandomChanges() throws {
        let (store, _) = try Self.makeStore()
        var random = RandomQueries(state: 3)
        let trip = store.schema.entity(named: "Trip")!
        let personal = store.schema.entity(named: "PersonalTrip")!
        for round in 0..<40 {
            var tx = store.transaction()
            let live = store.table.liveRows.filter { store.schema.isKind(store.table.object(at: $0)!.entity, of: trip.id) }
            for _ in 0..<5 {
                let row = random.pick(live)
                guard let o = tx.object(at: row) else { continue }
                switch random.int(4) {
                case 0: try tx.delete(row)
                case 1: tx.setAttribute(row, slot: trip.property(named: "destination")!.slot, to: .string(random.pick(["Rome, Italy", "Zürich", "Málaga, Spain", "Oslo",
                                                                                                             // Composed and decomposed forms, which Swift's `<` orders inconsistently.
                                                                                                             "Zu\u{308}rich", "e\u{301}ahov", "\u{e9}ahovc", "ahove\u{301}c"])))
                case 2: tx.setAttribute(row, slot: trip.property(named: "startDate")!.slot, to: .date(Double(random.int(2_000_000_000))))
                default:
                    if o.entity == personal.id {
                        tx.setAttribute(row, slot: personal.property(named: "reason")!.slot, to: .string(random.pick(["family", "vacation"])))
                    }
                }
            }
            var g = TripDataGenerator(seed: UInt64(1000 + round))
            try store.stage(try EnvelopeInput.decode(g.jsonArray(trips: 3), schema: store.schema), mode: .insert, into: &tx)
            try store.commit(tx, author: "t")
            #expect(store.checkInvariants().isEmpty, "round \(round): \(store.checkInvariants())")
        }
        // Queries still agree with a scan after the changes.
        var export: [UInt8] = []
        try store.writeExport(rows: store.exportAllRows(), inlineOwned: false, jsonLines: true, pretty: false) { w in
            export += w.bytes
            w.bytes.removeAll()
        }
        let reference = try ReferenceEvaluator(schema: store.schema, exportJSONLines: export)
        for _ in 0..<300 {
            let q = try Query(random.query())
            #expect(Set(try store.run(q).rows.map { store.table.object(at: $0)!.id }) == reference.ids(from: "Trip", q.predicate), "\(q.text)")
        }
    }

    @Test func fuzzedQueriesGiveResultsOrErrorsNeverCrashes() throws {
        let (store, _) = try Self.makeStore()
        var random = RandomQueries(state: 99)
        let junk = ["(", ")", "&&", "||", "!", "~", "==", "\"", "'", "[", "]", ",", ".", "any", "all", "count(", "is", "exactly",
                    "nil", "2026-13-45", "1e999", "-", "\\u12", "é", "\u{0}", "name", "in", " ", "ß", "😀", "<=", "^="]
        var errors = 0
        for i in 0..<4000 {
            var text = random.query()
            var scalars = Array(text.unicodeScalars)
            for _ in 0..<(1 + random.int(3)) {
                let at = scalars.isEmpty ? 0 : random.int(scalars.count + 1)
                switch random.int(3) {
                case 0 where !scalars.isEmpty: scalars.remove(at: min(at, scalars.count - 1))
                case 1: scalars.insert(contentsOf: random.pick(junk).unicodeScalars, at: at)
                default: if !scalars.isEmpty { scalars = Array(scalars.prefix(at)) }
                }
            }
            text = String(String.UnicodeScalarView(scalars))
            if i % 2 == 0 { text = String(text.reversed()) }
            do {
                _ = try store.run(try Query(text, sort: [SortKey("startDate")], limit: 3))
            } catch {
                errors += 1
                #expect(error.column >= 1 && error.column <= text.unicodeScalars.count + 1, "\(text): column \(error.column)")
            }
        }
        #expect(errors > 1000)
    }
}
