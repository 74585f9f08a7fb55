import Foundation
import Testing
@testable import TripStoreCore
import TripStoreFormat
import TripStoreSystem
import TripStoreJSON
import TripStoreModels

/// The trailer's checksum is the CRC-32C of exactly the bytes before it, so
/// a reader written from that sentence alone (`Tests/Scripts/check_snapshot_crc.py`,
/// written apart from this program) accepts every snapshot this program
/// writes; snapshots 0.9.0 wrote (their checksum continued over a
/// `lastCommit` in the trailer) keep being read.
@Suite struct SnapshotChecksumRuleTests {
    static let script = TestFolders.projectRoot + "/Tests/Scripts/check_snapshot_crc.py"
    static let fixture = TestFolders.projectRoot + "/Tests/TripStoreEngineTests/Fixtures/v0.9.0"

    /// Runs the independent checker on `paths`: its exit code and output.
    static func checkedApart(_ paths: [String]) throws -> (code: Int32, out: String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", script] + paths
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        return (p.terminationStatus, text)
    }

    static func snapshots(in folder: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: folder)
            .filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jsonl") }.map { folder + "/" + $0 }
    }

    /// Snapshots of every kind this program writes: after a bulk import,
    /// after commits, after a prune (format 4) and after a redaction.
    @Test func everySnapshotThisProgramWritesPassesTheRuleAsWritten() throws {
        let folder = TestFolders.make("crc-rule")
        let store = try TestStores.bulkImported(folder, seed: 5, trips: 30, timestamp: 1_700_000_000.25)
        defer { store.close() }
        var checked = 0
        // The snapshot just written (the older one may be being removed).
        func checkEachSnapshot(_ step: String) throws {
            let result = try Self.checkedApart([store.files.snapshot(store.snapshotToken)])
            #expect(result.code == 0, "\(step): \(result.out)")
            checked += 1
        }
        try checkEachSnapshot("bulk import")
        for k in 0..<3 { try TestStores.commit(TestStores.trip("later-\(k)"), to: store, timestamp: 1_700_000_100 + Double(k)) }
        try store.compact()
        try checkEachSnapshot("compact")
        #expect(try store.pruneHistory(before: store.lastToken - 1) > 0)
        try checkEachSnapshot("prune")
        #expect(String(decoding: try FileIO.readFile(store.files.snapshot(store.snapshotToken)).prefix(12), as: UTF8.self) == #"{"format":4,"#)
        _ = try Redactor(store).redact(ids: ["later-0"], author: "auditor")
        try checkEachSnapshot("redact")
        #expect(checked >= 4)
    }

    /// The time of the last commit is in the header, where the checksum
    /// covers it; the trailer holds the counts and the checksum only.
    @Test func theLastCommitIsInTheHeader() throws {
        let folder = TestFolders.make("crc-header")
        let store = try TestStores.bulkImported(folder, seed: 6, trips: 5, timestamp: 1_700_000_000.25)
        try store.compact()
        store.close()
        let lines = String(decoding: try FileIO.readFile(try #require(try Self.snapshots(in: folder).first)), as: UTF8.self)
            .split(separator: "\n")
        #expect(lines.first?.hasPrefix(#"{"format":3,"lastCommit":"2054-11-14T22:13:20.250Z","schema":"#) == true,
                "\(lines.first?.prefix(120) ?? "")")
        #expect(lines.last?.contains("lastCommit") == false)
        let reopened = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { reopened.close() }
        #expect(reopened.historyLog.snapshotLastCommit == 1_700_000_000.25, "learned from the header, not the history")
    }

    /// A snapshot edited by hand, its checksum computed again by the rule,
    /// opens with the edit (the documented way to mend a store by hand).
    @Test func aHandEditWithItsChecksumRecomputedOpens() throws {
        let folder = TestFolders.make("crc-hand-edit")
        let store = try TestStores.sampleTrips("crc-hand-edit-source")
        try store.compact()
        let source = store.files.folder
        store.close()
        for name in try FileManager.default.contentsOfDirectory(atPath: source) where !name.hasSuffix(".image") && !name.hasSuffix(".lock") {
            try FileManager.default.copyItem(atPath: source + "/" + name, toPath: folder + "/" + name)
        }
        let path = try #require(try Self.snapshots(in: folder).first)
        #expect(String(decoding: try FileIO.readFile(path), as: UTF8.self).contains("Lisbon"))
        try SnapshotEdit.resealed(path) { lines in lines = lines.map { $0.replacingOccurrences(of: "Lisbon", with: "Lisboa") } }
        #expect(try Self.checkedApart([path]).code == 0)
        let edited = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { edited.close() }
        #expect(try edited.run(try Query(#"destination ~ "Lisboa""#)).rows.count > 0)
        #expect(edited.checkInvariants().isEmpty)
    }

    /// A store 0.9.0 wrote (the checksum continued over the trailer's
    /// `lastCommit`, which the independent reader calls damaged) opens and
    /// verifies, its time read from the trailer; its next snapshot is
    /// written by the rule.
    @Test func aStoreThatVersionZeroNineWroteOpensAndItsNextSnapshotFollowsTheRule() throws {
        let folder = TestFolders.make("v0.9.0")
        for name in ["snapshot-2.jsonl", "schema.json", "journal-2.jsonl"] {
            try FileManager.default.copyItem(atPath: Self.fixture + "/" + name, toPath: folder + "/" + name)
        }
        #expect(try Self.checkedApart([folder + "/snapshot-2.jsonl"]).code == 1, "the fixture is sealed the 0.9.0 way")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        defer { store.close() }
        #expect(store.historyLog.snapshotLastCommit == ISODate.parse("2026-11-21T10:05:00.250Z"))
        #expect(store.checkInvariants().isEmpty && store.commitTimeProblems().isEmpty)
        try Store.verifySnapshotChecksum(at: folder + "/snapshot-2.jsonl")
        #expect(store.history.map(\.token) == [1, 2, 3])
        try store.compact()
        let next = folder + "/snapshot-3.jsonl"
        #expect(try Self.checkedApart([next]).code == 0)
        #expect(String(decoding: try FileIO.readFile(next).prefix(56), as: UTF8.self)
                == #"{"format":3,"lastCommit":"2026-11-21T11:00:00Z","schema""#)
    }

    /// A 0.9.0 snapshot edited by hand and resealed by the plain rule opens
    /// with the edit (its trailer still says `lastCommit`).
    @Test func aVersionZeroNineSnapshotResealedByThePlainRuleOpens() throws {
        let folder = TestFolders.make("v0.9.0-resealed")
        for name in ["snapshot-2.jsonl", "schema.json"] {
            try FileManager.default.copyItem(atPath: Self.fixture + "/" + name, toPath: folder + "/" + name)
        }
        let path = folder + "/snapshot-2.jsonl"
        try SnapshotEdit.resealed(path) { lines in
            #expect(lines.last?.contains("lastCommit") == true)
            lines = lines.map { $0.replacingOccurrences(of: "Trattoria da Mario", with: "Trattoria da Maria") }
            // The trailer's time, outside the plain rule's checksum, is not believed.
            lines[lines.count - 1] = lines[lines.count - 1].replacingOccurrences(of: "\"lastCommit\":\"2026", with: "\"lastCommit\":\"2096")
        }
        #expect(try Self.checkedApart([path]).code == 0)
        let store = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { store.close() }
        let meal = try #require(store.object(id: "m1"))
        #expect(meal.values.contains(.string("Trattoria da Maria")))
        #expect(try store.lastCommitTime() == ISODate.parse("2026-11-21T10:05:00.250Z"), "the last history line's time, not the trailer's")
    }
}
