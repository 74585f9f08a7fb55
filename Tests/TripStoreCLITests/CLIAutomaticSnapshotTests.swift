import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// When the command line writes its automatic snapshot: each command opens
/// the store (replaying the journal) to commit once, so it snapshots every
/// 2,500 transactions, where a program that stays open waits for 10,000.
@Suite(.serialized) struct CLIAutomaticSnapshotTests {
    /// Commits one-attribute updates through the library (the defaults)
    /// until the journal holds `transactions`.
    static func fill(_ folder: String, to transactions: Int64) throws -> Store {
        let w = try Store.open(folder, schema: try Store.recordedSchema(in: folder) ?? TripSchema.schema, access: .write)
        let trips = try w.run(Query("is Trip")).rows
        let slot = try #require(w.schema.entity(named: "Trip")?.property(named: "name")?.slot)
        var k = 0
        while w.lastToken - w.snapshotToken < transactions {
            var tx = w.transaction()
            tx.setAttribute(trips[k % trips.count], slot: slot, to: .string("renamed \(k)"))
            try w.commit(tx, author: "test")
            k += 1
        }
        return w
    }

    @Test func aCommandSnapshotsAtTheTwoThousandFiveHundredthTransactionWhereALibraryStoreGoesOn() throws {
        let s = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        // The library's store passes 2,500 without a snapshot.
        let w = try Self.fill(s, to: 2_500)
        #expect(w.snapshotToken == 0 && !w.isWritingSnapshotInBackground)
        w.close()
        #expect(CLIRunner.run(["stats"], store: s).out.contains("2500 transactions"))

        // A command at 2,499 does not snapshot, the one that makes 2,500 does.
        let t = CLIRunner.scratch() + "/command"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: t).code == 0)
        try Self.fill(t, to: 2_498).close()
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-101"], store: t).code == 0)
        #expect(CLIRunner.run(["stats"], store: t).out.contains("2499 transactions"))
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-102"], store: t).code == 0)
        let stats = CLIRunner.run(["stats"], store: t).out
        #expect(stats.contains("snapshot-2500.jsonl") && stats.contains("0 transactions"), "\(stats)")
        #expect(CLIRunner.run(["verify"], store: t).code == 0)

        // The setting still decides where it is given.
        let u = CLIRunner.scratch() + "/setting"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: u).code == 0)
        try Self.fill(u, to: 2_499).close()
        let env = ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "10000"]
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-103"], store: u, env: env).code == 0)
        #expect(CLIRunner.run(["stats"], store: u).out.contains("2500 transactions"))
    }

    /// `apply` keeps the library's thresholds while it commits, but leaves
    /// no longer a journal than a command does: past 2,500 transactions it
    /// starts the fold in a process of its own as it ends.
    @Test func applyLeavesNoLongerAJournalThanACommand() throws {
        let primary = CLIRunner.scratch() + "/primary"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: primary).code == 0)
        try Self.fill(primary, to: 2_600).close()
        let feed = CLIRunner.scratch() + "/feed.jsonl"
        try CLIRunner.run(["history", "--format", "feed"], store: primary).out.write(toFile: feed, atomically: false, encoding: .utf8)
        let standby = CLIRunner.scratch() + "/standby"
        #expect(try CLIRunner.runProcess(["--store", standby, "apply", feed]).status == 0)
        #expect(try Folds.waitForSnapshot(standby, at: 2_600) == 2_600)
        #expect(CLIRunner.run(["stats"], store: standby).out.contains("0 transactions"))
        #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: primary).out)

        // Fewer transactions than a command's threshold leave the journal as it is.
        let small = CLIRunner.scratch() + "/small"
        let few = CLIRunner.scratch() + "/few.jsonl"
        try (try String(contentsOfFile: feed, encoding: .utf8).split(separator: "\n").prefix(5).joined(separator: "\n") + "\n")
            .write(toFile: few, atomically: false, encoding: .utf8)
        #expect(try CLIRunner.runProcess(["--store", small, "apply", few]).status == 0)
        CLIRunner.waitForCompactions(small)
        #expect(CLIRunner.run(["stats"], store: small).out.contains("5 transactions"))
    }

    /// A threshold in the environment that is no whole number from 0 up
    /// stops the command before it opens the store (found by a hostile
    /// review: a typo such as "8M" silently meant the default).
    @Test(arguments: ["8M", "-5", "1e9", " 5", "garbage", "99999999999999999999"])
    func aThresholdThatIsNoCountIsAnError(_ value: String) throws {
        let s = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        let before = try FileManager.default.contentsOfDirectory(atPath: s).sorted()
        for name in ["TRIPSTORE_SNAPSHOT_BYTES", "TRIPSTORE_SNAPSHOT_TRANSACTIONS", "TRIPSTORE_SNAPSHOT_LINE_BYTES",
                     "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES"] {
            let r = CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-9"], store: s, env: [name: value])
            #expect(r.code == 1 && r.err.contains("\(name)='\(value)'"), "\(name): \(r.err)")
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: s).sorted() == before)
        #expect(!CLIRunner.run(["get", "rome-summit"], store: s).out.contains("EX-9"))
        // Empty is unset; 0 is a threshold.
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-9"], store: s,
                              env: ["TRIPSTORE_SNAPSHOT_BYTES": "", "TRIPSTORE_SNAPSHOT_TRANSACTIONS": "0"]).code == 0)
    }
}
