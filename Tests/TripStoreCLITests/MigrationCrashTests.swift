import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// Kills a real `tripstore migrate` of 10,000 trips, at the points that
/// matter and at random moments: the store is wholly before or wholly after.
@Suite(.serialized) struct MigrationCrashTests {
    /// A store of 10,000 generated trips, and its objects as its snapshot
    /// holds them before and after an undisturbed migration of a copy.
    struct Fixture {
        var store: String
        var v2: String
        var before: Snapshot
        var after: Snapshot
    }

    /// A snapshot's schema fingerprint and object lines.
    struct Snapshot: Equatable {
        var fingerprint: String
        var objects: ArraySlice<Substring>
    }

    static let fixture: Fixture = {
        var g = TripDataGenerator(seed: 44)
        let input = CLIRunner.runRoot + "migrate-crash-input.json"
        try? Data(g.jsonArray(trips: 10_000)).write(to: URL(fileURLWithPath: input))
        let store = CLIRunner.runRoot + "migrate-crash-template"
        _ = try? CLIRunner.runProcess(["--store", store, "import", input])
        let v2 = (try? CLIMigrateTests.version2()) ?? ""
        let reference = copy(store)
        _ = try? CLIRunner.runProcess(["--store", reference, "migrate", "--schema", v2])
        return Fixture(store: store, v2: v2, before: snapshot(store), after: snapshot(reference))
    }()

    static func copy(_ store: String) -> String {
        let to = CLIRunner.scratch() + "/store"
        try? FileManager.default.copyItem(atPath: store, toPath: to)
        return to
    }

    /// The newest snapshot's fingerprint and object lines.
    static func snapshot(_ store: String) -> Snapshot {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
        let newest = files.filter { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jsonl") }
            .max { Int($0.dropFirst(9).dropLast(6)) ?? 0 < Int($1.dropFirst(9).dropLast(6)) ?? 0 }
        guard let newest, let text = try? String(contentsOfFile: store + "/" + newest, encoding: .utf8) else {
            return Snapshot(fingerprint: "", objects: [])
        }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        let header = (try? JSONSerialization.jsonObject(with: Data(lines[0].utf8))) as? [String: Any]
        let count = header?["objects"] as? Int ?? 0
        let fingerprint = (header?["schema"] as? [String: Any])?["fingerprint"] as? String ?? ""
        return Snapshot(fingerprint: fingerprint, objects: lines[1..<min(lines.count, 1 + count)])
    }

    /// Wholly before or wholly after; `verify` passes; the next writer
    /// leaves no trace of the killed migration. Returns whether it migrated.
    func expectWhole(_ store: String, _ what: String) throws -> Bool {
        let f = Self.fixture
        #expect(try CLIRunner.runProcess(["--store", store, "verify"]).status == 0, "\(what): verify")
        #expect(try CLIRunner.runProcess(["--store", store, "compact"]).status == 0, "\(what): compact")
        let left = try FileManager.default.contentsOfDirectory(atPath: store)
        #expect(!left.contains { $0.hasSuffix(".tmp") || $0 == "schema-next.json" }, "\(what): \(left)")
        let now = Self.snapshot(store)
        let migrated = now == f.after
        #expect(migrated || now == f.before, "\(what): neither before nor after")
        return migrated
    }

    @Test(arguments: ["snapshot-mid-write", "snapshot-before-rename", "image-mid-write", "snapshot-after-rename", "migrate-before-schema-record"])
    func killedAtAPointOfTheMigration(_ point: String) throws {
        let store = Self.copy(Self.fixture.store)
        let r = try CLIRunner.runProcess(["--store", store, "migrate", "--schema", Self.fixture.v2], env: ["TRIPSTORE_CRASH_AT": point])
        #expect(r.killed, "not killed at \(point)")
        let migrated = try expectWhole(store, point)
        switch point {
        case "snapshot-mid-write", "snapshot-before-rename": #expect(!migrated, "\(point)")
        case "image-mid-write": break  // the image is written beside the snapshot: either side of its rename
        default: #expect(migrated, "\(point)")
        }
        if !migrated {
            // The migration runs again from the start, as if nothing had happened.
            #expect(try CLIRunner.runProcess(["--store", store, "migrate", "--schema", Self.fixture.v2]).status == 0)
            #expect(Self.snapshot(store) == Self.fixture.after, "\(point): migrated again")
        }
    }

    @Test func killedAtRandomMoments() throws {
        var random = SplitMix(seed: 10_000)
        // How long an undisturbed migration takes here, to spread the kills over it.
        let timed = Self.copy(Self.fixture.store)
        let start = Date()
        _ = try CLIRunner.runProcess(["--store", timed, "migrate", "--schema", Self.fixture.v2])
        let span = Date().timeIntervalSince(start)
        for round in 0..<6 {
            let store = Self.copy(Self.fixture.store)
            let p = try CLIRunner.start(["--store", store, "migrate", "--schema", Self.fixture.v2])
            usleep(UInt32(Double(random.next() % 1000) / 1000 * span * 1.1 * 1_000_000))
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
            _ = try expectWhole(store, "round \(round)")
        }
    }
}

/// A small fixed-seed generator for the kill times.
struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
