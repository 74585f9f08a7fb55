import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// What a snapshot keeps when it is written again: history lines nobody has
/// read go over byte for byte, and the check of every reference, run on
/// every core straight from the records, finds what the row-at-a-time
/// check finds.
@Suite struct CompactionTests {
    static var options: StoreOptions { TestStores.bulkOptions }

    /// The history lines of a snapshot file, between its objects and its trailer.
    static func historyLines(_ path: String) throws -> [Substring] {
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n").filter { $0.hasPrefix(#"{"token":"#) }
    }

    @Test func historyNobodyReadIsCarriedOverByteForByte() throws {
        let folder = TestFolders.make("compact-carries")
        var store = try TestStores.bulkImported(folder, seed: 5, trips: 30, timestamp: 1_700_000_000.25)
        defer { store.close() }
        try TestStores.commit(TestStores.trip("later-1"), to: store, timestamp: 1_700_000_100)
        try store.compact()
        let before = try Self.historyLines(store.files.snapshot(store.lastToken))
        let expected = store.history
        store.close()

        // Opened again, its history lines stay unread in the file; commits
        // after it are in memory; compaction carries the first and writes the second.
        store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
        #expect(store.historyLog.pending != nil)
        try TestStores.commit(TestStores.trip("later-2"), to: store, timestamp: 1_700_000_200)
        try store.compact()
        #expect(store.historyLog.pending != nil, "still unread after the compaction")
        let after = try Self.historyLines(store.files.snapshot(store.lastToken))
        #expect(after.count == before.count + 1)
        #expect(Array(after.prefix(before.count)) == before, "the same bytes")
        #expect(store.history.dropLast() == expected[...])
        #expect(store.history.last?.token == store.lastToken)

        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read, options: Self.options)
        defer { reader.close() }
        #expect(reader.history == store.history)
        #expect(try reader.lastCommitTime() == 1_700_000_200)
        #expect(reader.checkInvariants().isEmpty)
    }

    /// A store with three commits and a snapshot whose history lines `edit`
    /// changed, sealed again with a matching checksum, its image removed:
    /// opened again for writing, the lines are left unread (carried). Returns
    /// the store and the snapshot's bytes.
    static func storeWithEditedHistory(_ name: String, _ edit: (inout [String], Int) throws -> Void) throws -> (Store, String, [UInt8]) {
        let folder = TestFolders.make(name)
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
        for k in 0..<3 { try TestStores.commit(TestStores.trip("t\(k)"), to: store, timestamp: 1_700_000_000 + Double(k)) }
        try store.compact()
        let path = store.files.snapshot(store.lastToken)
        store.close()
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        try edit(&lines, try #require(lines.firstIndex { $0.hasPrefix(#"{"token":1,"#) }))
        let trailerAt = try #require(lines.lastIndex { $0.hasPrefix(#"{"end":"#) })
        let body = Array(lines[..<trailerAt].joined(separator: "\n").utf8) + [0x0A]
        let trailer = lines[trailerAt]
        let crc = CRC32C.checksum(body)
        let sealed = trailer.replacingOccurrences(of: #""crc32c":"[0-9a-f]+""#, with: #""crc32c":"\#(CRC32C.hex(crc))""#, options: .regularExpression)
        let bytes = body + Array((sealed + "\n").utf8)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: store.files.image(store.lastToken))
        let reopened = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
        #expect(reopened.historyLog.pending != nil, "the lines are carried, not read")
        return (reopened, path, bytes)
    }

    /// History lines whose tokens go back (two swapped by hand) or pass the
    /// store's last token are never carried into a new snapshot: `verify`
    /// calls them damage, and so does a compaction, which writes nothing.
    @Test func historyOutOfOrderIsNotCarriedOver() throws {
        let (store, path, bytes) = try Self.storeWithEditedHistory("compact-disorder") { lines, first in lines.swapAt(first, first + 1) }
        defer { store.close() }
        #expect(throws: StoreError.self) { try store.compact() }
        #expect(try FileIO.readFile(path) == bytes, "nothing rewritten")
        #expect(store.checkInvariants().contains("history tokens are not strictly increasing"))
    }

    @Test func historyPastTheLastTokenIsNotCarriedOver() throws {
        let (store, path, bytes) = try Self.storeWithEditedHistory("compact-past-last") { lines, first in
            lines[first + 2] = lines[first + 2].replacingOccurrences(of: #"{"token":3,"#, with: #"{"token":99,"#)
        }
        defer { store.close() }
        #expect(throws: StoreError.self) { try store.compact() }
        #expect(try FileIO.readFile(path) == bytes, "nothing rewritten")
        #expect(store.checkInvariants().contains("history holds token 99, after the store's last token 3"))
    }

    /// The tokens read from the start of each line as chunks of any size go
    /// by, against splitting the whole into lines first: random lines
    /// (tokens, other lines, long and empty ones), cut at random (fixed seeds).
    @Test(arguments: [1, 2, 3, 4] as [UInt64]) func leadingTokensOfChunksAreThoseOfTheLines(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<50 {
            var text: [UInt8] = []
            for _ in 0..<Int(random.next() % 40) {
                switch random.next() % 4 {
                case 0: text += Array(#"{"token":\#(random.next() % 1000),"x":1}"#.utf8)
                case 1: text += Array(#"{"token":\#(random.next() % 1000)"#.utf8)
                case 2: text += (0..<Int(random.next() % 80)).map { _ in UInt8(random.next() % 256) }.filter { $0 != 0x0A }
                default: break
                }
                text.append(0x0A)
            }
            var expected = LeadingTokens()
            for line in text.split(separator: 0x0A, omittingEmptySubsequences: false) {
                let prefix = Array(line.prefix(32))
                if let t = prefix.withUnsafeBufferPointer({ Store.leadingToken($0) }) { expected.note(t) }
            }
            var chunked = LeadingTokens()
            var at = 0
            while at < text.count {
                let n = min(text.count - at, 1 + Int(random.next() % 50))
                text[at..<(at + n)].withUnsafeBytes { chunked.take($0) }
                at += n
            }
            #expect(chunked.last == expected.last && chunked.firstOutOfOrder == expected.firstOutOfOrder)
        }
    }

    /// A migration carries them too, with its own transaction after them.
    @Test func aMigrationCarriesHistoryNobodyRead() throws {
        let folder = TestFolders.make("migrate-carries")
        var store = try TestStores.bulkImported(folder, seed: 6, trips: 30, timestamp: 1_700_000_000)
        let before = try Self.historyLines(store.files.snapshot(store.lastToken))
        let expected = store.history
        store.close()
        store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: Self.options)
        #expect(store.historyLog.pending != nil)
        var target = TripSchema.schema.descriptions
        target[0].attributes.append(AttributeDescription("auditNote", .string, optional: true))
        let migrated = try Migrator(store).migrate(to: try Schema(target), author: "m", timestamp: 1_700_000_500).store
        defer { migrated.close() }
        let after = try Self.historyLines(migrated.files.snapshot(migrated.lastToken))
        #expect(Array(after.prefix(before.count)) == before)
        #expect(migrated.history.count == expected.count + 1)
        #expect(migrated.history.dropLast() == expected[...])
        #expect(migrated.history.last?.changes.first?.kind == .migrate)
    }

    /// Random references made wrong (to a missing row, a row of another
    /// type, one side of a pair only, the same row twice) in a table big
    /// enough to be checked on every core: the same findings, in the same
    /// order, as reading row by row through the table.
    @Test(arguments: [1, 2, 3] as [UInt64]) func everyCoreFindsWhatOneRowAtATimeFinds(seed: UInt64) throws {
        let store = try TestStores.bulkImported(TestFolders.make("reference-check-\(seed)"), seed: seed, trips: 4_500, timestamp: 1_700_000_000)
        defer { store.close() }
        let table = store.table
        #expect(table.rowCount >= 1 << 15, "big enough to go parallel")
        #expect(table.referenceProblems(limit: 1000).isEmpty)
        var random = SplitMix64(seed: seed)
        let schema = table.schema
        for _ in 0..<60 {
            let row = RowID(random.next() % UInt64(table.rowCount))
            guard let e = table.entity(at: row) else { continue }
            let relationships = schema.entities[e].properties.filter { $0.relationship != nil }
            guard !relationships.isEmpty else { continue }
            let p = relationships[Int(random.next() % UInt64(relationships.count))]
            let other = RowID(random.next() % UInt64(table.rowCount + 5))
            if p.relationship?.isToMany == true {
                let current = table.value(at: row, slot: p.slot).rows
                let twice = random.next() % 2 == 0 && !current.isEmpty
                table.setValue(.toMany(current + [twice ? current[0] : other]), row: row, slot: p.slot)
            } else {
                table.setValue(.toOne(other), row: row, slot: p.slot)
            }
        }
        var rows: [RowID] = []
        table.forEachEntity { row, _ in rows.append(row) }
        let oneAtATime = table.referenceProblems(of: rows, limit: 1000)
        #expect(!oneAtATime.isEmpty)
        #expect(table.referenceProblems(limit: 1000) == oneAtATime)
        #expect(table.referenceProblems(limit: 7) == Array(oneAtATime.prefix(7)))
        #expect(throws: StoreError.self) { try store.compact() }
    }
}
