import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// `--as-of`: the store rewound to a token answers as the store did then.
@Suite struct TimeTravelTests {
    static func export(_ store: Store) throws -> String {
        var out: [UInt8] = []
        try store.writeExport(rows: store.exportAllRows(), inlineOwned: false, jsonLines: true, pretty: false) { w in
            out += w.bytes
            w.bytes.removeAll()
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A randomized run on the sample store (deletes with cascades, edits,
    /// children moved between trips, inserts), with compactions between:
    /// the store rewound to each token exports exactly what the store
    /// exported when that token was the last.
    @Test func rewindingAgreesWithTheExportTakenAtEachToken() throws {
        let folder = TestFolders.make("timetravel")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var exports: [Int64: String] = [0: try Self.export(store)]
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(try FileIO.readFile(TestFolders.projectRoot + "/SampleData/trips.json"),
                                                 schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        exports[store.lastToken] = try Self.export(store)
        var random = RandomQueries(state: 18)
        let schema = store.schema
        let trip = schema.entity(named: "Trip")!
        let business = schema.entity(named: "BusinessTrip")!
        let meal = schema.entity(named: "BusinessMeal")!
        var seed: UInt64 = 500
        for round in 0..<60 {
            var tx = store.transaction()
            let trips = store.table.liveRows.filter { schema.isKind(store.table.entity(at: $0)!, of: trip.id) }
            let businessTrips = trips.filter { store.table.entity(at: $0) == business.id }
            let meals = store.table.liveRows.filter { store.table.entity(at: $0) == meal.id }
            for _ in 0..<(1 + random.int(4)) {
                switch random.int(6) {
                case 0:
                    let row = random.pick(trips)
                    if tx.object(at: row) != nil { try tx.delete(row) }
                case 1, 2:
                    let row = random.pick(trips)
                    guard tx.object(at: row) != nil else { continue }
                    tx.setAttribute(row, slot: trip.property(named: "destination")!.slot,
                                    to: .string(random.pick(["Rome, Italy", "Zürich", "Oslo", "Lima"])))
                case 3:
                    // A meal moves to another business trip.
                    guard !meals.isEmpty, !businessTrips.isEmpty else { continue }
                    let m = random.pick(meals), b = random.pick(businessTrips)
                    guard tx.object(at: m) != nil, tx.object(at: b) != nil else { continue }
                    tx.link(m, slot: meal.property(named: "trip")!.slot, to: b)
                case 4:
                    let row = random.pick(trips)
                    guard tx.object(at: row) != nil else { continue }
                    tx.setAttribute(row, slot: trip.property(named: "endDate")!.slot, to: .date(Double(random.int(1_000_000_000))))
                default:
                    seed += 1
                    var g = TripDataGenerator(seed: seed)
                    try store.stage(try EnvelopeInput.decode(g.jsonArray(trips: 2), schema: schema), mode: .insert, into: &tx)
                }
            }
            guard try store.commit(tx, author: "r\(round)") != nil else { continue }
            exports[store.lastToken] = try Self.export(store)
            if round == 20 || round == 45 { try store.compact() }
        }
        store.close()
        #expect(exports.count > 40)
        for (token, expected) in exports.sorted(by: { $0.key < $1.key }) {
            let past = try Store.open(folder, schema: TripSchema.schema, asOf: .token(token))
            #expect(past.state == .past(token: token))
            #expect(try Self.export(past) == expected, "as of token \(token)")
            #expect(past.checkInvariants().isEmpty, "as of token \(token): \(past.checkInvariants())")
            #expect(past.loadedFromImage, "the rewound store opened from its image")
            if token % 5 == 0 {
                // The same answer without the image cache: from the JSON alone.
                var options = StoreOptions()
                options.useSnapshotImage = false
                let json = try Store.open(folder, schema: TripSchema.schema, asOf: .token(token), options: options)
                #expect(try Self.export(json) == expected, "as of token \(token), without the image")
            }
            // The indexes were kept with the rows: a query agrees with a scan of that export.
            let reference = try ReferenceEvaluator(schema: past.schema, exportJSONLines: Array(expected.utf8))
            for text in ["destination ~ \"Rome\"", "is BusinessTrip && count(businessMeals) > 1", "endDate < 1990-01-01"] {
                let q = try Query(text)
                #expect(Set(try past.run(q).rows.map { past.table.object(at: $0)!.id }) == reference.ids(from: "Trip", q.predicate),
                        "as of token \(token): \(text)")
            }
        }
    }

    @Test func tokensOutOfReachNameTheRange() throws {
        let folder = TestFolders.make("timetravel-range")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        for k in 1...4 {
            var tx = store.transaction()
            try store.stage(try EnvelopeInput.decode(Array(#"[{"type":"Trip","id":"t\#(k)","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}]"#.utf8),
                                                     schema: store.schema), mode: .insert, into: &tx)
            try store.commit(tx, author: "a", timestamp: Double(1000 * k))
        }
        #expect(store.reachableTokens == 0...4)
        _ = try store.pruneHistory(before: 3)
        #expect(store.reachableTokens == 2...4)
        // Token 2's line is dropped, its time kept: the oldest reachable state is reachable by time too.
        #expect(try store.token(at: 2999) == 2)
        #expect(try store.token(at: 2000) == 2)
        #expect(try store.token(at: 1999.999) == nil)
        #expect(try store.token(at: 3000) == 3)
        #expect(try store.token(at: 99999) == 4)
        #expect(try store.token(at: 1500) == nil)
        // Out of reach, the message names the oldest state reachable by time.
        #expect(throws: StoreError.self) { try store.token(at: .time(ISOTime(seconds: 1999))) }
        do {
            _ = try store.token(at: .time(ISOTime(seconds: 1999)))
        } catch {
            #expect("\(error)".hasSuffix("(token 2 was committed at \(ISODate.format(2000)))"), "\(error)")
        }
        let past = try Store.open(folder, schema: TripSchema.schema, access: .read)
        // The same answers from the snapshot's lines, read without parsing
        // them, from the image and from the JSON alone, and after another compaction.
        try store.compact()
        var jsonOnly = StoreOptions()
        jsonOnly.useSnapshotImage = false
        let times = [2999, 2000, 1999.999, 3000, 3500, 4000, 99999, 1500]
        for options in [StoreOptions(), jsonOnly] {
            let reopened = try Store.open(folder, schema: TripSchema.schema, access: .read, options: options)
            #expect(try times.map { try reopened.token(at: $0) } == [2, 2, nil, 3, 3, 4, 4, nil])
        }
        let snapshot = String(decoding: try FileIO.readFile(folder + "/snapshot-4.jsonl"), as: UTF8.self)
        #expect(snapshot.hasPrefix(#"{"format":4,"#) && snapshot.contains(#""oldestReachableCommit":""#))
        #expect(throws: StoreError.self) { try past.past(at: .token(1)) }
        do {
            _ = try past.past(at: .token(1))
        } catch {
            #expect("\(error)" == "token 1 is out of reach: retained history reaches tokens 2 to 4 (the oldest retained history is token 3)")
        }
        let two = try past.past(at: .token(2))
        #expect(two.table.row(for: "t3") == nil && two.table.row(for: "t2") != nil)
        #expect(past.table.row(for: "t3") != nil, "the store it was made from is left as it was")
        #expect(throws: StoreError.self) { try two.commit(two.transaction(), author: "x") }
        // A later prune moves it.
        _ = try store.pruneHistory(before: 4)
        let later = try Store.open(folder, schema: TripSchema.schema, access: .read)
        #expect(try [2999, 3000, 3500, 4000].map { try later.token(at: Double($0)) } == [nil, 3, 3, 4])
        #expect(later.reachableTokens == 3...4)
    }
}
