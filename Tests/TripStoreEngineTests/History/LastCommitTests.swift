import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The last commit's time and token as a writer learns them at open (the
/// snapshot header's `lastCommit` and token) against what reading the
/// history gives, after random runs of bulk imports, commits at random
/// times (some before the last), compactions, prunes and reopens; and a
/// header whose time was changed by hand is damage.
@Suite struct LastCommitTests {
    static var options: StoreOptions { TestStores.bulkOptions }

    /// What a fresh reader says, checked against the history it reads.
    static func expectAgreement(_ folder: String, _ writer: Store, step: String) throws {
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read, options: options)
        defer { reader.close() }
        let quick = try reader.lastCommitTime()
        if let pending = reader.historyLog.pending, reader.historyLog.snapshotCount > 0, reader.historyLog.loaded.isEmpty {
            #expect(reader.historyLog.snapshotLastCommit != nil, "\(step): the header says it")
            #expect(try reader.lastCommitTimeFromTheLine(pending) == quick, "\(step): header against the line")
        }
        let history = reader.history
        if !history.isEmpty { #expect(quick == history.last?.timestamp, "\(step): against the whole history") }
        #expect(quick == (try writer.lastCommitTime()), "\(step): against the writer")
        #expect(reader.lastToken == writer.lastToken && reader.lastToken >= (history.last?.token ?? 0), "\(step): token")
        #expect(reader.checkInvariants().isEmpty && reader.commitTimeProblems().isEmpty, "\(step)")
    }

    @Test(arguments: [11, 12, 13, 14] as [UInt64]) func theHeaderAgreesWithTheHistory(seed: UInt64) throws {
        var random = SplitMix64(seed: seed)
        let folder = TestFolders.make("last-commit-\(seed)")
        var store = try TestStores.bulkImported(folder, seed: seed, trips: 20, timestamp: 1_700_000_000.123_456)
        defer { store.close() }
        try Self.expectAgreement(folder, store, step: "after the bulk import")
        var time = 1_700_000_000.0
        for step in 0..<24 {
            let what = Int(random.next() % 5)
            switch what {
            case 0, 1:
                // A commit, sometimes stamped before the last (the store keeps time moving forward).
                time += Double(random.next() % 2000) / 1000 - 0.5
                try TestStores.commit(TestStores.trip("extra-\(seed)-\(step)"), to: store, timestamp: time + 0.000_000_3)
            case 2:
                try store.compact()
            case 3:
                try store.pruneHistory(before: store.lastToken - Int64(random.next() % 3))
            default:
                store.close()
                store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
            }
            try Self.expectAgreement(folder, store, step: "step \(step) (\(what))")
        }
        // Every transaction pruned: the time and the token still known, and
        // the next commit stamped no earlier, though the clock says earlier.
        let last = try #require(try store.lastCommitTime())
        try store.pruneHistory(before: store.lastToken + 1)
        try Self.expectAgreement(folder, store, step: "all pruned")
        #expect(try store.lastCommitTime() == last)
        store.close()
        store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
        #expect(try store.lastCommitTime() == last, "from the header alone")
        let snapshotToken = store.lastToken
        let trip = try store.run(try Query("is Trip")).rows[0]
        var tx = store.transaction()
        tx.setAttribute(trip, slot: 0, to: .string("after the prune"))
        try store.commit(tx, author: "a", timestamp: last + 1)
        // The snapshot's token stays reachable by its time after later commits.
        #expect(try store.token(at: last) == snapshotToken)
        #expect(try store.token(at: last + 0.5) == snapshotToken)
        #expect(try store.token(at: last - 0.001) == nil, "before the oldest reachable state")
        var late = store.transaction()
        late.setAttribute(trip, slot: 0, to: .string("stamped in the past"))
        #expect(try store.commit(late, author: "a", timestamp: last - 1000)?.timestamp == last + 1)
    }

    /// The header's time is under the checksum: changed by hand (the image
    /// then no longer matches), the snapshot is damage, not a new time.
    @Test func aLastCommitTimeChangedByHandIsDamage() throws {
        let folder = TestFolders.make("last-commit-forged")
        let store = try TestStores.bulkImported(folder, seed: 3, trips: 20, timestamp: 1_700_000_000)
        let path = store.files.snapshot(store.lastToken)
        store.close()
        try Self.changeTheYear(of: "lastCommit", in: path)
        #expect(throws: StoreError.self) { try Store.open(folder, schema: TripSchema.schema, access: .read) }
    }

    /// So is the time of the oldest reachable state, which a prune leaves there.
    @Test func anOldestReachableTimeChangedByHandIsDamage() throws {
        let (folder, path, lastToken) = try Self.prunedStore("oldest-reachable-forged")
        #expect(try Store.open(folder, schema: TripSchema.schema, access: .read).token(at: 1_700_000_100.5) == lastToken - 2)
        try Self.changeTheYear(of: "oldestReachableCommit", in: path)
        #expect(throws: StoreError.self) { try Store.open(folder, schema: TripSchema.schema, access: .read) }
    }

    /// A bulk import and three commits, the first two pruned (a format-4
    /// snapshot), closed: the folder, the snapshot's path and the last token.
    static func prunedStore(_ name: String) throws -> (folder: String, snapshot: String, lastToken: Int64) {
        let folder = TestFolders.make(name)
        let store = try TestStores.bulkImported(folder, seed: 3, trips: 20, timestamp: 1_700_000_000)
        defer { store.close() }
        for k in 0..<3 { try TestStores.commit(TestStores.trip("later-\(k)"), to: store, timestamp: 1_700_000_100 + Double(k)) }
        #expect(try store.pruneHistory(before: store.lastToken - 1) == 2)
        return (folder, store.files.snapshot(store.lastToken), store.lastToken)
    }

    /// Changes the year of the time the snapshot holds under `key`, a year later or earlier.
    static func changeTheYear(of key: String, in path: String) throws {
        var bytes = try FileIO.readFile(path)
        let text = Array("\"\(key)\":\"".utf8)
        let at = try #require((0...(bytes.count - text.count)).last { bytes[$0..<($0 + text.count)].elementsEqual(text) })
        bytes[at + text.count + 3] = bytes[at + text.count + 3] == UInt8(ascii: "1") ? UInt8(ascii: "2") : UInt8(ascii: "1")
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    /// An oldest reachable state said (by a resealed hand edit) to be
    /// younger than the oldest retained transaction is what `verify` reports.
    @Test func anOldestReachableTimeAfterTheRetainedHistoryIsReported() throws {
        let (folder, path, _) = try Self.prunedStore("oldest-after-history")
        try SnapshotEdit.resealed(path) { lines in
            lines[0] = lines[0].replacingOccurrences(of: #""oldestReachableCommit":"[^"]*""#, with: #""oldestReachableCommit":"2099-01-01T00:00:00Z""#,
                                                     options: .regularExpression)
        }
        try? FileManager.default.removeItem(atPath: path.replacingOccurrences(of: ".jsonl", with: ".image"))
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { reader.close() }
        #expect(reader.commitTimeProblems().contains { $0.contains("after the oldest retained transaction") }, "\(reader.commitTimeProblems())")
    }

    /// A pruned (format-4) snapshot that does not say when its last commit
    /// was is damage; a trailer that holds a key twice is too.
    @Test func aFormatFourSnapshotWithoutItsLastCommitOrATrailerKeyTwiceIsDamage() throws {
        for edit in ["no lastCommit", "a trailer key twice"] {
            let folder = TestFolders.make("format-four-no-last")
            let store = try TestStores.bulkImported(folder, seed: 3, trips: 5, timestamp: 1_700_000_000)
            for k in 0..<2 { try TestStores.commit(TestStores.trip("later-\(k)"), to: store, timestamp: 1_700_000_100 + Double(k)) }
            _ = try store.pruneHistory(before: store.lastToken + 1)
            let path = store.files.snapshot(store.lastToken)
            store.close()
            try SnapshotEdit.resealed(path) { lines in
                if edit == "no lastCommit" {
                    lines[0] = lines[0].replacingOccurrences(of: #""lastCommit":"[^"]*","#, with: "", options: .regularExpression)
                } else {
                    lines[lines.count - 1] = lines[lines.count - 1].replacingOccurrences(of: #"{"end":{"objects""#, with: #"{"end":{"history":0,"objects""#)
                }
            }
            try? FileManager.default.removeItem(atPath: path.replacingOccurrences(of: ".jsonl", with: ".image"))
            #expect(throws: StoreError.self, "\(edit)") { try Store.open(folder, schema: TripSchema.schema, access: .read) }
        }
    }
}
