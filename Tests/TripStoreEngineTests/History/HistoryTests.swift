import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct HistoryTests {
    func open(_ folder: String, _ schema: Schema = TripSchema.schema) throws -> Store {
        try Store.open(folder, schema: schema, access: .write)
    }

    @discardableResult
    func commit(_ store: Store, _ body: (inout TransactionBuilder) throws -> Void) throws -> HistoryTransaction? {
        var tx = store.transaction()
        try body(&tx)
        return try store.commit(tx, author: "auditor", timestamp: 1_790_000_000)
    }

    func importText(_ store: Store, _ text: String) throws {
        try commit(store) { tx in try store.stage(try EnvelopeInput.decode(Array(text.utf8), schema: store.schema), mode: .insert, into: &tx) }
    }

    func sampleStore() throws -> Store {
        let store = try open(TestFolders.make("history"))
        let bytes = try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json")
        try commit(store) { tx in try store.stage(try EnvelopeInput.decode(bytes, schema: store.schema), mode: .insert, into: &tx) }
        return store
    }

    @Test func tombstonesHoldPreservedValuesOnlyInheritedIncluded() throws {
        let store = try sampleStore()
        let t = try #require(try commit(store) { tx in try tx.delete(store.table.row(for: "rome-summit")!) })
        let trip = try #require(t.changes.first { $0.id == "rome-summit" })
        #expect(trip.tombstone == [JSONMember("name", .string("Q3 summit")),
                                   JSONMember("startDate", .string("2026-03-02T09:30:00Z")),
                                   JSONMember("endDate", .string("2026-03-06T18:00:00Z"))])
        #expect(t.changes.first { $0.id == "rome-summit-meal-1" }?.tombstone == [])

        let films = try open(TestFolders.make("films"), FilmSchema.schema)
        try importText(films, #"{"type":"FeatureFilm","id":"f","data":{"title":"Up","budget":1,"screens":9,"runtimeMinutes":96,"genre":"animation"}}"#)
        let f = try #require(try commit(films) { tx in try tx.delete(films.table.row(for: "f")!) })
        #expect(f.changes.map(\.tombstone) == [[JSONMember("title", .string("Up")), JSONMember("genre", .string("animation"))]])
        // Stored history also keeps every value, for time travel; the audit view prints the tombstone only.
        #expect(f.changes.first?.deletedValues?.map(\.key) == ["title", "budget", "released", "credits", "studio",
                                                                "screens", "runtimeMinutes", "genre"])
        var w = JSONWriter()
        HistoryCoding.write(f, to: &w)
        #expect(!w.string.contains("budget"))
    }

    @Test func cascadeDeletesOwnedObjectsChildrenFirst() throws {
        let store = try sampleStore()
        let t = try #require(try commit(store) { tx in try tx.delete(store.table.row(for: "rome-summit")!) })
        #expect(t.changes.map { "\($0.kind.rawValue) \($0.type) \($0.id)" } == [
            "delete BucketListItem rome-summit-colosseum", "delete LivingAccommodation rome-summit-hotel",
            "delete DailyMileageRecord rome-summit-miles-1", "delete BusinessMeal rome-summit-meal-1",
            "delete BusinessMeal rome-summit-meal-2", "delete ConferenceSession rome-summit-keynote",
            "delete BusinessTrip rome-summit",
        ])
        #expect(store.checkInvariants().isEmpty)
    }

    @Test func nullifyUnlinksAndRecordsTheRelationshipChange() throws {
        let store = try sampleStore()
        let t = try #require(try commit(store) { tx in try tx.delete(store.table.row(for: "zurich-reunion")!) })
        let update = try #require(t.changes.first { $0.kind == .update })
        #expect(update.id == "cousin-lucia")
        #expect(update.values == [ValueChange(name: "trips",
            old: .array([.object([JSONMember("type", .string("PersonalTrip")), JSONMember("id", .string("malaga-family"))]),
                         .object([JSONMember("type", .string("PersonalTrip")), JSONMember("id", .string("zurich-reunion"))])]),
            new: .array([.object([JSONMember("type", .string("PersonalTrip")), JSONMember("id", .string("malaga-family"))])]))])
        #expect(store.object(id: "cousin-lucia") != nil)
        #expect(store.checkInvariants().isEmpty)
    }

    @Test func denyRefusesAndChangesNothing() throws {
        let store = try sampleStore()
        let before = store.lastToken
        #expect(throws: StoreError.self) { try commit(store) { tx in try tx.delete(store.table.row(for: "cousin-lucia")!) } }
        #expect(store.lastToken == before)
        #expect(store.object(id: "cousin-lucia") != nil)
        // Deleting the member together with every trip it is on is allowed.
        try commit(store) { tx in
            for id in ["malaga-family", "zurich-reunion", "cousin-lucia"] { try tx.delete(store.table.row(for: id)!) }
        }
        #expect(store.object(id: "cousin-lucia") == nil)

        let films = try open(TestFolders.make("films"), FilmSchema.schema)
        try importText(films, """
        {"type":"Studio","id":"s","data":{"name":"S"}}
        {"type":"ShortFilm","id":"x","data":{"title":"X","screens":1,"studio":{"id":"s"},"credits":[{"type":"Credit","id":"c","data":{"person":"P","role":"r"}}]}}
        """)
        do {
            try commit(films) { tx in try tx.delete(films.table.row(for: "s")!) }
            Issue.record("deny did not refuse")
        } catch let e as StoreError {
            #expect(e.description == "cannot delete Studio 's': its relationship 'productions' still holds 1 object and its delete rule is deny")
        }
        // A rule declared on Production applies to its grandchild ShortFilm: credits cascade.
        let t = try #require(try commit(films) { tx in try tx.delete(films.table.row(for: "x")!) })
        #expect(t.changes.map { "\($0.kind.rawValue) \($0.id)" } == ["update s", "delete c", "delete x"])
    }

    @Test func updateRecordsExactlyTheChangedValues() throws {
        let store = try sampleStore()
        let row = store.table.row(for: "romeoville-audit")!
        let t = try #require(try commit(store) { tx in
            try store.stageUpdate([row], set: [("perDiemRate", "95.5"), ("expenseCode", "EX-2"), ("purpose", "'Audit, again'")], into: &tx)
        })
        #expect(t.changes == [Change(kind: .update, type: "BusinessTrip", id: "romeoville-audit", values: [
            ValueChange(name: "purpose", old: .string("Audit visit with Bluebird Logistics"), new: .string("Audit, again")),
            ValueChange(name: "perDiemRate", old: .int(80), new: .double(95.5)),
        ])])
        // The same values again: no change, no token.
        #expect(try commit(store) { tx in try store.stageUpdate([row], set: [("perDiemRate", "95.5")], into: &tx) } == nil)
        #expect(throws: StoreError.self) {
            try commit(store) { tx in try store.stageUpdate([row], set: [("reason", "family")], into: &tx) }
        }
    }

    @Test func filtersSelectChangesAndDropEmptyTransactions() throws {
        let store = try sampleStore()
        try commit(store) { tx in try tx.delete(store.table.row(for: "zurich-reunion")!) }
        try commit(store) { tx in try store.stageUpdate([store.table.row(for: "draft-lisbon")!], set: [("name", "Lisbon")], into: &tx) }
        let h = store.history
        #expect(HistoryFilter(since: 1).apply(to: h).map(\.token) == [2, 3])
        #expect(HistoryFilter(kinds: [.delete]).apply(to: h).map(\.token) == [2])
        #expect(HistoryFilter(types: store.schema.deepTypeNames("Trip")!, kinds: [.update]).apply(to: h).map(\.token) == [3])
        #expect(HistoryFilter(types: store.schema.deepTypeNames("PersonalTrip")!, kinds: [.update]).apply(to: h).isEmpty)
        #expect(HistoryFilter(types: ["FamilyMember"]).apply(to: h).flatMap(\.changes).map(\.kind) == Array(repeating: .insert, count: 13) + [.update])
        #expect(HistoryFilter(author: "nobody").apply(to: h).isEmpty)
    }

    @Test func tokensIncreaseAcrossRestartsCompactionAndPrune() throws {
        let folder = TestFolders.make("tokens")
        var store = try open(folder)
        for k in 0..<3 {
            try importText(store, #"{"type":"Trip","id":"t\#(k)","data":{"name":"N","destination":"D","startDate":"2026-01-01","endDate":"2026-01-02"}}"#)
        }
        try store.compact()
        #expect(try store.pruneHistory(before: 3) == 2)
        store.close()
        store = try open(folder)
        #expect(store.history.map(\.token) == [3])
        #expect(store.table.count == 3)
        try importText(store, #"{"type":"Trip","id":"t9","data":{"name":"N","destination":"D","startDate":"2026-01-01","endDate":"2026-01-02"}}"#)
        #expect(store.lastToken == 4)
        store.close()
        #expect(try Store.open(folder, schema: TripSchema.schema, access: .read).history.map(\.token) == [3, 4])
    }

    /// 50 random operations with compactions and reopenings, against a model kept here.
    @Test func randomOperationsMatchASimpleModel() throws {
        let folder = TestFolders.make("model")
        var store = try open(folder)
        var rng = RandomQueries(state: 2026)
        var model: [String: String] = [:]            // id → name
        var tombstones: [String: String] = [:]       // id → preserved name
        var expectedChanges: [(Int64, Change.Kind, String)] = []
        var next = 0
        for step in 0..<50 {
            switch rng.int(5) {
            case 0, 1:
                let id = "trip-\(next)"
                next += 1
                let name = "Trip \(rng.int(1000))"
                try importText(store, #"{"type":"Trip","id":"\#(id)","data":{"name":"\#(name)","destination":"D","startDate":"2026-01-01","endDate":"2026-01-02"}}"#)
                model[id] = name
                expectedChanges.append((store.lastToken, .insert, id))
            case 2 where !model.isEmpty:
                let id = model.keys.sorted()[rng.int(model.count)]
                let name = "Renamed \(rng.int(1000))"
                if let t = try commit(store, { tx in try store.stageUpdate([store.table.row(for: id)!], set: [("name", name)], into: &tx) }) {
                    #expect(t.changes[0].values == [ValueChange(name: "name", old: .string(model[id]!), new: .string(name))])
                    expectedChanges.append((t.token, .update, id))
                }
                model[id] = name
            case 3 where !model.isEmpty:
                let id = model.keys.sorted()[rng.int(model.count)]
                try commit(store) { tx in try tx.delete(store.table.row(for: id)!) }
                tombstones[id] = model.removeValue(forKey: id)
                expectedChanges.append((store.lastToken, .delete, id))
            case 4:
                try store.compact()
            default:
                store.close()
                store = try open(folder)
            }
            if step % 10 == 9 {
                store.close()
                store = try open(folder)
            }
        }
        var names: [String: String] = [:]
        for row in store.table.liveRows {
            let o = store.table.object(at: row)!
            if case .string(let n) = o.values[0] { names[o.id] = n }
        }
        #expect(names == model)
        let changes = store.history.flatMap { t in t.changes.map { (t.token, $0.kind, $0.id) } }
        #expect(changes.map { "\($0.0) \($0.1) \($0.2)" } == expectedChanges.map { "\($0.0) \($0.1) \($0.2)" })
        for t in store.history {
            for c in t.changes where c.kind == .delete {
                #expect(c.preservedValue("name") == .string(tombstones[c.id]!))
            }
        }
        let tokens = store.history.map(\.token)
        #expect(tokens == tokens.sorted() && Set(tokens).count == tokens.count)
    }

    @Test func historyLinesReadBackTheSameWithTheFastAndTheTreeReader() throws {
        let t = HistoryTransaction(token: 7, timestamp: 1_790_000_000.25, author: "Zoë \"z\"", changes: [
            Change(kind: .insert, type: "Trip", id: "a"),
            Change(kind: .update, type: "Trip", id: "a", values: [ValueChange(name: "name", old: .string("x"), new: .null)]),
            Change(kind: .delete, type: "Trip", id: "b", tombstone: [JSONMember("name", .string("y"))]),
        ])
        var bytes: [UInt8] = []
        HistoryCoding.appendCompact(t, to: &bytes)
        var w = JSONWriter()
        HistoryCoding.write(t, to: &w)
        #expect(bytes == w.bytes)
        let fast = bytes.withUnsafeBufferPointer { HistoryFastReader.read($0) }
        #expect(fast == t)
        #expect(HistoryCoding.read(try JSONReader.parse(bytes)) == t)
        let empty = HistoryTransaction(token: 1, timestamp: 0, author: "a", changes: [])
        var e: [UInt8] = []
        HistoryCoding.appendCompact(empty, to: &e)
        #expect(e.withUnsafeBufferPointer { HistoryFastReader.read($0) } == empty)
    }

    /// A redact strips the values of earlier updates; a transaction staged
    /// before them must still conflict with them, not overwrite in silence.
    @Test func aRedactedUpdateStillConflictsWithAStaleTransaction() throws {
        let store = try sampleStore()
        let trip = store.schema.entity(named: "Trip")!
        let row = try #require(store.table.row(for: "rome-summit"))
        let slot = trip.property(named: "destination")!.slot
        var stale = store.transaction()
        stale.setAttribute(row, slot: slot, to: .string("Lima"))
        try commit(store) { tx in tx.setAttribute(row, slot: slot, to: .string("Oslo")) }
        try Redactor(store).redact(ids: ["rome-summit"], author: "dpo")
        #expect(store.history.last { $0.changes.contains { $0.kind == .update } }?.changes.first?.values.isEmpty == true)
        #expect(throws: StoreError.self) { try store.commit(stale, author: "late") }
        #expect(store.object(id: "rome-summit")?.values[slot] == .string("Oslo"))
    }

    /// The insert envelope history shows for a redacted object (`history
    /// --id`, `get --history`, the feed) is its state right after the insert
    /// as time travel rebuilds it: preserved values only, not the values the
    /// object holds now, which it did not hold then.
    @Test func aRedactedObjectsInsertEnvelopeShowsWhatTimeTravelShows() throws {
        let store = try sampleStore()
        let trip = store.schema.entity(named: "Trip")!
        let row = try #require(store.table.row(for: "rome-summit"))
        let slot = trip.property(named: "destination")!.slot
        let inserted = try #require(store.history.first { $0.changes.contains { $0.kind == .insert && $0.id == "rome-summit" } }?.token)
        try commit(store) { tx in tx.setAttribute(row, slot: slot, to: .string("Oslo")) }
        try Redactor(store).redact(ids: ["rome-summit"], author: "dpo")
        let envelope = try #require(try store.insertEnvelopes(after: inserted - 1, wanted: [inserted], only: "rome-summit")[inserted]?["rome-summit"])
        let then = try store.past(at: .token(inserted))
        let past = try #require(then.object(id: "rome-summit"))
        #expect(envelope["data"]?["destination"] == .null || envelope["data"]?["destination"] == nil, "\(envelope)")
        #expect(past.values[slot] == .null)
    }
}
