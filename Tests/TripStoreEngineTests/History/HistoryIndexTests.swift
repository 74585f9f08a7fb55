import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The snapshot's history index answers exactly what reading the whole
/// history answers (`HistoryFilter.apply` over `checkedHistory`, the
/// reference), for stores aged by random writes, bulk changes, deletes,
/// redactions, prunes and compactions; and a damaged, foreign or missing
/// index changes no answer.
@Suite struct HistoryIndexTests {
    /// A store aged at random (fixed seed), compacted so that most of its
    /// history is in the snapshot and some in the journal; its folder.
    func agedStore(seed: UInt64, journalSteps: Int = 0) throws -> String {
        let folder = TestFolders.make("history-index")
        var store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        defer { store.close() }
        var random = SplitMix64(seed: seed)
        var time = 1_790_000_000.0
        func commit(_ author: String, _ body: (inout TransactionBuilder) throws -> Void) throws {
            var tx = store.transaction()
            try body(&tx)
            time += Double(random.next() % 5)  // some share a time
            try store.commit(tx, author: author, timestamp: time)
        }
        var data = TripDataGenerator(seed: seed)
        let input = data.jsonArray(trips: 40)
        try commit("import") { tx in try store.stage(try EnvelopeInput.decode(input, schema: store.schema), mode: .insert, into: &tx) }
        let authors = ["alice", "bob", "carol"]
        func step(_ step: Int, folds: Bool) throws {
            let trips = store.rowsInIDOrder().compactMap { store.object(at: $0) }.filter { store.schema.entities[$0.entity].name.hasSuffix("Trip") }
            let everything = store.rowsInIDOrder().compactMap { store.object(at: $0) }
            guard !trips.isEmpty else { return }
            let author = authors[Int(random.next() % 3)]
            switch random.next() % 10 {
            case 0...4:
                let t = trips[Int(random.next() % UInt64(trips.count))]
                try commit(author) { tx in try tx.set("name", of: t.id, to: .string("name \(step)")) }
            case 5:
                // A bulk change: every trip at once.
                try commit(author) { tx in for t in trips { try tx.set("destination", of: t.id, to: .string("place \(step)")) } }
            case 6, 7:
                let o = everything[Int(random.next() % UInt64(everything.count))]
                guard let row = store.table.row(for: o.id) else { return }
                // A delete that a deny rule refuses is skipped.
                try? commit(author) { tx in try tx.delete(row) }
            case 8 where folds:
                try store.compact()
            default:
                let o = everything[Int(random.next() % UInt64(everything.count))]
                // A redaction writes a snapshot: not in the journal's steps.
                if step % 3 == 0 && folds { _ = try Redactor(store).redact(ids: [o.id], author: author, timestamp: time + 1); time += 1 }
            }
        }
        for n in 0..<90 {
            try step(n, folds: true)
            if n == 60 { _ = try store.pruneHistory(before: store.lastToken / 4) }
        }
        try store.compact()
        for _ in 0..<5 {
            let t = store.rowsInIDOrder().compactMap { store.object(at: $0) }.first { store.schema.entities[$0.entity].name.hasSuffix("Trip") }
            if let t { try commit("dave") { tx in try tx.set("name", of: t.id, to: .string("after")) } }
        }
        // And every kind of line in the journal, read from its replay state
        // (see `HistoryLog.loaded(passing:)`), which a store opened from its image writes.
        if journalSteps > 0 {
            store.close()
            store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        }
        for n in 90..<(90 + journalSteps) { try step(n, folds: false) }
        if journalSteps > 0 {
            var tx = store.transaction()
            try store.stage(try EnvelopeInput.decode(data.jsonArray(trips: 3), schema: store.schema), mode: .insert, into: &tx)
            try store.commit(tx, author: "erin", timestamp: time + 1)
        }
        return folder
    }

    func overwrite(_ path: String, with bytes: [UInt8]) throws {
        let fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_TRUNC)
        defer { FileIO.close(fd) }
        try FileIO.writeAll(fd, bytes, path: path)
    }

    /// An aged store whose index a lookup built: its folder, the index's path and bytes.
    func indexedStore(seed: UInt64) throws -> (folder: String, path: String, good: [UInt8]) {
        let folder = try agedStore(seed: seed)
        try expectSameAnswers(folder, "built")
        let path = try open(folder).historyIndexPath
        return (folder, path, try FileIO.readFile(path))
    }

    /// Seals page `page` of `bytes` again, so that its checksum holds whatever it now says.
    func reseal(_ bytes: inout [UInt8], page: Int) {
        let range = (page * PagedFile.pageSize)..<((page + 1) * PagedFile.pageSize)
        var p = Array(bytes[range])
        PagedFile.seal(&p)
        bytes.replaceSubrange(range, with: p)
    }

    func open(_ folder: String) throws -> Store {
        try Store.open(folder, schema: TripSchema.schema, access: .read)
    }

    /// The questions asked of each store: by id (every id history knows),
    /// the delete audit with limits, authors, types, kinds, tokens, times.
    func filters(_ history: [HistoryTransaction]) -> [HistoryFilter] {
        var out: [HistoryFilter] = []
        let ids = Set(history.flatMap { $0.changes.map(\.id) }).sorted()
        for id in ids { out.append(HistoryFilter(id: id)) }
        for id in ids.prefix(5) {
            var f = HistoryFilter(id: id, kinds: [.update])
            f.limit = 1
            out.append(f)
        }
        out.append(HistoryFilter(id: "no-such-object"))
        for limit in [nil, 1, 3, 20] as [Int?] {
            var f = HistoryFilter(kinds: [.delete])
            f.limit = limit
            out.append(f)
            var g = HistoryFilter(author: "bob")
            g.limit = limit
            out.append(g)
            f.tombstonesOnly = true
            out.append(f)
            // The audit view: the limit counts deletes, a big transaction cut to its newest.
            f.limitCountsChanges = true
            out.append(f)
            var h = HistoryFilter(types: ["BusinessTrip"], kinds: [.delete])
            h.limit = limit
            h.limitCountsChanges = true
            out.append(h)
        }
        out.append(HistoryFilter(types: ["BusinessTrip", "PersonalTrip"]))
        out.append(HistoryFilter(kinds: [.redact, .update], author: "alice"))
        let tokens = history.map(\.token)
        if let mid = tokens.dropFirst(tokens.count / 2).first {
            out.append(HistoryFilter(since: mid))
            var f = HistoryFilter(since: mid, kinds: [.delete])
            f.limit = 2
            out.append(f)
        }
        if let t = history.dropFirst(history.count / 3).first?.timestamp {
            var f = HistoryFilter()
            f.after = ISOTime(ISODate.format(t))
            f.limit = 4
            out.append(f)
            var g = HistoryFilter(kinds: [.update])
            g.before = ISOTime(ISODate.format(t))
            out.append(g)
        }
        return out
    }

    func expectSameAnswers(_ folder: String, _ note: String, indexUsed: Bool = true) throws {
        let reference = try open(folder)
        let all = try reference.checkedHistory()
        let indexed = try open(folder)
        for f in filters(all) {
            #expect(try indexed.history(matching: f) == f.apply(to: all), "\(note): \(f)")
            if f.limitCountsChanges { #expect(flattened(f.apply(to: all)) == newestChanges(f, all), "\(note): \(f)") }
        }
        // Each insert's envelope, as history --id prints it.
        for id in Set(all.flatMap { $0.changes.filter { $0.kind == .insert }.map(\.id) }).sorted().prefix(40) {
            let ts = HistoryFilter(id: id).apply(to: all)
            guard let first = ts.first else { continue }
            let wanted = Set(ts.map(\.token))
            #expect(try indexed.insertEnvelopes(after: first.token - 1, wanted: wanted, only: id)
                    == reference.insertEnvelopes(after: first.token - 1, wanted: wanted, only: id), "\(note): envelope of \(id)")
        }
        guard indexUsed else { return }
        // Answered through the index: the snapshot's history was never read whole.
        #expect(indexed.historyLog.pending != nil, "\(note)")
        if case .open = indexed.historyLog.index {} else { Issue.record("\(note): the index was not used") }
    }

    /// Each change with its token, in history order.
    func flattened(_ history: [HistoryTransaction]) -> [String] {
        history.flatMap { t in t.changes.map { "\(t.token) \($0.kind) \($0.id)" } }
    }

    /// A limit that counts changes, worked out apart from `HistoryFilter`:
    /// every change that passes, one by one, and the last `limit` of them.
    func newestChanges(_ f: HistoryFilter, _ all: [HistoryTransaction]) -> [String] {
        var passing: [String] = []
        for t in all {
            for c in t.changes where (f.kinds?.contains(c.kind) ?? true) && (f.types?.contains(c.type) ?? true) {
                passing.append("\(t.token) \(c.kind) \(c.id)")
            }
        }
        return Array(passing.suffix(f.limit ?? passing.count))
    }

    /// The journal's lines an open took from its replay state are searched
    /// for the id or kind asked for, and only those that hold it are read:
    /// the answers are those of reading every line.
    @Test(arguments: [4, 5] as [UInt64])
    func journalLinesSearchedAnswerAsReadingThemAll(seed: UInt64) throws {
        let folder = try agedStore(seed: seed, journalSteps: 40)
        let store = try open(folder)
        #expect(store.historyLog.deferred != nil, "the journal's lines come from its replay state")
        try expectSameAnswers(folder, "journal searched")
        // Nothing the search read stays read: the whole history is still all there.
        #expect(store.historyLog.deferred != nil)
        #expect(try store.checkedHistory() == open(folder).checkedHistory())
    }

    /// What a search of the journal looks for: bytes every JSON writer
    /// writes the same way, or nothing (and every line is read).
    @Test func journalSearchesLookForBytesWrittenOneWayOnly() {
        let id = "0001DC36-57D2-4EE9-8E5C-FB4AC9C9C94D"
        func q(_ s: String) -> [UInt8] { Array("\"\(s)\"".utf8) }
        #expect(JournalNeedle(HistoryFilter(id: id))?.alternatives == [q(id)])
        #expect(JournalNeedle(HistoryFilter(id: id, kinds: [.update], author: "bob"))?.alternatives == [q(id)], "the id is the narrowest")
        #expect(JournalNeedle(HistoryFilter(kinds: [.delete]))?.alternatives == [q("delete")])
        #expect(JournalNeedle(HistoryFilter(kinds: [.migrate]))?.alternatives == [q("migrate")])
        #expect(JournalNeedle(HistoryFilter(author: "bob"))?.alternatives == [q("bob")])
        #expect(JournalNeedle(HistoryFilter(types: ["PersonalTrip", "BusinessTrip"]))?.alternatives == [q("BusinessTrip"), q("PersonalTrip")])
        for unsure in ["a/b", "a\"b", "a\\b", "café", "tab\t", "", "\u{7F}"] {
            #expect(JournalNeedle(HistoryFilter(id: unsure)) == nil, "\(unsure)")
            #expect(JournalNeedle(HistoryFilter(author: unsure)) == nil, "\(unsure)")
            #expect(JournalNeedle(HistoryFilter(types: ["Trip", unsure])) == nil, "\(unsure)")
        }
        #expect(JournalNeedle(HistoryFilter(kinds: [.insert])) == nil, "an insert's kind may go unwritten")
        #expect(JournalNeedle(HistoryFilter(kinds: [.delete, .update])) == nil)
        #expect(JournalNeedle(HistoryFilter(since: 3)) == nil)
        var renamed = HistoryFilter(types: ["Trip"])
        renamed.typeNames = HistoryTypeNames(eras: [.init(from: .min, names: ["Trip"])])
        #expect(JournalNeedle(renamed) == nil, "names that changed over migrations")
        let line = Array(#"{"token":3,"author":"bob","changes":[{"kind":"delete","type":"Trip","id":"0001DC36-57D2-4EE9-8E5C-FB4AC9C9C94D"}]}"#.utf8)
        line.withUnsafeBufferPointer { b in
            #expect(JournalNeedle(HistoryFilter(id: id))?.isIn(b) == true)
            #expect(JournalNeedle(HistoryFilter(id: "0001DC36"))?.isIn(b) == false, "a part of an id is not the id")
            #expect(JournalNeedle(HistoryFilter(kinds: [.delete]))?.isIn(b) == true)
            #expect(JournalNeedle(HistoryFilter(kinds: [.migrate]))?.isIn(b) == false)
            #expect(JournalNeedle(HistoryFilter(author: "bo"))?.isIn(b) == false)
            #expect(JournalNeedle(HistoryFilter(types: ["Note", "Trip"]))?.isIn(b) == true)
            #expect(JournalNeedle(HistoryFilter(types: ["Note", "BusinessTrip"]))?.isIn(b) == false)
        }
    }

    @Test(arguments: [1, 2, 3] as [UInt64])
    func answersAsReadingTheWholeHistory(seed: UInt64) throws {
        let folder = try agedStore(seed: seed)
        try expectSameAnswers(folder, "built now")
        let store = try open(folder)
        #expect(FileIO.exists(store.historyIndexPath), "the first lookup writes the index beside the snapshot")
        #expect(store.historyIndexProblem() == nil)
        try expectSameAnswers(folder, "read from the file")
    }

    /// A store of `trips` generated trips, every trip updated twice in
    /// bulk and seven of them once more, compacted: its folder, and each
    /// id's tokens as reading the whole history gives them.
    func storeOfManyIDs(_ name: String, trips: Int) throws -> (folder: String, tokens: [String: [Int64]], history: [HistoryTransaction]) {
        let folder = TestFolders.make(name)
        let store = try TestStores.bulkImported(folder, seed: 9, trips: trips, timestamp: 1_790_000_000)
        let rows = try store.run(try Query("is Trip", from: "Trip")).rows
        for (k, place) in ["Aachen", "Bergen"].enumerated() {
            try store.update(rows, set: [("destination", place)], author: "u", timestamp: 1_790_000_100 + Double(k))
        }
        try store.update(Array(rows.prefix(7)), set: [("name", "seven")], author: "u", timestamp: 1_790_000_200)
        try store.compact()
        store.close()
        let history = try open(folder).checkedHistory()
        var tokens: [String: [Int64]] = [:]
        for t in history {
            for id in Set(t.changes.map(\.id)) { tokens[id, default: []].append(t.token) }
        }
        return (folder, tokens, history)
    }

    /// An index of thousands of ids holds several in each of its 4,096
    /// buckets, each with a run of changes: every id's history, looked up
    /// by binary search in its bucket, is what reading the whole history says.
    @Test func idsThatShareABucketAreFoundByTheirHash() throws {
        let (folder, tokens, _) = try storeOfManyIDs("history-index-buckets", trips: 3000)
        #expect(tokens.count > 8 * HistoryIndexFile.buckets / 2)
        let indexed = try open(folder)
        for (k, id) in tokens.keys.sorted().enumerated() where k % 3 == 0 || tokens[id]!.count > 2 {
            #expect(try indexed.history(matching: HistoryFilter(id: id)).map(\.token) == tokens[id], "\(id)")
        }
        #expect(try indexed.history(matching: HistoryFilter(id: "no-such-id")).isEmpty)
        if case .open = indexed.historyLog.index {} else { Issue.record("the index was not used") }
    }

    @Test func aDamagedForeignOrMissingIndexChangesNoAnswer() throws {
        let (folder, path, good) = try indexedStore(seed: 7)
        var random = SplitMix64(seed: 99)
        for round in 0..<12 {
            var bytes = good
            switch round % 4 {
            case 0: bytes[Int(random.next() % UInt64(bytes.count))] ^= UInt8(1 << (random.next() % 8))
            case 1: bytes.removeLast(Int(random.next() % UInt64(bytes.count)))
            case 2:
                // A page changed and sealed again: what the checksum cannot see, checking against the JSON must.
                let page = 1 + Int(random.next() % UInt64(bytes.count / PagedFile.pageSize - 1))
                for k in 0..<8 { bytes[page * PagedFile.pageSize + Int(random.next() % 4000) + k] = UInt8(truncatingIfNeeded: random.next()) }
                reseal(&bytes, page: page)
            default: bytes = []
            }
            try overwrite(path, with: bytes)
            if round % 4 != 2 {
                try expectSameAnswers(folder, "damage round \(round)", indexUsed: false)
            } else {
                // Sealed again, an entry may be lost; no answer may trap, and verify finds it.
                let store = try open(folder)
                #expect(store.historyIndexProblem() != nil || bytes == good)
                let all = try open(folder).checkedHistory()
                for f in filters(all) { _ = try store.history(matching: f) }
            }
        }
        // Gone: built again, and the answers are the same.
        FileIO.unlink(path)
        try expectSameAnswers(folder, "deleted")
        #expect(FileIO.exists(path))
    }

    /// Entries changed and sealed again so that every checksum holds: a
    /// delete said to be in a transaction past the last, or the history's
    /// lines said to start elsewhere, are found and the answers read whole.
    @Test func entriesThatCannotBeAreFound() throws {
        let (folder, path, good) = try indexedStore(seed: 8)
        let header = try #require(HistoryIndexFile.Header.decode(Array(good[0..<PagedFile.pageSize]), pages: Int64(good.count / PagedFile.pageSize)))
        func forged(_ at: Int, _ value: UInt64) throws {
            var bytes = good
            for k in 0..<8 { bytes[at + k] = UInt8(truncatingIfNeeded: value >> (8 * k)) }
            reseal(&bytes, page: at / PagedFile.pageSize)
            try overwrite(path, with: bytes)
        }
        // The newest delete's transaction, past the last one.
        let last = Int(header.deletes.count) - 1
        let per = PagedFile.payload / HistoryIndexFile.deleteEntrySize
        try #require(last >= 0)
        try forged(Int(header.deletes.firstPage) * PagedFile.pageSize + (last / per) * PagedFile.pageSize + (last % per) * 16,
                   UInt64(header.transactions.count) + 1)
        try expectSameAnswers(folder, "a delete past the last transaction", indexUsed: false)
        // The newest delete's entry copied over the one before it: one delete twice, another gone.
        if last >= 1 {
            func at(_ k: Int) -> Int { Int(header.deletes.firstPage) * PagedFile.pageSize + (k / per) * PagedFile.pageSize + (k % per) * 16 }
            var bytes = good
            for k in 0..<16 { bytes[at(last - 1) + k] = good[at(last) + k] }
            reseal(&bytes, page: at(last - 1) / PagedFile.pageSize)
            try overwrite(path, with: bytes)
            try expectSameAnswers(folder, "a delete listed twice", indexUsed: false)
        }
        // The first line said to start a byte later.
        try forged(Int(header.transactions.firstPage) * PagedFile.pageSize, UInt64(header.binding.historyStart) + 1)
        try expectSameAnswers(folder, "the first line moved", indexUsed: false)
    }

    /// Id entries and the fanout changed and sealed again: two entries of a
    /// bucket swapped (one id's run out of order, another's with a hole), an
    /// entry made a copy of its neighbour, a bucket said to start one entry
    /// early or end one late, the fanout's first page zeroed. A lookup reads
    /// its bucket by binary search; each is found where it reads, the index
    /// is not believed, and the answers are the whole history's.
    @Test func forgedIDEntriesAndFanoutAreFound() throws {
        let (folder, tokens, history) = try storeOfManyIDs("history-index-forged", trips: 1000)
        let built = try open(folder)
        _ = try built.history(matching: HistoryFilter(id: tokens.keys.sorted()[0]))
        let path = built.historyIndexPath
        let good = try FileIO.readFile(path)
        let header = try #require(HistoryIndexFile.Header.decode(Array(good[0..<PagedFile.pageSize]), pages: Int64(good.count / PagedFile.pageSize)))
        let size = HistoryIndexFile.idEntrySize, per = PagedFile.payload / size, count = Int(header.ids.count)
        func at(_ k: Int) -> Int { Int(header.ids.firstPage) * PagedFile.pageSize + (k / per) * PagedFile.pageSize + (k % per) * size }
        func fanoutAt(_ b: Int) -> Int { Int(header.fanout.firstPage) * PagedFile.pageSize + (b / (PagedFile.payload / 4)) * PagedFile.pageSize + (b % (PagedFile.payload / 4)) * 4 }
        func hash(_ k: Int) -> UInt64 { good[at(k)..<(at(k) + 8)].reversed().reduce(0) { $0 << 8 | UInt64($1) } }
        let idsByBucket = Dictionary(grouping: tokens.keys) { HistoryIndexFile.bucket(HistoryIndexFile.hash($0)) }
        /// Writes `bytes` sealed again where `offsets` are; every id of `buckets` then reads as the whole history says.
        func expectRight(_ bytes: [UInt8], at offsets: [Int], buckets: [Int], _ note: String) throws {
            var bytes = bytes
            for p in Set(offsets.map { $0 / PagedFile.pageSize }) { reseal(&bytes, page: p) }
            try overwrite(path, with: bytes)
            let ids = buckets.flatMap { idsByBucket[$0] ?? [] }
            #expect(!ids.isEmpty, "\(note)")
            for id in ids {
                let store = try open(folder)
                #expect(try store.history(matching: HistoryFilter(id: id)) == HistoryFilter(id: id).apply(to: history), "\(note): \(id)")
            }
        }
        // Two neighbours of one bucket with different hashes, swapped.
        let k = try #require((0..<(count - 1)).first { HistoryIndexFile.bucket(hash($0)) == HistoryIndexFile.bucket(hash($0 + 1)) && hash($0) != hash($0 + 1) })
        let b = HistoryIndexFile.bucket(hash(k))
        var bytes = good
        for i in 0..<size { (bytes[at(k) + i], bytes[at(k + 1) + i]) = (good[at(k + 1) + i], good[at(k) + i]) }
        try expectRight(bytes, at: [at(k), at(k + 1)], buckets: [b], "two entries of a bucket swapped")
        // An entry a copy of the one before it, of the same id.
        let d = try #require((0..<(count - 1)).first { hash($0) == hash($0 + 1) })
        bytes = good
        for i in 0..<size { bytes[at(d + 1) + i] = good[at(d) + i] }
        try expectRight(bytes, at: [at(d + 1)], buckets: [HistoryIndexFile.bucket(hash(d))], "an entry a copy of the one before")
        // Bucket b said to start one entry early, then to end one entry late.
        let start = good[fanoutAt(b)..<(fanoutAt(b) + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        let end = good[fanoutAt(b + 1)..<(fanoutAt(b + 1) + 4)].reversed().reduce(0) { $0 << 8 | UInt32($1) }
        let moves = (start > 0 ? [(b, start - 1)] : []) + (Int(end) < count ? [(b + 1, end + 1)] : [])
        #expect(!moves.isEmpty)
        for (slot, value) in moves {
            bytes = good
            for i in 0..<4 { bytes[fanoutAt(slot) + i] = UInt8(truncatingIfNeeded: value >> (8 * UInt32(i))) }
            try expectRight(bytes, at: [fanoutAt(slot)], buckets: [max(0, b - 1), b, b + 1], "bucket \(b)'s bound at fanout \(slot) moved")
        }
        // The fanout's first page zeroed: every bucket it covers said to be empty.
        bytes = good
        let first = Int(header.fanout.firstPage) * PagedFile.pageSize
        for i in first..<(first + PagedFile.payload) { bytes[i] = 0 }
        try expectRight(bytes, at: [first], buckets: [1, 100, 700], "the fanout's first page zeroed")
    }

    /// Read in pieces smaller than a line, the history gives the same index.
    @Test func anIndexBuiltInSmallPiecesIsTheSame() throws {
        let folder = try agedStore(seed: 4)
        let store = try open(folder)
        let pending = try #require(store.historyLog.pending)
        let file = try #require(FileIdentity.of(pending.fd))
        let binding = HistoryIndexFile.Binding(token: store.snapshotToken, historyStart: Int64(pending.bytes.lowerBound),
                                               historyEnd: Int64(pending.bytes.upperBound), firstLine: Int64(pending.firstLine), file: file)
        for chunk in [16, 100, 777] {
            var builder = HistoryIndexBuilder(binding: binding, snapshotFD: pending.fd)
            builder.chunkBytes = chunk
            let read = builder.readLines()
            let written = builder.write(to: store.historyIndexPath)
            #expect(read && written)
            #expect(store.historyIndexProblem() == nil, "pieces of \(chunk) bytes")
        }
        try expectSameAnswers(folder, "built in small pieces")
    }

    /// A reader builds the index too: a link left at its temporary file's
    /// name is never written through.
    @Test func theIndexIsNeverWrittenThroughALink() throws {
        let folder = try agedStore(seed: 9)
        let store = try open(folder)
        let victim = TestFolders.make("victim") + "/file"
        try overwrite(victim, with: Array("precious".utf8))
        let temporary = store.historyIndexPath + ".\(getpid()).tmp"
        #expect(symlink(victim, temporary) == 0)
        _ = try store.history(matching: HistoryFilter(id: "anything"))
        #expect(try FileIO.readFile(victim) == Array("precious".utf8))
        try expectSameAnswers(folder, "after the link")
    }

    /// A folder where the index goes is damage for `verify`, never read, and changes no answer.
    @Test func aFolderWhereTheIndexGoesIsNamed() throws {
        let (folder, path, _) = try indexedStore(seed: 10)
        FileIO.unlink(path)
        try FileIO.makeDirectory(path)
        let problem = try open(folder).historyIndexProblem()
        #expect(problem?.problem == "it is not a regular file" && problem?.stale == false)
        try expectSameAnswers(folder, "a folder at the index", indexUsed: false)
    }

    @Test func anIndexOfAnotherSnapshotIsNotBelieved() throws {
        let a = try agedStore(seed: 11), b = try agedStore(seed: 12)
        try expectSameAnswers(a, "a")
        try expectSameAnswers(b, "b")
        let pa = try open(a).historyIndexPath, pb = try open(b).historyIndexPath
        let foreign = try FileIO.readFile(pb)
        FileIO.unlink(pa)
        let target = a + "/" + String(pa.split(separator: "/").last!)
        try overwrite(target, with: foreign)
        #expect(try open(a).historyIndexProblem()?.stale == true)
        try expectSameAnswers(a, "foreign index", indexUsed: false)
    }

    @Test func compactionRemovesTheOldIndex() throws {
        let folder = try agedStore(seed: 5)
        try expectSameAnswers(folder, "before")
        let old = try open(folder).historyIndexPath
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        try TestStores.commit(TestStores.trip("late"), to: store)
        try store.compact()
        store.settleFileRemoval()
        store.close()
        #expect(!FileIO.exists(old))
        try expectSameAnswers(folder, "after")
    }

    /// Random bytes and random pages as an index file: opening and lookups never trap.
    @Test func randomIndexFilesNeverTrap() throws {
        let (folder, path, good) = try indexedStore(seed: 3)
        var random = SplitMix64(seed: 2024)
        for _ in 0..<40 {
            var bytes = good
            let pages = bytes.count / PagedFile.pageSize
            // Any page, header included, filled with noise and sealed so that its checksum holds.
            let page = Int(random.next() % UInt64(pages))
            let noise = (0..<PagedFile.pageSize).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            bytes.replaceSubrange((page * PagedFile.pageSize)..<((page + 1) * PagedFile.pageSize), with: noise)
            if page == 0 { bytes.replaceSubrange(0..<8, with: HistoryIndexFile.magic) }
            reseal(&bytes, page: page)
            try overwrite(path, with: bytes)
            let store = try open(folder)
            for f in [HistoryFilter(id: "nothing"), HistoryFilter(kinds: [.delete]), HistoryFilter(author: "bob")] {
                _ = try store.history(matching: f)
            }
        }
    }
}
