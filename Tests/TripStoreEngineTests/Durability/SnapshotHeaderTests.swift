import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreFormat
import TripStoreSystem
import TripStoreJSON
import TripStoreModels

@Suite struct SnapshotHeaderTests {
    /// A compacted film store whose snapshot header `change` rewrote, its
    /// checksum made again (so only the header's own checks can object) and
    /// its image removed.
    static func filmStoreWithItsHeader(_ name: String, _ change: (String) -> String) throws -> String {
        let folder = TestFolders.make(name)
        let store = try TestStores.filmStudio(folder, id: "s")
        try store.compact()
        let path = folder + "/snapshot-\(store.snapshotToken).jsonl"
        store.close()
        var lines = String(decoding: try FileIO.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
        lines[0] = change(lines[0])
        lines.removeLast()
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        try Data(body + SnapshotFormat.trailer(objects: 1, history: 1, bodyCRC: CRC32C.checksum(body))).write(to: URL(fileURLWithPath: path))
        FileIO.unlink(path.replacingOccurrences(of: ".jsonl", with: ".image"))
        return folder
    }

    /// What `header` writes, `headerStart` reads back from its first
    /// bytes: format 3 without the oldest reachable time, 4 with it, and the
    /// last commit's time where the header has one.
    @Test func theHeadersStartReadsBackWhatWasWritten() throws {
        var random = SplitMix64(seed: 47)
        func time() -> Double { Double(random.next() % 4_000_000_000) / 1000 + Double(random.next() % 1000) / 1000 }
        for _ in 0..<200 {
            let pruned = random.next() % 2 == 0 ? time() : nil
            let last = random.next() % 4 == 0 ? nil : time() + Double(random.next() % 1_000_000) / 7
            let header = SnapshotFormat.header(schema: TripSchema.schema, token: 7, objects: 3, oldestReachableCommit: pruned, lastCommit: last)
            let start = try #require(SnapshotFormat.headerStart(Array(header.prefix(SnapshotFormat.headerStartBytes))))
            #expect(start.format == (pruned == nil ? 3 : 4))
            for (wrote, read) in [(pruned, start.oldestReachableCommit), (last, start.lastCommit)] {
                var written: [UInt8] = [], back: [UInt8] = []
                if let wrote { ISODate.append(wrote, to: &written) }
                if let read { ISODate.append(read, to: &back) }
                #expect(back == written, "the time as the history prints it")
            }
        }
    }

    /// Any bytes, cut or changed anywhere, read as a format, a format
    /// without its time, or nothing: never a trap (fixed seeds).
    @Test(arguments: [1, 2, 3] as [UInt64]) func theHeadersStartReaderTakesAnyBytes(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let valid = Array(SnapshotFormat.header(schema: TripSchema.schema, token: 7, objects: 3, oldestReachableCommit: 1_800_000_000.5,
                                                lastCommit: 1_800_000_100.25).prefix(SnapshotFormat.headerStartBytes))
        for _ in 0..<5_000 {
            var bytes = Array(valid.prefix(Int(random.next() % UInt64(valid.count + 1))))
            for _ in 0..<Int(random.next() % 4) where !bytes.isEmpty {
                bytes[Int(random.next() % UInt64(bytes.count))] = UInt8(truncatingIfNeeded: random.next())
            }
            if random.next() % 8 == 0 { bytes = (0..<Int(random.next() % 64)).map { _ in UInt8(truncatingIfNeeded: random.next()) } }
            if let start = SnapshotFormat.headerStart(bytes) {
                #expect(start.format >= 0 && (start.format == 4 || start.oldestReachableCommit == nil))
            }
        }
    }

    /// A format-4 header whose time is not where the format puts it is
    /// damage, from the image as from the JSON.
    @Test func aFormatFourHeaderWithoutItsTimeIsDamage() throws {
        let folder = try Self.filmStoreWithItsHeader("format-four-without-time") {
            $0.replacingOccurrences(of: #"{"format":3,"#, with: #"{"format":4,"#)
        }
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let detail, _) = error else { return false }
            return line == 1 && detail.contains("oldestReachableCommit")
        }
    }

    @Test func aFingerprintThatIsNotTheDescribedSchemasIsDamage() throws {
        let fp = FilmSchema.schema.fingerprint
        let forged = String(fp.dropLast()) + (fp.last == "0" ? "1" : "0")
        let folder = try Self.filmStoreWithItsHeader("fingerprint") { $0.replacingOccurrences(of: fp, with: forged) }
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let detail, _) = error else { return false }
            return line == 1 && detail.contains("is not the fingerprint of the schema it describes")
        }
    }

    /// The header's times are dates where the format puts them, each key
    /// once: anything else, resealed, is damage at line 1.
    @Test(arguments: [
        (#""lastCommit":"garbage","#, "is not a date"),
        (#""lastCommit":12345,"#, "is not a date"),
        (#""lastCommit":null,"#, "is not a date"),
        (#""lastCommit":"2020-01-01T00:00:00Z","lastCommit":"2021-01-01T00:00:00Z","#, "holds a key twice"),
    ])
    func aHeaderTimeThatIsNoDateOrTwiceIsDamage(_ replacement: String, _ detail: String) throws {
        let folder = try Self.filmStoreWithItsHeader("header-time") { line in
            line.replacingOccurrences(of: #""lastCommit":"[^"]*","#, with: replacement, options: .regularExpression)
        }
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let d, _) = error else { return false }
            return line == 1 && d.contains(detail)
        }
    }

    /// A `lastCommit` moved away from the header's start is not read there: damage.
    @Test func aLastCommitElsewhereInTheHeaderIsDamage() throws {
        let folder = try Self.filmStoreWithItsHeader("header-time-moved") { line in
            guard let r = line.range(of: #""lastCommit":"[^"]*","#, options: .regularExpression) else { return line }
            let field = String(line[r])
            return line.replacingCharacters(in: r, with: "").replacingOccurrences(of: #""token":"#, with: field + #""token":"#)
        }
        #expect(throws: StoreError.self) { try Store.open(folder, schema: FilmSchema.schema, access: .read) }
    }
}
