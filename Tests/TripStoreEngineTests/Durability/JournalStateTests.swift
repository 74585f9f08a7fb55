import Foundation
import Testing
@testable import TripStoreCore
import TripStoreJSON
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// The journal's replay state (`journal-<token>.state`): an open that takes
/// the rows it holds answers exactly as one that replays the journal, and
/// a state that is damaged, cut short, missing or bound to another journal
/// changes no answer.
@Suite struct JournalStateTests {
    let schema = TripSchema.schema

    /// Options under which nothing folds the journal during a test.
    static var noFold: StoreOptions {
        var o = StoreOptions()
        o.snapshotAfterTransactions = 1_000_000
        o.snapshotAfterBytes = 1 << 30
        o.snapshotWhenJournalOutgrowsSnapshotAfter = 1 << 30
        return o
    }

    /// A store with an image and `count` one-trip renames in its journal,
    /// committed by writers that each make `perWriter` of them.
    func renamed(_ count: Int, perWriter: Int, seed: UInt64 = 5) throws -> (folder: String, statePath: String) {
        let folder = try SnapshotImageTests().makeStore()
        var random = SplitMix64(seed: seed)
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        var done = 0
        while done < count {
            let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
            let trips = try w.run(try Query("is Trip")).rows
            for _ in 0..<min(perWriter, count - done) {
                var change = w.transaction()
                change.setAttribute(trips[Int(random.next() % UInt64(trips.count))], slot: name, to: .string("renamed \(done)"))
                try w.commit(change, author: "test", timestamp: 1_800_001_000 + Double(done))
                done += 1
            }
            w.close()
        }
        let store = try Store.open(folder, schema: schema, access: .read)
        return (folder, store.journalStatePath)
    }

    func open(_ folder: String, state: Bool = true, image: Bool = true) throws -> Store {
        var o = StoreOptions()
        o.useJournalState = state
        o.useSnapshotImage = image
        return try Store.open(folder, schema: schema, access: .read, options: o)
    }

    /// Every row, every query of the name index and the history read the
    /// same from `store` as from a replay of the journal and from the JSON.
    func expectSameAnswers(_ store: Store, _ folder: String, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let replayed = try open(folder, state: false), json = try open(folder, image: false)
        // By id: a writer's table numbers the rows of objects made and deleted in one transaction, a replay does not.
        let objects = Self.objectsByID(replayed)
        #expect(Self.objectsByID(store) == objects, sourceLocation: sourceLocation)
        #expect(Self.objectsByID(json) == objects, sourceLocation: sourceLocation)
        for query in ["name ^= \"renamed\"", "name == \"renamed 3\"", "is BusinessTrip && name ^= \"renamed 1\"", "is Trip", "is PersonalTrip"] {
            let q = try Query(query)
            #expect(try store.run(q).rows.map(store.table.id) == replayed.run(q).rows.map(replayed.table.id), "\(query)",
                    sourceLocation: sourceLocation)
            #expect(try store.run(q).rows.count == json.run(q).rows.count, "\(query)", sourceLocation: sourceLocation)
        }
        for e in schema.entities.indices {
            #expect(store.indexes.rows(of: e).map(store.table.id) == replayed.indexes.rows(of: e).map(replayed.table.id),
                    "\(schema.entities[e].name)", sourceLocation: sourceLocation)
            #expect(store.table.countByEntity[e] == json.table.countByEntity[e], sourceLocation: sourceLocation)
        }
        // What is known without reading the journal's transactions, then the transactions.
        #expect(store.lastToken == json.lastToken, sourceLocation: sourceLocation)
        #expect(try store.lastCommitTime() == json.lastCommitTime(), sourceLocation: sourceLocation)
        #expect(store.oldestRetainedToken == json.oldestRetainedToken, sourceLocation: sourceLocation)
        #expect(store.historyCount == json.historyCount, sourceLocation: sourceLocation)
        #expect(store.history == json.history, sourceLocation: sourceLocation)
        #expect(store.imageDamage == nil, sourceLocation: sourceLocation)
    }

    /// Every live object, by id: its type and values, relationships as the ids they hold.
    static func objectsByID(_ store: Store) -> [String: String] {
        var out: [String: String] = [:]
        for row in store.rowsInIDOrder() {
            guard let o = store.table.object(at: row) else { continue }
            let values = o.values.map { v -> String in
                switch v {
                case .toOne(let r): return "-> \(store.table.id(at: r) ?? "?")"
                case .toMany(let l): return "->> \(l.map { store.table.id(at: $0) ?? "?" })"
                default: return "\(v)"
                }
            }
            out[o.id] = "\(o.entity) \(values)"
        }
        return out
    }

    @Test func anOpenTakesTheRowsOfTheStateAndAnswersAsAReplay() throws {
        // The second writer reads the first one's state and appends to it.
        let (folder, state) = try renamed(40, perWriter: 20)
        #expect(FileIO.exists(state))
        let store = try open(folder)
        #expect(store.journalStateLines == 40)
        try expectSameAnswers(store, folder)
        // With every piece of the image checked at open, the rows are the state's all the same.
        var atOpen = StoreOptions()
        atOpen.imageChecks = .atOpen
        let checked = try Store.open(folder, schema: schema, access: .read, options: atOpen)
        #expect(checked.journalStateLines == 40)
        try expectSameAnswers(checked, folder)
        // A writer's commit after lines it has not read as transactions yet: history keeps their order.
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        #expect(w.journalStateLines == 40)
        var change = w.transaction()
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        change.setAttribute(try #require(w.run(try Query("is Trip")).rows.first), slot: name, to: .string("renamed 40"))
        let t = try #require(try w.commit(change, author: "test", timestamp: 1_800_009_000))
        #expect(w.history.suffix(2).map(\.token) == [t.token - 1, t.token])
        #expect(try w.history(after: t.token - 3).map(\.token) == [t.token - 2, t.token - 1, t.token])
        w.close()
        try expectSameAnswers(try open(folder), folder)
    }

    /// Renames after `first` (a transaction made on the writer), by one
    /// writer; the open afterwards, its answers checked against a replay and the JSON.
    func renamesAfter(_ first: (Store, inout TransactionBuilder) throws -> Void) throws -> Store {
        let (folder, _) = try renamed(5, perWriter: 5)
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        var change = w.transaction()
        try first(w, &change)
        try w.commit(change, author: "test", timestamp: 1_800_002_000)
        let trips = try w.run(try Query("is Trip")).rows
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        for k in 0..<(JournalState.rewriteAfterLines + 4) {
            var change = w.transaction()
            change.setAttribute(trips[k], slot: name, to: .string("renamed \(k)"))
            try w.commit(change, author: "test", timestamp: 1_800_002_001 + Double(k))
        }
        w.close()
        let store = try open(folder)
        try expectSameAnswers(store, folder)
        return store
    }

    /// Inserts, relationships set and taken out, objects made and deleted in
    /// one transaction, deletes that change the lists of the objects that
    /// stay: every line is covered, and the open takes none of them by replay.
    @Test(arguments: ["insert", "relationship", "made and deleted", "personal trip"])
    func everyKindOfLineIsCovered(_ kind: String) throws {
        let store = try renamesAfter { w, change in
            let members = try #require(schema.entity(named: "PersonalTrip")?.property(named: "familyMembers")).slot
            let personal = try #require(w.run(try Query("is PersonalTrip")).rows.first { !w.table.value(at: $0, slot: members).rows.isEmpty }
                .flatMap(w.table.id))
            switch kind {
            case "insert":
                let item = try change.insert("BucketListItem", values: ["title": .string("new"), "isCompleted": .bool(false)])
                try change.link(item, "trip", to: personal)
                try change.link(try change.insert("FamilyMember", values: ["name": .string("new")]), "trips", to: personal)
            case "relationship":
                let items = try #require(schema.entities.firstIndex { $0.name == "BucketListItem" })
                try change.delete(try #require(w.indexes.rows(of: items).first))
                let family = try #require(schema.entities.firstIndex { $0.name == "FamilyMember" })
                let member = try #require(w.indexes.rows(of: family).last.flatMap(w.table.id))
                try change.link(member, "trips", to: personal)
            case "made and deleted":
                try change.delete(id: try change.insert("BucketListItem", values: ["title": .string("gone"), "isCompleted": .bool(false)]))
                let kept = try change.insert("BucketListItem", values: ["title": .string("kept"), "isCompleted": .bool(true)])
                try change.link(kept, "trip", to: personal)
            default:
                try change.delete(id: personal)
            }
        }
        #expect(store.journalStateLines == 5 + 1 + JournalState.rewriteAfterLines + 4)
    }

    /// Random writes (fixed seeds) by writers one after another, each of a
    /// few lines: renames, inserts linked to trips, deletes of children,
    /// trips and family members, links and unlinks, objects made and
    /// deleted in one transaction, an id deleted and inserted again; now and
    /// then the state is lost before a writer. After each writer, the open
    /// takes every line from the state and answers as a replay and as the
    /// JSON do.
    @Test(arguments: [21, 22, 23] as [UInt64])
    func randomWritesAreCoveredAndAnswerAsAReplay(seed: UInt64) throws {
        let folder = try SnapshotImageTests().makeStore()
        var random = SplitMix64(seed: seed)
        func pick(_ rows: [RowID]) -> RowID? { rows.isEmpty ? nil : rows[Int(random.next() % UInt64(rows.count))] }
        let types = Dictionary(uniqueKeysWithValues: schema.entities.map { ($0.name, $0.id) })
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        var deletedIDs: [String] = [], time = 1_800_010_000.0, lines = 0
        for round in 0..<10 {
            // Now and then the state is lost: the next writer replays the
            // journal and, past 16 lines not covered, writes the state anew from its table.
            let lost = round % 4 == 3
            if lost { FileIO.unlink(try open(folder).journalStatePath) }
            let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
            for _ in 0..<(1 + Int(random.next() % 12)) {
                var change = w.transaction()
                let trips = try w.run(try Query("is Trip")).rows, personal = try w.run(try Query("is PersonalTrip")).rows
                let items = w.indexes.rows(of: types["BucketListItem"]!), family = w.indexes.rows(of: types["FamilyMember"]!)
                let id = { (row: RowID?) in row.flatMap(w.table.id) }
                do {
                    switch random.next() % 9 {
                    case 0: if let t = pick(trips) { change.setAttribute(t, slot: name, to: .string("renamed \(random.next() % 100)")) }
                    case 1:
                        let item = try change.insert("BucketListItem", values: ["title": .string("new"), "isCompleted": .bool(false)])
                        if let t = id(pick(trips)) { try change.link(item, "trip", to: t) }
                    case 2: if let i = pick(items) { deletedIDs += [id(i)].compactMap { $0 }; try change.delete(i) }
                    case 3: if let t = pick(trips) { try change.delete(t) }
                    case 4:
                        let member = try change.insert("FamilyMember", values: ["name": .string("member")])
                        if let t = id(pick(personal)) { try change.link(member, "trips", to: t) }
                    case 5: if let m = id(pick(family)), let t = id(pick(personal)) { try change.link(m, "trips", to: t) }
                    case 6:
                        if let m = pick(family), let t = w.table.value(at: m, slot: try #require(schema.entity(named: "FamilyMember")?
                            .property(named: "trips")).slot).rows.first, let mid = id(m), let tid = id(t) {
                            try change.unlink(mid, "trips", from: tid)
                        }
                    case 7:
                        try change.delete(id: try change.insert("BucketListItem", values: ["title": .string("gone"), "isCompleted": .bool(false)]))
                        if let f = pick(family) { try change.delete(f) }
                    default:
                        if let again = deletedIDs.popLast() {
                            try change.insert("BucketListItem", id: again, values: ["title": .string("again"), "isCompleted": .bool(true)])
                        }
                    }
                    time += 1
                    if try w.commit(change, author: "test", timestamp: time) != nil { lines += 1 }
                } catch is StoreError {
                    continue  // a delete a deny rule refuses
                }
            }
            w.close()
            let store = try open(folder)
            if !lost || lines > JournalState.rewriteAfterLines { #expect(store.journalStateLines == lines) }
            try expectSameAnswers(store, folder)
        }
    }

    /// A delete of objects the image holds, with all that the delete rules
    /// take with them (a trip and its children), is covered: the open takes it from the state.
    @Test func deletesOfImageObjectsAreCovered() throws {
        var deleted = ""
        let store = try renamesAfter { w, change in
            let trip = try #require(w.run(try Query("is Trip")).rows.last)
            deleted = try #require(w.table.id(at: trip))
            try change.delete(trip)
        }
        #expect(store.journalStateLines == 5 + 1 + JournalState.rewriteAfterLines + 4)
        #expect(store.row(forID: deleted) == nil)
        // The writer after it appends to the state, and deletes the next trip too.
        let w = try Store.open(store.files.folder, schema: schema, access: .write, options: Self.noFold)
        var change = w.transaction()
        try change.delete(try #require(w.run(try Query("is Trip")).rows.first))
        try w.commit(change, author: "test", timestamp: 1_800_003_000)
        w.close()
        let after = try open(store.files.folder)
        #expect(after.journalStateLines == store.journalStateLines + 1)
        try expectSameAnswers(after, store.files.folder)
    }

    /// A state whose frames name a row after they delete it (forged, with
    /// good checksums: a row of the image is never used again) is not taken.
    @Test func aStateThatNamesARowAfterItsDeleteIsNotTaken() throws {
        let store = try renamesAfter { w, change in try change.delete(try #require(w.run(try Query("is Trip")).rows.last)) }
        let statePath = store.journalStatePath
        var bytes = try FileIO.readFile(statePath)
        let read = bytes.withUnsafeBytes { JournalStateFormat.frames($0, imageRows: store.table.baseRows, imageLists: store.table.lists.mappedCount,
                                   entities: schema.entities.count) }
        let deleted = try #require(read.records.first { $0.count == 0 })
        // The last frame's record (a rename, after the delete) names the deleted row instead.
        let last = try #require(read.frames.last)
        let recordAt = try #require(read.records[last.records].first).offset - JournalStateFormat.recordHeaderBytes
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(deleted.row).littleEndian, toByteOffset: recordAt, as: UInt32.self) }
        let payloadAt = last.fileEnd - Int(bytes.withUnsafeBytes { $0.loadLE(UInt32.self, at: recordAt - JournalStateFormat.payloadHeaderBytes - 8) })
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadAt..<last.fileEnd])) }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: payloadAt - 4, as: UInt32.self) }
        try Data(bytes).write(to: URL(fileURLWithPath: statePath))
        let forged = try open(store.files.folder)
        #expect(forged.journalStateLines == 0)
        try expectSameAnswers(forged, store.files.folder)
    }

    /// A state whose last frame says the table has one row or one list more
    /// than its frames hold (forged, with good checksums) is not taken: a
    /// reader adds rows past the image's only when it has every one of them.
    @Test(arguments: [32, 36])
    func aStateThatLeavesOutARowOrAListItCountsIsNotTaken(_ countAt: Int) throws {
        let store = try renamesAfter { w, change in
            let item = try change.insert("BucketListItem", values: ["title": .string("new"), "isCompleted": .bool(false)])
            try change.link(item, "trip", to: try #require(w.run(try Query("is Trip")).rows.first.flatMap(w.table.id)))
        }
        #expect(store.journalStateLines > 0)
        var bytes = try FileIO.readFile(store.journalStatePath)
        let frames = bytes.withUnsafeBytes {
            JournalStateFormat.frames($0, imageRows: store.table.baseRows, imageLists: store.table.lists.mappedCount, entities: schema.entities.count).frames
        }
        let payloadAt = (frames.dropLast().last?.fileEnd ?? JournalStateFormat.headerBytes) + JournalStateFormat.frameHeaderBytes
        let count = bytes.withUnsafeBytes { $0.loadLE(UInt32.self, at: payloadAt + countAt) }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: (count + 1).littleEndian, toByteOffset: payloadAt + countAt, as: UInt32.self) }
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadAt..<frames[frames.count - 1].fileEnd])) }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: payloadAt - 4, as: UInt32.self) }
        try Data(bytes).write(to: URL(fileURLWithPath: store.journalStatePath))
        let forged = try open(store.files.folder)
        #expect(forged.journalStateLines == 0)
        try expectSameAnswers(forged, store.files.folder)
    }

    /// A store whose state fell behind by more lines than a writer leaves
    /// uncovered, and then one more commit, which writes it anew.
    func stateWrittenAnew() throws -> String {
        let (folder, state) = try renamed(JournalState.rewriteAfterLines + 4, perWriter: 100)
        FileIO.unlink(state)
        #expect(try open(folder).journalStateLines == 0)
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        var change = w.transaction()
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        change.setAttribute(try #require(w.run(try Query("is Trip")).rows.first), slot: name, to: .string("renamed again"))
        try w.commit(change, author: "test", timestamp: 1_800_003_000)
        w.close()
        return folder
    }

    @Test func aWriterWritesAStateThatFellBehindAnew() throws {
        let folder = try stateWrittenAnew()
        let store = try open(folder)
        #expect(store.journalStateLines == JournalState.rewriteAfterLines + 5)
        try expectSameAnswers(store, folder)
    }

    /// A state written anew covers many lines in one frame: every one of
    /// them is bound, so a line edited and sealed again (an edit of the
    /// JSON, or a journal restored from another copy) is replayed, never hidden.
    @Test func aStateWrittenAnewIsBoundToEveryLineItCovers() throws {
        let folder = try stateWrittenAnew()
        #expect(try open(folder).journalStateLines == JournalState.rewriteAfterLines + 5)
        // The third line's new name changed, the same length, its checksum sealed again.
        let before = try open(folder)
        let journal = before.files.journal(before.snapshotToken)
        var lines = try FileIO.readFile(journal).split(separator: 0x0A).map(Array.init)
        var text = String(decoding: lines[2], as: UTF8.self)
        let at = try #require(text.range(of: "\"new\":\"renamed 2\""))
        text.replaceSubrange(at, with: "\"new\":\"renamed Z\"")
        let body = Array(text.utf8).prefix(lines[2].count - JournalFormat.checksumSuffixLength)
        lines[2] = Array(JournalFormat.seal(Array(body) + Array("}".utf8)).dropLast())
        try Data(lines.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: journal))
        let store = try open(folder)
        #expect(store.journalStateLines == 0)
        try expectSameAnswers(store, folder)
        #expect(store.history.contains { $0.changes.contains { $0.values.contains { $0.new == .string("renamed Z") } } })
    }

    @Test func theStateIsBoundToTheJournalItCovers() throws {
        let (folder, _) = try renamed(30, perWriter: 30)
        let store = try open(folder)
        let journal = store.files.journal(store.snapshotToken)
        var bytes = try FileIO.readFile(journal)
        // The journal without its last line (as a copy restored from before
        // it was written, or copied before the state while a writer ran):
        // the state records a transaction the journal lacks. A reader
        // answers without it and says so; a writer refuses, so that no
        // commit takes its token again.
        let state = try FileIO.readFile(store.journalStatePath)
        bytes.removeLast()
        bytes.removeSubrange(((bytes.lastIndex(of: 0x0A) ?? -1) + 1)...)
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        func isMissingLast(_ detail: String) -> Bool {
            detail.contains("transaction \(store.lastToken) is not in it") && detail.contains("up to token \(store.lastToken - 1)")
                && detail.contains("delete journal-")
        }
        let shorter = try open(folder)
        #expect(shorter.lastToken == store.lastToken - 1)
        #expect(shorter.warnings.contains { if case .journalBehindState(journal, let d) = $0 { isMissingLast(d) } else { false } })
        try expectSameAnswers(shorter, folder)
        #expect { try Store.open(folder, schema: schema, access: .write) } throws: { error in
            guard case StoreError.damaged(let file, _, let detail, _) = error else { return false }
            return file == journal && isMissingLast(detail)
        }
        // Deleting the state (a cache) is the way on without it.
        FileIO.unlink(store.journalStatePath)
        #expect(try open(folder).warnings.isEmpty)
        try Store.open(folder, schema: schema, access: .write).close()
        try Data(state).write(to: URL(fileURLWithPath: store.journalStatePath))
        // So with no journal at all: every transaction after the snapshot.
        FileIO.unlink(journal)
        let none = try open(folder)
        #expect(none.lastToken == none.snapshotToken)
        #expect(none.warnings.contains { if case .journalBehindState(_, let d) = $0 { d.hasPrefix("it is missing") && d.contains("transactions \(none.snapshotToken + 1) to \(store.lastToken) are") } else { false } })
        #expect(throws: StoreError.self) { try Store.open(folder, schema: schema, access: .write) }
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        // A journal whose last covered line is another (the same length, another checksum) binds nothing after it.
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false)
        let tenth = lines.prefix(10).reduce(0) { $0 + $1.count + 1 }
        bytes[tenth - 3] = bytes[tenth - 3] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        try Data(bytes).write(to: URL(fileURLWithPath: journal))
        // (The line's own checksum fails too: the journal is damaged, and says so, with or without the state.)
        #expect(throws: StoreError.self) { try open(folder) }
        #expect(throws: StoreError.self) { try open(folder, state: false) }
    }

    /// A copy of the store that went on with other commits: the first
    /// store's state, put beside the copy's journal, stops binding where the
    /// two part (the copy's line there longer than the first store's, or
    /// shorter and its last). It is another journal's state, not a sign of
    /// lost lines.
    @Test(arguments: [true, false])
    func theStateOfACopyThatWentOnOtherwiseIsNoLoss(copysLineIsLonger: Bool) throws {
        let (folder, _) = try renamed(10, perWriter: 10)
        let copy = folder + "-copy"
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        func rename(_ folder: String, _ names: [String]) throws {
            let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
            defer { w.close() }
            let trip = try #require(w.run(try Query("is Trip")).rows.first)
            for n in names {
                var change = w.transaction()
                change.setAttribute(trip, slot: name, to: .string(n))
                try w.commit(change, author: "test", timestamp: 1_800_002_000)
            }
        }
        let long = String(repeating: "other ", count: 20)
        try rename(folder, copysLineIsLonger ? ["a", "b", "c"] : [long, "b", "c"])
        try rename(copy, [copysLineIsLonger ? long : "a"])
        let original = try open(folder)
        try FileIO.readFile(original.journalStatePath).withUnsafeBytes { try Data($0).write(to: URL(fileURLWithPath: original.journalStatePath.replacingOccurrences(of: folder, with: copy))) }
        let opened = try open(copy)
        #expect(!opened.warnings.contains { if case .journalBehindState = $0 { true } else { false } })
        try expectSameAnswers(opened, copy)
        try Store.open(copy, schema: schema, access: .write).close()
    }

    /// Bit flips, cuts, bytes appended and headers of another store: every
    /// open answers as the replay does.
    @Test func aDamagedStateChangesNoAnswer() throws {
        let (folder, state) = try renamed(30, perWriter: 30)
        let good = try FileIO.readFile(state)
        var rng = RandomQueries(state: 6_161)
        for k in 0..<(ReaderFuzzTests.cases / 8) {
            var bytes = good
            switch k % 4 {
            case 0:
                for _ in 0..<(1 + rng.int(4)) { bytes[rng.int(bytes.count)] ^= UInt8(1 << rng.int(8)) }
            case 1:
                bytes.removeSubrange(rng.int(bytes.count)...)
            case 2:
                bytes += (0..<(1 + rng.int(64))).map { _ in UInt8(rng.int(256)) }
            default:
                // The header of another snapshot: nothing binds.
                bytes[8 + 8 + rng.int(JournalStateFormat.headerBytes - 16)] ^= 1
            }
            try Data(bytes).write(to: URL(fileURLWithPath: state))
            let store = try open(folder)
            #expect(store.journalStateLines <= 30)
            try expectSameAnswers(store, folder)
        }
        FileIO.unlink(state)
        let store = try open(folder)
        #expect(store.journalStateLines == 0)
        try expectSameAnswers(store, folder)
    }

    /// The state's frame parser and the open that takes it, fuzzed past the
    /// frames' checksums (fixed seed): a state holding new rows and lists,
    /// random bytes of its payloads changed and every frame sealed again.
    /// A state that is not taken answers as the journal; one that is (a
    /// forgery) may answer otherwise, or warn that the journal lost lines,
    /// but every row, query and history still reads without a crash.
    @Test func aSealedFuzzedStateNeverCrashesTheOpen() throws {
        let store = try renamesAfter { w, change in
            let trip = try #require(w.run(try Query("is PersonalTrip")).rows.first.flatMap(w.table.id))
            try change.link(try change.insert("BucketListItem", values: ["title": .string("new"), "isCompleted": .bool(false)]), "trip", to: trip)
            try change.link(try change.insert("FamilyMember", values: ["name": .string("new")]), "trips", to: trip)
            try change.delete(try #require(w.run(try Query("is BusinessTrip")).rows.last))
        }
        let folder = store.files.folder, path = store.journalStatePath
        let good = try FileIO.readFile(path)
        var frameStarts: [Int] = []
        var at = JournalStateFormat.headerBytes
        while at < good.count {
            frameStarts.append(at)
            at += JournalStateFormat.frameHeaderBytes + Int(good.withUnsafeBytes { $0.loadLE(UInt32.self, at: at) })
        }
        var rng = RandomQueries(state: 7_331)
        for _ in 0..<(ReaderFuzzTests.cases / 8) {
            var bytes = good
            for _ in 0..<(1 + rng.int(4)) {
                // A payload byte (never a frame's length or checksum).
                let f = frameStarts[rng.int(frameStarts.count)] + JournalStateFormat.frameHeaderBytes
                let length = Int(bytes.withUnsafeBytes { $0.loadLE(UInt32.self, at: f - JournalStateFormat.frameHeaderBytes) })
                bytes[f + rng.int(length)] ^= UInt8(1 << rng.int(8))
            }
            for f in frameStarts {
                let p = f + JournalStateFormat.frameHeaderBytes
                let length = Int(bytes.withUnsafeBytes { $0.loadLE(UInt32.self, at: f) })
                let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[p..<(p + length)])) }
                bytes.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: f + 4, as: UInt32.self) }
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            // (A forged frame may say the journal held more than it does: the open answers from the journal, and warns.)
            let opened = try open(folder)
            for row in opened.rowsInIDOrder() { _ = opened.table.object(at: row) }
            for e in schema.entities.indices { _ = opened.indexes.rows(of: e) }
            _ = try opened.run(try Query("name ^= \"renamed\""))
            _ = opened.history
            if opened.journalStateLines == 0 { try expectSameAnswers(opened, folder) }
        }
    }

    /// A state forged with good checksums: its first frame's first record
    /// changed by `edit` (given the record's offset), the frame sealed again.
    func forgedState(_ edit: (inout [UInt8], _ recordAt: Int, _ store: Store, _ first: (row: Int, entity: Int)) throws -> Void)
        throws -> (folder: String, fooled: Store) {
        let (folder, state) = try renamed(3, perWriter: 3)
        let bytes = try FileIO.readFile(state)
        let store = try open(folder)
        let frames = bytes.withUnsafeBytes {
            JournalStateFormat.frames($0, imageRows: store.table.baseRows, imageLists: store.table.lists.mappedCount,
                                     entities: schema.entities.count)
        }
        let first = try #require(frames.frames.first.flatMap { frames.records[$0.records].first })
        var forged = bytes
        let payloadAt = JournalStateFormat.headerBytes + JournalStateFormat.frameHeaderBytes
        try edit(&forged, payloadAt + JournalStateFormat.payloadHeaderBytes, store, (first.row, first.entity))
        let length = Int(forged.withUnsafeBytes { $0.loadLE(UInt32.self, at: JournalStateFormat.headerBytes) })
        let crc = forged.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payloadAt..<(payloadAt + length)])) }
        forged.withUnsafeMutableBytes { $0.storeBytes(of: crc.littleEndian, toByteOffset: payloadAt - 4, as: UInt32.self) }
        try Data(forged).write(to: URL(fileURLWithPath: state))
        let fooled = try open(folder)
        #expect(fooled.journalStateLines == 3)
        return (folder, fooled)
    }

    /// Naming a row of another type: the image's checks of that row's unit
    /// find it, and the open answers from the JSON.
    @Test func aForgedStateNamingAnotherTypesRowIsDamage() throws {
        var other = 0
        let (_, fooled) = try forgedState { bytes, at, store, first in
            // Another row, of another entity, with the first record's bytes.
            other = try #require((0..<store.table.baseRows).first { store.table.entity(at: RowID($0)) != first.entity })
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: UInt32(other).littleEndian, toByteOffset: at, as: UInt32.self) }
        }
        _ = fooled.table.object(at: RowID(other))
        #expect(fooled.imageDamage != nil)
        // The library's open answers from the JSON once it has met damage.
        let again = try fooled.reopenedFromJSON()
        #expect(again.imageDamage == nil && !again.loadedFromImage)
    }

    /// A record whose bytes are not a record of its entity (a value's tag
    /// that no value has): found when the table takes it, before anything reads it.
    @Test func aForgedRecordOutsideItsBoundsIsDamage() throws {
        var row = 0
        let (_, fooled) = try forgedState { bytes, at, _, first in
            row = first.row
            let count = Int(bytes.withUnsafeBytes { $0.loadLE(UInt32.self, at: at + 6) })
            bytes[at + JournalStateFormat.recordHeaderBytes + count - 1] = 0xEE
        }
        _ = fooled.table.entity(at: RowID(row)).map { _ in fooled.table.object(at: RowID(row)) }
        #expect(fooled.imageDamage != nil)
    }

    /// A store that folds in its own process keeps no state for the new
    /// journal (its rows are the old image's); its close writes one.
    @Test func aWriterThatFoldedWritesTheStateAsItCloses() throws {
        let (folder, _) = try renamed(5, perWriter: 5)
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        try w.compact()
        let trips = try w.run(try Query("is Trip")).rows
        let name = try #require(schema.entity(named: "Trip")?.property(named: "name")).slot
        for k in 0..<(JournalState.rewriteAfterLines + 3) {
            var change = w.transaction()
            change.setAttribute(trips[k * 7 % trips.count], slot: name, to: .string("renamed \(k)"))
            try w.commit(change, author: "test", timestamp: 1_800_004_000 + Double(k))
        }
        #expect(w.journal.state == nil)
        w.close()
        let store = try open(folder)
        #expect(store.journalStateLines == JournalState.rewriteAfterLines + 3)
        try expectSameAnswers(store, folder)
    }

    @Test func aFoldLeavesNoStateBehind() throws {
        let (folder, state) = try renamed(10, perWriter: 10)
        #expect(FileIO.exists(state))
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        try w.compact()
        w.close()
        #expect(!FileIO.exists(state))
        #expect(w.files.journalStateTokens().isEmpty)
        let store = try open(folder)
        #expect(store.journalStateLines == 0)
    }

    /// An open takes the covered lines without keeping the journal in
    /// memory: their history is read later through the descriptor it kept,
    /// so a fold by another writer meanwhile (which removes the file) changes none of it.
    @Test func coveredLinesAreReadThroughTheOpensDescriptorAfterAFoldRemovesTheJournal() throws {
        let (folder, _) = try renamed(30, perWriter: 10)
        let expected = try open(folder, state: false).history
        let store = try open(folder)
        #expect(store.journalStateLines == 30)
        let journal = store.files.journal(store.snapshotToken)
        let w = try Store.open(folder, schema: schema, access: .write, options: Self.noFold)
        try w.compact()
        w.close()
        #expect(!FileIO.exists(journal))
        #expect(store.history == expected)
        #expect(expected.suffix(30).map(\.author) == Array(repeating: "test", count: 30))
    }

    /// The checksums an open binds the state by, read a piece at a time,
    /// are those of the bytes in memory, for ranges across and within
    /// pieces; the results stop at a range that is empty, overlaps the one
    /// before or runs past the file.
    @Test func aJournalsRangesAreChecksummedAsTheirBytesAre() throws {
        var random = SplitMix64(seed: 61)
        let bytes = (0..<(JournalFile.pieceBytes * 2 + 12_345)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
        let path = NSTemporaryDirectory() + "journal-file-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { FileIO.unlink(path) }
        let file = try JournalFile(path: path)
        #expect(file.size == bytes.count)
        for _ in 0..<20 {
            var ends = (0..<Int(random.next() % 12 + 1)).map { _ in Int(random.next() % UInt64(bytes.count)) + 1 }
            ends = Array(Set(ends)).sorted()
            var start = Int(random.next() % UInt64(ends[0]))
            var ranges: [Range<Int>] = []
            for e in ends {
                ranges.append(start..<e)
                start = e + (random.next() % 2 == 0 ? 0 : Int(random.next() % 100))
                if start >= bytes.count { break }
            }
            ranges = ranges.filter { !$0.isEmpty }
            let sums = file.checksums(ranges)
            #expect(sums.count == ranges.count)
            for (r, sum) in zip(ranges, sums) {
                #expect(sum.crc == bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[r])) })
                #expect(sum.last == bytes[r.upperBound - 1])
            }
            #expect(try file.read(ranges[0]) == Array(bytes[ranges[0]]))
        }
        #expect(file.checksums([0..<10, 10..<10, 10..<20]).count == 1)
        #expect(file.checksums([0..<10, 5..<20]).count == 1)
        #expect(file.checksums([0..<10, 10..<(bytes.count + 1)]).count == 1)
        #expect(file.checksums([]).isEmpty)
        // Past the end (a writer cut a torn tail since the open): the bytes there are.
        #expect(try file.read(0..<(bytes.count + 1)).count == bytes.count)
        #expect(file.readWhole(0..<(bytes.count + 1)) == nil)
        #expect(truncate(path, off_t(bytes.count / 2)) == 0)
        #expect(try file.read(10..<bytes.count).count == bytes.count / 2 - 10)
        #expect(file.readWhole(10..<20) == Array(bytes[10..<20]))
        #expect(file.checksums([0..<10, 10..<bytes.count]).count == 1)
    }

    /// A frame found unsound partway through its records and lists adds
    /// none of them to what was read, and ends the frames taken: each
    /// frame's records and lists are the ones it holds, in the arrays all
    /// frames share.
    @Test func aFrameUnsoundAfterItsFirstRecordsAddsNoneOfThem() throws {
        let binding = JournalStateFormat.Binding(token: 7, snapshotBytes: 100, snapshotCRC: 1, fingerprint: [1, 2], rows: 10)
        let record: [UInt8] = [1, 2, 3, 4]
        func frame(_ k: Int, listRow: RowID) -> [UInt8] {
            record.withUnsafeBytes { bytes in
                JournalStateFormat.frame(start: 10 * k, end: 10 * (k + 1), lines: 1, longestLine: 10, coveredCRC: 0, lastLineBytes: 10,
                                         rowsAfter: 10, listsAfter: 5, records: [(k + 1, 0, bytes), (k + 2, 1, bytes)],
                                         lists: [(3, [listRow])])
            }
        }
        func read(_ file: [UInt8]) -> JournalStateFormat.Frames {
            file.withUnsafeBytes { JournalStateFormat.frames($0, imageRows: 10, imageLists: 2, entities: 2) }
        }
        let sound = read(JournalStateFormat.header(binding) + frame(0, listRow: 4) + frame(1, listRow: 5))
        #expect(sound.frames.map(\.records) == [0..<2, 2..<4])
        #expect(sound.frames.map(\.lists) == [0..<1, 1..<2])
        #expect(sound.records.map(\.row) == [1, 2, 2, 3])
        // The second frame's list names a row past the frame's rows: its records were read before that.
        let unsound = read(JournalStateFormat.header(binding) + frame(0, listRow: 4) + frame(1, listRow: 10) + frame(2, listRow: 6))
        #expect(unsound.frames.count == 1)
        #expect(unsound.records.map(\.row) == [1, 2])
        #expect(unsound.lists.count == 1)
    }

    /// The bytes of a state as an open read them stay the file it opened
    /// when a writer replaces or removes it meanwhile (they may be mapped).
    @Test func aStatesBytesAsReadOutliveTheFileReplaced() throws {
        let path = NSTemporaryDirectory() + "state-bytes-\(UUID().uuidString)"
        let first = (0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(first).write(to: URL(fileURLWithPath: path))
        defer { FileIO.unlink(path) }
        let fd = try FileIO.openRegular(path)
        let bytes = try #require(StateFileBytes.read(fd, size: first.count))
        FileIO.close(fd)
        #expect(StateFileBytes.read(fd, size: 0) == nil)
        FileIO.unlink(path)
        try Data(repeating: 0xEE, count: 300).write(to: URL(fileURLWithPath: path))
        #expect(bytes.withUnsafeBytes { Array($0) } == first)
    }

    /// A journal's lines read through the small buffer are the lines of
    /// its bytes read whole: lines longer than the buffer, lines that cross
    /// it, blank lines, CRLF ends, no final newline, a file cut meanwhile.
    @Test(arguments: [62, 63, 64] as [UInt64])
    func aJournalsLinesReadThroughTheBufferAreItsLines(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        var bytes: [UInt8] = []
        while bytes.count < JournalFile.pieceBytes * 3 {
            switch random.next() % 8 {
            case 0: bytes += [0x0A]
            case 1: bytes += [0x20, 0x09, 0x0A]
            case 2: bytes += Array(repeating: UInt8(ascii: "x"), count: JournalFile.pieceBytes + Int(random.next() % 999)) + [0x0D, 0x0A]
            default: bytes += (0..<Int(random.next() % 3_000)).map { _ in UInt8(truncatingIfNeeded: random.next() % 200 + 20) } + [0x0A]
            }
        }
        if seed % 2 == 0 { bytes += Array("no newline".utf8) }
        let path = NSTemporaryDirectory() + "journal-lines-\(UUID().uuidString)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        defer { FileIO.unlink(path) }
        let file = try JournalFile(path: path)
        func whole(_ end: Int) -> [String] {
            var out: [String] = []
            bytes.withUnsafeBufferPointer { all in
                let b = UnsafeBufferPointer(rebasing: all[0..<end])
                JSONLines.forEachLine(in: b) { n, r, complete in out.append("\(n) \(complete) \(Array(b[r]).hashValue) \(r.count)") }
            }
            return out
        }
        func buffered(_ end: Int) throws -> [String] {
            var out: [String] = []
            try file.forEachLine(upTo: end) { n, line, complete in out.append("\(n) \(complete) \(Array(line).hashValue) \(line.count)") }
            return out
        }
        #expect(try buffered(bytes.count) == whole(bytes.count))
        for _ in 0..<6 {
            let end = Int(random.next() % UInt64(bytes.count + 1))
            #expect(try buffered(end) == whole(end), "up to \(end)")
        }
        // Cut since the open: the lines there are, the last one not complete.
        let cut = bytes.count / 2
        #expect(truncate(path, off_t(cut)) == 0)
        #expect(try buffered(bytes.count) == whole(cut))
    }
}
