import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The bulk import (`BulkImporter`) against the usual one (`stage`
/// then `commit`): wherever it applies it writes the same snapshot, byte for
/// byte, and wherever the usual one refuses or reconciles the input it does
/// not apply.
@Suite struct BulkImportTests {
    static let time = ISODate.parse("2026-11-24T09:00:00Z")!

    /// Options under which any input of one object or more is imported in bulk.
    static var bulkOptions: StoreOptions {
        var o = StoreOptions()
        o.snapshotCommitChanges = 1
        return o
    }

    /// The snapshot the usual import writes, or the error it gives.
    static func staged(_ input: [UInt8], schema: Schema, name: String) -> Result<[UInt8], any Error> {
        Result {
            let store = try Store.open(TestFolders.make(name + "-staged"), schema: schema, access: .write, options: bulkOptions)
            var tx = store.transaction()
            try store.stage(try EnvelopeInput.decode(input, schema: schema), mode: .insert, into: &tx)
            let t = try #require(try store.commit(tx, author: "bulk", timestamp: time))
            return try FileIO.readFile(store.files.snapshot(t.token))
        }
    }

    /// The snapshot the bulk import writes, or nil where it does not apply (the store then unchanged).
    static func bulk(_ bytes: [UInt8], schema: Schema, name: String) throws -> [UInt8]? {
        var input = bytes
        let folder = TestFolders.make(name + "-bulk")
        let store = try Store.open(folder, schema: schema, access: .write, options: bulkOptions)
        let streamed = try streamedFromFile(bytes, schema: schema, name: name)
        guard let t = try BulkImporter(store).insert(&input, author: "bulk", timestamp: time) else {
            #expect(store.table.count == 0 && store.lastToken == 0 && store.table.recordBytes.total == 0)
            #expect(streamed == nil, "\(name): taken when streamed from a file, not from memory")
            return nil
        }
        let written = try FileIO.readFile(store.files.snapshot(t.token))
        #expect(streamed == written, "\(name): streamed from a file")
        // The image's lists, taken as built, are what counting them in the records gives.
        let images = try [true, false].map { once in
            let path = folder + "/check-\(once).image"
            let image = try #require(store.table.writeImage(order: store.table.rowsSortedByID(), indexed: IndexedProperty.of(store.indexes.valueIndexes),
                                                            lists: FlatLists(store.table.lists), path: path, listsReferencedOnce: once))
            defer { image.discard() }
            return try FileIO.readFile(path)
        }
        #expect(images[0] == images[1], "\(name): image with lists counted")
        // The import's own image, made by the snapshot's encoders, holds the same bytes past its header (the binding to its snapshot).
        let image = try FileIO.readFile(store.files.image(t.token))
        #expect(image.count == images[0].count && image.dropFirst(SnapshotImage.Header.byteCount) == images[0].dropFirst(SnapshotImage.Header.byteCount),
                "\(name): the image the encoders made")
        // Opened again (from the image, then from the JSON alone), it holds what was imported.
        let again = try Store.open(folder, schema: schema, access: .read)
        #expect(again.loadedFromImage)
        var jsonOnly = StoreOptions()
        jsonOnly.useSnapshotImage = false
        let fromJSON = try Store.open(folder, schema: schema, access: .read, options: jsonOnly)
        #expect(try exported(again) == exported(fromJSON))
        #expect(again.checkInvariants().isEmpty)
        return written
    }

    /// The snapshot a bulk import of `bytes` read from a file 200 bytes at a
    /// time writes (each window's records a chunk of their own), or nil.
    static func streamedFromFile(_ bytes: [UInt8], schema: Schema, name: String) throws -> [UInt8]? {
        let folder = TestFolders.make(name + "-streamed")
        let file = folder + "/input.json"
        try Data(bytes).write(to: URL(fileURLWithPath: file))
        var identity: FileIdentity?
        let plan = try BulkImporter.plan(file: file, schema: schema, options: bulkOptions, identity: &identity, window: 200)
        let fd = try FileIO.openRegular(file)
        #expect(identity == nil || identity == FileIdentity.of(fd))
        FileIO.close(fd)
        let store = try Store.open(folder + "/store", schema: schema, access: .write, options: bulkOptions)
        guard let plan, let t = try BulkImporter(store).insert(plan, author: "bulk", timestamp: time) else { return nil }
        return try FileIO.readFile(store.files.snapshot(t.token))
    }

    static func exported(_ store: Store) throws -> [UInt8] {
        var out: [UInt8] = []
        try store.writeExport(rows: store.exportAllRows(), inlineOwned: false, jsonLines: true, pretty: false) { w in
            out += w.bytes
            w.bytes.removeAll()
        }
        return out
    }

    func expectSame(_ input: [UInt8], schema: Schema, name: String, mustApply: Bool = true) throws {
        let bulk = try Self.bulk(input, schema: schema, name: name)
        let staged = Self.staged(input, schema: schema, name: name)
        if mustApply { #expect(bulk != nil, "\(name): the bulk import gave up") }
        guard let bulk else { return }
        switch staged {
        case .success(let bytes):
            #expect(bulk == bytes, "\(name): the snapshots differ")
        case .failure(let error):
            Issue.record("\(name): the bulk import took an input the usual one refuses: \(error)")
        }
    }

    @Test func everyCorpusGivesTheSnapshotTheUsualImportGives() throws {
        let root = TestFolders.projectRoot
        try expectSame(try FileIO.readFile(root + "/SampleData/trips.json"), schema: TripSchema.schema, name: "sample")
        try expectSame(try FileIO.readFile(root + "/Tests/TripStoreEngineTests/Fixtures/golden/input.json"), schema: TripSchema.schema, name: "golden")
        var g = TripDataGenerator(seed: 16)
        try expectSame(g.jsonArray(trips: 300), schema: TripSchema.schema, name: "generated")
        var l = TripDataGenerator(seed: 17)
        try expectSame(l.jsonLines(trips: 300), schema: TripSchema.schema, name: "lines")
        // Lists given that leave out objects claiming to be in them get those after their own.
        try expectSame(Array(#"[{"type":"Studio","id":"s1","data":{"name":"S","productions":[]}},{"type":"ShortFilm","id":"p1","data":{"title":"P","screens":1,"studio":{"id":"s1"}}}]"#.utf8),
                       schema: FilmSchema.schema, name: "empty list")
        try expectSame(Array(#"[{"type":"ShortFilm","id":"p3","data":{"title":"R","screens":1,"studio":{"id":"s1"}}},{"type":"Studio","id":"s1","data":{"name":"S","productions":[{"type":"ShortFilm","id":"p1"},{"type":"ShortFilm","id":"p2"}]}},{"type":"ShortFilm","id":"p2","data":{"title":"Q","screens":1}},{"type":"ShortFilm","id":"p1","data":{"title":"P","screens":1,"studio":{"id":"s1"}}},{"type":"ShortFilm","id":"p0","data":{"title":"O","screens":1,"studio":{"id":"s1"}}}]"#.utf8),
                       schema: FilmSchema.schema, name: "longer list")
        for order in [["p1", "s1", "p2", "p3"], ["p2", "s1", "p3", "p1"], ["p3", "p2", "p1", "s1"], ["s1", "p3", "p1", "p2"]] {
            // A list of one keeps link order, whichever object came first.
            let envelopes = ["s1": #"{"type":"Studio","id":"s1","data":{"name":"S","productions":[{"type":"ShortFilm","id":"p2"}]}}"#,
                             "p1": #"{"type":"ShortFilm","id":"p1","data":{"title":"P","screens":1,"studio":{"id":"s1"}}}"#,
                             "p2": #"{"type":"ShortFilm","id":"p2","data":{"title":"Q","screens":1,"studio":{"id":"s1"}}}"#,
                             "p3": #"{"type":"ShortFilm","id":"p3","data":{"title":"R","screens":1,"studio":{"id":"s1"}}}"#]
            try expectSame(Array(("[" + order.map { envelopes[$0]! }.joined(separator: ",") + "]").utf8), schema: FilmSchema.schema,
                           name: "list of one " + order.joined())
        }
        // Many to many: a list of one, its object first giving an empty list
        // of the other side (which names nobody) or one naming the owner,
        // then another object that claims to be in the list, then the list.
        for familyMembers in ["[]", #"[{"type":"FamilyMember","id":"fm1"}]"#] {
            func trip(_ id: String, _ members: String) -> String {
                #"{"type":"PersonalTrip","id":"\#(id)","data":{"name":"n","destination":"d","startDate":"2020-01-01","endDate":"2020-01-02","reason":"family","frequentFlyerCodes":[],"venuePasses":[],"familyMembers":\#(members)}}"#
            }
            let input = "[" + [trip("pt1", familyMembers), trip("pt2", #"[{"type":"FamilyMember","id":"fm1"}]"#),
                               #"{"type":"FamilyMember","id":"fm1","data":{"name":"f","trips":[{"type":"PersonalTrip","id":"pt1"}]}}"#].joined(separator: ",") + "]"
            try expectSame(Array(input.utf8), schema: TripSchema.schema, name: "many to many " + familyMembers)
        }
        var films = FilmInput(seed: 3)
        try expectSame(films.make(faults: false), schema: FilmSchema.schema, name: "films")
        // Arrays of strings are read and written item by item: empty, long enough that
        // their count takes two bytes, with escapes and text past ASCII.
        let tags = [0, 1, 127, 128, 300].map { n in
            "[" + (0..<n).map { #""t\#($0) \"é\" \\ \u00e9""# }.joined(separator: ",") + "]"
        }
        let specials = tags.enumerated().map { k, list in
            #"{"type":"TVSpecial","id":"tv\#(k)","data":{"title":"T","network":"N","tags":\#(list)}}"#
        }
        try expectSame(Array(("[" + specials.joined(separator: ",\n") + "]").utf8), schema: FilmSchema.schema, name: "string arrays")
    }

    /// Random film inputs (nested and by-id links, either side of a pair or
    /// both, in any order) with faults sown in: the bulk import either gives
    /// up or writes exactly what the usual import writes, and never takes
    /// an input the usual one refuses.
    @Test func randomInputsAgreeWithTheUsualImport() throws {
        var applied = 0, refused = 0
        for seed in 1...60 {
            var films = FilmInput(seed: UInt64(seed))
            let input = films.make(faults: seed % 3 == 0)
            let bulk = try Self.bulk(input, schema: FilmSchema.schema, name: "random\(seed)")
            let staged = Self.staged(input, schema: FilmSchema.schema, name: "random\(seed)")
            if case .failure = staged { refused += 1 }
            guard let bulk else { continue }
            applied += 1
            switch staged {
            case .success(let bytes): #expect(bulk == bytes, "seed \(seed): the snapshots differ")
            case .failure(let error): Issue.record("seed \(seed): taken in bulk, refused as usual: \(error)")
            }
        }
        // Both outcomes are exercised.
        #expect(applied >= 20)
        #expect(refused >= 5)
    }

    /// A new store's folder whose first commit failed (the disk full, say)
    /// holds a lock, the schema record and empty journals: a failed import
    /// removes it; a journal line or a snapshot keeps it.
    @Test func aFolderWithoutACommitIsRemovedAndOneWithACommitKept() throws {
        for kept in [nil, "journal-0.jsonl", "snapshot-1.jsonl"] {
            let folder = TestFolders.make("unused")
            for name in ["tripstore.lock", "schema.json", "journal-0.jsonl"] {
                _ = FileManager.default.createFile(atPath: folder + "/" + name, contents: Data())
            }
            if let kept { _ = FileManager.default.createFile(atPath: folder + "/" + kept, contents: Data("{}\n".utf8)) }
            StoreFiles(folder: folder).removeIfUnused()
            #expect(FileManager.default.fileExists(atPath: folder) == (kept != nil), "\(kept ?? "nothing committed")")
        }
    }

    @Test func inputsItDoesNotTakeLeaveTheStoreAsItWas() throws {
        let schema = FilmSchema.schema
        let credit = #"{"type":"Credit","id":"c1","data":{"person":"Ann","role":"director"}}"#
        let cases: [(String, String)] = [
            ("duplicate id", "[\(credit),\(credit)]"),
            ("dangling reference", #"[{"type":"Credit","id":"c1","data":{"person":"A","role":"r","production":{"type":"ShortFilm","id":"nope"}}}]"#),
            ("reference of the wrong type", #"[{"type":"Studio","id":"s1","data":{"name":"S"}},{"type":"Credit","id":"c1","data":{"person":"A","role":"r","production":{"type":"Production","id":"s1"}}}]"#),
            ("non-ASCII id", #"[{"type":"Credit","id":"café","data":{"person":"A","role":"r"}}]"#),
            ("missing required value", #"[{"type":"Credit","id":"c1","data":{"person":"A"}}]"#),
            ("a to-one set twice", #"[{"type":"Studio","id":"s1","data":{"name":"S","productions":[{"type":"ShortFilm","id":"p1"}]}},{"type":"Studio","id":"s2","data":{"name":"T","productions":[{"type":"ShortFilm","id":"p1"}]}},{"type":"ShortFilm","id":"p1","data":{"title":"P","screens":1}}]"#),
            ("a property given twice", #"[{"type":"Credit","id":"c1","data":{"person":"A","person":"B","role":"r"}}]"#),
            ("no id", #"[{"type":"Credit","data":{"person":"A","role":"r"}}]"#),
            ("not JSON", #"[{"type":"Credit","id":"c1","data":{"person":"A","role":"r"}"#),
            ("one pretty-printed envelope", "{\n \"type\": \"Credit\", \"id\": \"c1\",\n \"data\": {\"person\": \"A\", \"role\": \"r\"}\n}\n"),
            ("a date past year 9999 once rounded", #"[{"type":"ShortFilm","id":"p1","data":{"title":"T","screens":1,"released":"9999-12-31T23:59:59.999999999Z"}}]"#),
            ("a date before year 1 by its offset", #"[{"type":"ShortFilm","id":"p1","data":{"title":"T","screens":1,"released":"0001-01-01T00:00:00+00:01"}}]"#),
        ]
        for (name, text) in cases {
            #expect(try Self.bulk(Array(text.utf8), schema: schema, name: "refused") == nil, "\(name)")
        }
        // No objects at all, even where any number would do: nothing to commit (the usual import says so).
        var zero = Self.bulkOptions
        zero.snapshotCommitChanges = 0
        for text in ["[]", "", "\n\n", "[ ]"] {
            var input = Array(text.utf8)
            #expect(BulkImporter.plan(&input, schema: schema, options: zero) == nil, "\(text.debugDescription)")
        }
        // The usual import names such a date (the text cannot hold it: a snapshot would say another).
        for date in ["9999-12-31T23:59:59.999999999Z", "0001-01-01T00:00:00+00:01"] {
            let input = Array(#"[{"type":"ShortFilm","id":"p1","data":{"title":"T","screens":1,"released":"\#(date)"}}]"#.utf8)
            #expect(throws: (any Error).self, "\(date)") {
                let store = try Store.open(TestFolders.make("date-refused"), schema: schema, access: .write)
                var tx = store.transaction()
                try store.stage(try EnvelopeInput.decode(input, schema: schema), mode: .insert, into: &tx)
                try store.commit(tx, author: "t")
            }
        }
        // A store that holds objects imports the usual way.
        let store = try Store.open(TestFolders.make("nonempty"), schema: schema, access: .write, options: Self.bulkOptions)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array("[\(credit)]".utf8), schema: schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        let more = Array(#"[{"type":"Credit","id":"c2","data":{"person":"B","role":"r"}}]"#.utf8)
        var more2 = more
        #expect(try BulkImporter(store).insert(&more2, author: "t") == nil)
        #expect(store.table.count == 1)
    }

    /// From 65,536 objects the ids are sorted on two cores and merged: the
    /// rows come out in id order (ids sharing their first eight bytes, so
    /// the merge compares whole ids), and an id given in both halves is found.
    @Test func idsSortedOnTwoCoresMergeInOrderAndFindAnIdInBothHalves() throws {
        let schema = FilmSchema.schema
        let n = 70_000
        var rng = SplitMix64(seed: 93)
        var numbers = Array(0..<n)
        for i in stride(from: n - 1, to: 0, by: -1) { numbers.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
        func input(_ ids: [String]) -> [UInt8] {
            Array(("[" + ids.map { #"{"type":"Studio","id":"\#($0)","data":{"name":"n"}}"# }.joined(separator: ",") + "]").utf8)
        }
        let ids = numbers.map { "studio-" + String(1_000_000 + $0) }
        var bytes = input(ids)
        let plan = try #require(BulkImporter.plan(&bytes, schema: schema, options: Self.bulkOptions))
        let store = try Store.open(TestFolders.make("two-cores"), schema: schema, access: .write, options: Self.bulkOptions)
        _ = try #require(try BulkImporter(store).insert(plan, author: "ann", timestamp: Self.time))
        let stored = (0..<n).map { store.table.recordedID(RowID($0)) }
        #expect(stored == ids.sorted().map { Optional($0) })

        // Ids shorter than eight bytes and sharing prefixes: in byte order.
        let letters = ["a", "b", "A", "z", "~", "0", "-"]
        var mixed = Set<String>()
        while mixed.count < 20_000 {
            mixed.insert((0..<(1 + Int(rng.next() % 11))).map { _ in letters[Int(rng.next() % UInt64(letters.count))] }.joined())
        }
        var mixedBytes = input(Array(mixed))
        let mixedPlan = try #require(BulkImporter.plan(&mixedBytes, schema: schema, options: Self.bulkOptions))
        let mixedStore = try Store.open(TestFolders.make("two-cores-mixed"), schema: schema, access: .write, options: Self.bulkOptions)
        _ = try #require(try BulkImporter(mixedStore).insert(mixedPlan, author: "ann", timestamp: Self.time))
        #expect((0..<mixed.count).map { mixedStore.table.recordedID(RowID($0)) ?? "" }
                == mixed.sorted { Array($0.utf8).lexicographicallyPrecedes(Array($1.utf8)) })

        var twice = ids
        twice[n - 10] = twice[10]
        var again = input(twice)
        #expect(BulkImporter.plan(&again, schema: schema, options: Self.bulkOptions) == nil)
    }

    /// A plan hands its records to the first store that imports it (and
    /// frees the rest): a second store refuses it and stays empty.
    @Test func aPlanIsImportedOnce() throws {
        let schema = FilmSchema.schema
        var input = Array(#"[{"type":"Studio","id":"s1","data":{"name":"A"}},{"type":"Studio","id":"s2","data":{"name":"B"}}]"#.utf8)
        let plan = try #require(BulkImporter.plan(&input, schema: schema, options: Self.bulkOptions))
        let first = try Store.open(TestFolders.make("plan-first"), schema: schema, access: .write, options: Self.bulkOptions)
        let second = try Store.open(TestFolders.make("plan-second"), schema: schema, access: .write, options: Self.bulkOptions)
        #expect(BulkImporter(first).accepts(plan) && BulkImporter(second).accepts(plan))
        let t = try #require(try BulkImporter(first).insert(plan, author: "ann", timestamp: Self.time))
        #expect(t.inserted == [.init(type: "Studio", count: 2)])
        #expect(!BulkImporter(second).accepts(plan))
        #expect(try BulkImporter(second).insert(plan, author: "ann") == nil)
        #expect(second.table.count == 0)
        #expect(first.table.count == 2)
    }

    /// The value indexes a plan builds ahead are the store's own (else the
    /// image thread would build them again, on the encoders' cores).
    @Test func theIndexesBuiltAheadAreTheStoresOwn() throws {
        let schema = FilmSchema.schema
        var input = Array(#"[{"type":"Studio","id":"s1","data":{"name":"A"}},{"type":"Studio","id":"s2","data":{"name":"B"}}]"#.utf8)
        let plan = try #require(BulkImporter.plan(&input, schema: schema, options: Self.bulkOptions))
        let store = try Store.open(TestFolders.make("plan-indexes"), schema: schema, access: .write, options: Self.bulkOptions)
        let declared = IndexedProperty.of(store.indexes.valueIndexes)
        #expect(!declared.isEmpty)
        #expect(IndexedProperty.same(plan.ahead.wait().indexed, declared))
        #expect(plan.ahead.wait().indexes.count == declared.count)
    }

    @Test func theHistoryListsEachInsertByTypeInInputOrder() throws {
        let input = Array(#"""
        [{"type":"Studio","id":"s2","data":{"name":"B"}},
         {"type":"ShortFilm","id":"p9","data":{"title":"P","screens":1,"studio":{"id":"s2"},
          "credits":[{"type":"Credit","id":"c5","data":{"person":"A","role":"r"}},{"type":"Credit","id":"c1","data":{"person":"B","role":"r"}}]}},
         {"type":"Studio","id":"s1","data":{"name":"A"}}]
        """#.utf8)
        let store = try Store.open(TestFolders.make("order"), schema: FilmSchema.schema, access: .write, options: Self.bulkOptions)
        var bytes = input
        let t = try #require(try BulkImporter(store).insert(&bytes, author: "ann", timestamp: Self.time))
        #expect(t.inserted == [.init(type: "Studio", count: 2), .init(type: "ShortFilm", count: 1), .init(type: "Credit", count: 2)])
        // History reads the transaction back from the snapshot.
        #expect(store.history[0].changes.map { "\($0.kind.rawValue) \($0.type) \($0.id)" } == [
            "insert Studio s2", "insert Studio s1", "insert ShortFilm p9", "insert Credit c5", "insert Credit c1",
        ])
        #expect(t.token == 1 && t.author == "ann")
        let p9 = try #require(store.table.row(for: "p9"))
        #expect(store.object(id: "s2")?.values[1] == .toMany([p9]))
        #expect(store.history.count == 1)
    }
}

/// Film inputs for the bulk import tests, from a fixed seed.
struct FilmInput {
    var state: UInt64
    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next(_ n: Int) -> Int {
        state ^= state << 13
        state ^= state >> 7
        state ^= state << 17
        return Int(state % UInt64(n))
    }

    /// Studios, productions of every type (credits nested, or given apart
    /// and linked by id from either side), in shuffled order; with `faults`,
    /// a few links that disagree, duplicates and dangling ids.
    mutating func make(faults: Bool) -> [UInt8] {
        let studios = 3 + next(4), productions = 20 + next(30)
        let types = ["Production", "TheatricalRelease", "FeatureFilm", "ShortFilm", "TVSpecial"]
        var envelopes: [String] = []
        var studioLists = Array(repeating: [(id: String, type: String, named: Bool)](), count: studios)
        var listsGiven = (0..<studios).map { _ in next(3) == 0 }
        for p in 0..<productions {
            let type = types[next(types.count)]
            var data = [#""title":"Film \#(p)""#]
            if next(2) == 0 { data.append(#""budget":\#(next(1000)).5"#) }
            if next(2) == 0 { data.append(#""released":"20\#(10 + next(10))-0\#(1 + next(9))-1\#(next(10))T10:00:00Z""#) }
            switch type {
            case "TheatricalRelease", "ShortFilm": data.append(#""screens":\#(next(900))"#)
            case "FeatureFilm": data += [#""screens":\#(next(900))"#, #""runtimeMinutes":\#(80 + next(90))"#, #""genre":"drama""#]
            case "TVSpecial": data += [#""network":"N\#(next(5))""#, #""tags":["a","b\u00e9"]"#]
            default: break
            }
            var credits: [String] = []
            for c in 0..<next(4) {
                let id = "c\(p)-\(c)"
                let credit = #"{"type":"Credit","id":"\#(id)","data":{"person":"P\#(next(50))","role":"actor"}}"#
                switch next(3) {
                case 0: credits.append(credit)
                case 1:
                    credits.append(#"{"id":"\#(id)"}"#)
                    envelopes.append(credit)
                default:
                    // The credit names its production itself.
                    envelopes.append(#"{"type":"Credit","id":"\#(id)","data":{"person":"Q","role":"crew","production":{"type":"\#(type)","id":"p\#(p)"}}}"#)
                }
            }
            if !credits.isEmpty || next(2) == 0 { data.append(#""credits":[\#(credits.joined(separator: ","))]"#) }
            if next(3) != 0 {
                let s = next(studios)
                let named = next(2) == 0
                studioLists[s].append((id: "p\(p)", type: type, named: named))
                if named { data.append(#""studio":{"id":"s\#(s)"}"#) }
            }
            envelopes.append(#"{"type":"\#(type)","id":"p\#(p)","data":{\#(data.joined(separator: ","))}}"#)
        }
        for s in 0..<studios {
            // A studio lists its productions (in an order of its own) or leaves that to them;
            // a production linked only from here must be listed.
            var listed = studioLists[s]
            if listed.contains(where: { !$0.named }) { listsGiven[s] = true }
            if listed.count > 1 && next(2) == 0 { listed.reverse() }
            let refs = listed.map { #"{"type":"\#($0.type)","id":"\#($0.id)"}"# }
            let list = listsGiven[s] ? #","productions":[\#(refs.joined(separator: ","))]"# : ""
            envelopes.append(#"{"type":"Studio","id":"s\#(s)","data":{"name":"Studio \#(s)"\#(list)}}"#)
        }
        if faults {
            switch next(4) {
            case 0: envelopes.append(envelopes[next(envelopes.count)])
            case 1: envelopes.append(#"{"type":"Credit","id":"x","data":{"person":"A","role":"r","production":{"type":"ShortFilm","id":"p0"}}}"#)
            case 2: envelopes.append(#"{"type":"Studio","id":"extra","data":{"name":"E","productions":[{"type":"Production","id":"p1"}]}}"#)
            default: envelopes.append(#"{"type":"Credit","id":"y","data":{"person":"A","role":"r","production":{"id":"nowhere"}}}"#)
            }
        }
        for i in envelopes.indices.reversed() { envelopes.swapAt(i, next(i + 1)) }
        return Array(("[\n" + envelopes.joined(separator: ",\n") + "\n]\n").utf8)
    }
}

extension BulkImportTests {
    /// The bulk reader on damaged bytes (fixed seeds): whatever a byte
    /// flipped, dropped or doubled does, it gives up or agrees with the usual import.
    @Test func damagedBytesAgreeWithTheUsualImport() throws {
        var films = FilmInput(seed: 9)
        let clean = films.make(faults: false)
        var random = FilmInput(seed: 41)
        let structural = Array("{}[],:\"\\ n0-.e".utf8)
        var applied = 0
        for round in 0..<120 {
            var input = clean
            for _ in 0..<(1 + random.next(3)) {
                let at = random.next(input.count)
                switch random.next(3) {
                case 0: input[at] = structural[random.next(structural.count)]
                case 1: input.remove(at: at)
                default: input.insert(input[at], at: at)
                }
            }
            guard let bulk = try Self.bulk(input, schema: FilmSchema.schema, name: "damaged\(round)") else { continue }
            applied += 1
            switch Self.staged(input, schema: FilmSchema.schema, name: "damaged\(round)") {
            case .success(let bytes): #expect(bulk == bytes, "round \(round): the snapshots differ")
            case .failure(let error): Issue.record("round \(round): taken in bulk, refused as usual: \(error)")
            }
        }
        #expect(applied > 0)
    }

    /// A transaction staged before a bulk import is checked against it at
    /// commit, as against any commit: its own inserts go in after the import's,
    /// and an id the import inserted too is a conflict, nothing overwritten.
    /// The lists a bulk import builds stay end to end until a commit changes
    /// one: links, unlinks and deletes afterwards, in the same process, give
    /// what they give on a store imported the usual way.
    @Test func listsChangedAfterABulkImportAgreeWithTheUsualImport() throws {
        let schema = FilmSchema.schema
        for seed in 1...8 {
            var films = FilmInput(seed: UInt64(seed))
            var input = films.make(faults: false)
            let bulk = try Store.open(TestFolders.make("lists-after-bulk\(seed)"), schema: schema, access: .write, options: Self.bulkOptions)
            let usual = try Store.open(TestFolders.make("lists-after-usual\(seed)"), schema: schema, access: .write)
            var tx = usual.transaction()
            try usual.stage(try EnvelopeInput.decode(input, schema: schema), mode: .insert, into: &tx)
            try usual.commit(tx, author: "bulk", timestamp: Self.time)
            #expect(try BulkImporter(bulk).insert(&input, author: "bulk", timestamp: Self.time) != nil, "seed \(seed)")
            for store in [bulk, usual] {
                var t = store.transaction()
                // A credit moved to another production, one unlinked, one production deleted (its credits with it).
                if store.object(id: "c0-0") != nil { try t.link("p1", "credits", to: "c0-0") }
                if store.object(id: "c2-0") != nil { try t.unlink("p2", "credits", from: "c2-0") }
                if store.object(id: "p3") != nil { try t.delete(id: "p3") }
                try t.link("s0", "productions", to: "p4")
                try store.commit(t, author: "t", timestamp: Self.time + 1)
            }
            #expect(try Self.exported(bulk) == Self.exported(usual), "seed \(seed)")
            #expect(bulk.checkInvariants().isEmpty)
            let again = try Store.open(bulk.files.folder, schema: schema, access: .read)
            #expect(try Self.exported(again) == Self.exported(usual), "seed \(seed), opened again")
        }
    }

    @Test func aTransactionStagedBeforeIsCheckedAgainstTheImport() throws {
        let schema = FilmSchema.schema
        let store = try Store.open(TestFolders.make("staged-before"), schema: schema, access: .write, options: Self.bulkOptions)
        func credit(_ id: String, _ person: String) throws -> [DecodedObject] {
            try EnvelopeInput.decode(Array(#"[{"type":"Credit","id":"\#(id)","data":{"person":"\#(person)","role":"r"}}]"#.utf8), schema: schema)
        }
        var other = store.transaction()
        try store.stage(try credit("c9", "Other"), mode: .insert, into: &other)
        var clashing = store.transaction()
        try store.stage(try credit("c1", "Clash"), mode: .insert, into: &clashing)
        var films = FilmInput(seed: 5)
        var input = films.make(faults: false) + []
        input = Array(String(decoding: input, as: UTF8.self).replacingOccurrences(of: "\n]\n", with: #",{"type":"Credit","id":"c1","data":{"person":"Bulk","role":"r"}}]"#).utf8)
        #expect(try BulkImporter(store).insert(&input, author: "bulk") != nil)
        let imported = store.table.count
        try store.commit(other, author: "t")
        #expect(store.table.count == imported + 1)
        #expect(throws: StoreError.self) { try store.commit(clashing, author: "t") }
        #expect(store.object(id: "c1")?.values[0] == .string("Bulk"))
        // Reopened, it holds the same.
        let again = try Store.open(store.files.folder, schema: schema, access: .read)
        #expect(again.table.count == imported + 1 && again.object(id: "c1")?.values[0] == .string("Bulk"))
    }

    /// The library chooses the path: a big input into a store that never held
    /// an object goes in bulk, from a file or from memory; the same input
    /// anywhere else is one staged transaction; the objects and history are
    /// the same either way.
    @Test func theImporterChoosesTheBulkPathOnlyForAStoreWithoutObjects() throws {
        var films = FilmInput(seed: 5)
        let input = films.make(faults: false)
        let file = TestFolders.make("importer-input") + "/films.json"
        try Data(input).write(to: URL(fileURLWithPath: file))
        var phases: [ImportPhase] = []
        var importer = EnvelopeImporter(author: "bulk")
        importer.progress = { phases.append($0) }
        let fromFile = try Store.open(TestFolders.make("importer-file"), schema: FilmSchema.schema, access: .write, options: Self.bulkOptions)
        guard case .bulk(let r) = try importer.importFile(file, into: fromFile) else { Issue.record("not in bulk from a file"); return }
        #expect(phases.first == .reading(bytes: input.count) && phases.last == .writing)
        var bytes = input
        let fromMemory = try Store.open(TestFolders.make("importer-memory"), schema: FilmSchema.schema, access: .write, options: Self.bulkOptions)
        guard case .bulk = try importer.importBytes(&bytes, into: fromMemory) else { Issue.record("not in bulk from memory"); return }
        #expect(bytes.isEmpty, "the input's memory is given up once read")
        // A store that holds an object takes the same input as a transaction.
        let holding = try Store.open(TestFolders.make("importer-holding"), schema: FilmSchema.schema, access: .write)
        var one = Array(#"[{"type":"Studio","id":"zz-studio","data":{"name":"S"}}]"#.utf8)
        guard case .committed = try importer.importBytes(&one, into: holding) else { Issue.record("one object not committed"); return }
        phases = []
        guard case .committed(let t) = try importer.importFile(file, into: holding) else { Issue.record("not a transaction"); return }
        #expect(phases.contains(.linking(objects: fromFile.table.count)) && !phases.contains(.reading(bytes: input.count)))
        #expect(t.changes.count == fromFile.table.count && r.inserted.reduce(0) { $0 + $1.count } == fromFile.table.count)
        for store in [fromMemory, holding] {
            for row in fromFile.table.rowsSortedByID() {
                let o = try #require(fromFile.table.object(at: row))
                #expect(store.object(id: o.id).map { $0.values.count } == o.values.count, "\(o.id)")
            }
        }
        // Nothing changes the second time in skip-existing mode; an unreadable file is an I/O error, naming it.
        importer.mode = .skipExisting
        guard case .unchanged = try importer.importFile(file, into: holding) else { Issue.record("changed again"); return }
        #expect(throws: IOError.self) { try importer.importFile(file + ".missing", into: holding) }
    }
}
