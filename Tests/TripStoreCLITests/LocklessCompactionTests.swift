import Foundation
import Testing
import TripStoreEngine
import TripStoreModels
#if canImport(Glibc)
import Glibc
#endif

/// The automatic snapshot of the command line is written by `compact
/// --background`, a process of its own, without the writer's lock: real
/// processes write on while such compactions run, are killed at each point
/// of putting the snapshot in place, and start again; no commit is lost.
@Suite(.serialized) struct LocklessCompactionTests {
    func snapshotToken(_ store: String) throws -> Int64 { try Folds.snapshotToken(store) }

    @Test(arguments: ["", "lockless-compaction-written", "snapshot-journal-carried", "snapshot-before-rename", "snapshot-after-rename"])
    func writesGoOnWhileCompactionsRunAndDie(_ point: String) throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        var env = ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "4"]
        if !point.isEmpty { env["TRIPSTORE_CRASH_AT"] = point }
        // Two writers at a time, for 24 commits; every fourth line makes a compaction due.
        for k in stride(from: 0, to: 24, by: 2) {
            let a = try CLIRunner.start(["--store", store, "update", "rome-summit", "--set", "expenseCode=EX-\(k)"], env: env)
            let b = try CLIRunner.start(["--store", store, "update", "romeoville-audit", "--set", "expenseCode=EX-\(k + 1)"], env: env)
            a.waitUntilExit()
            b.waitUntilExit()
            #expect(a.terminationStatus == 0 && b.terminationStatus == 0, "writes at \(k) with compactions dying at '\(point)'")
        }
        CLIRunner.waitForCompactions(store)
        if point.isEmpty {
            #expect(try snapshotToken(store) > 1, "a compaction in the background put a snapshot in place")
        }
        // Whatever a killed compaction left, the store is whole, and the next one completes.
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        #expect(try snapshotToken(store) == 25)
        let history = CLIRunner.run(["history", "--kind", "update"], store: store).out
        #expect(history.split(separator: "\n").count == 24, "every commit is kept once")
        #expect(CLIRunner.run(["get", "rome-summit"], store: store).out.contains("EX-22"))
        #expect(CLIRunner.run(["get", "romeoville-audit"], store: store).out.contains("EX-23"))
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.hasSuffix(".tmp") }
        #expect(left.isEmpty, "the next writer removed what a killed compaction left: \(left)")
    }

    /// An update of many objects, too few to commit by a snapshot, leaves a
    /// big journal line; the command starts the fold at once, so the
    /// commands after it do not each replay that line.
    @Test func aCommandThatLeavesABigLineStartsTheFold() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        let env = ["TRIPSTORE_SNAPSHOT_LINE_BYTES": "4096"]
        #expect(try CLIRunner.runProcess(["--store", store, "update", "rome-summit", "--set", "expenseCode=EX-909"], env: env).status == 0)
        CLIRunner.waitForCompactions(store)
        #expect(try snapshotToken(store) == 1, "a small line starts no fold")
        let long = String(repeating: "n", count: 512)
        #expect(try CLIRunner.runProcess(["--store", store, "update", "--where", "is Trip", "--set", "name=\(long)"], env: env).status == 0)
        try expectFolded(store, at: 3, "the big line was folded into a snapshot")
    }

    /// Once the fold a command started is done, the snapshot is at `token`,
    /// the journal empty and the store sound.
    func expectFolded(_ store: String, at token: Int64, _ why: Comment) throws {
        #expect(try Folds.waitForSnapshot(store, at: token) == token, why)
        #expect(CLIRunner.run(["stats"], store: store).out.contains("0 transactions"))
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// A big line committed while a fold runs is carried into the new
    /// journal; the fold finds it there and runs again (found by a hostile
    /// review: the second command's own fold gave way to the running one,
    /// and the line stayed in the journal for every later open).
    @Test func aBigLineCommittedDuringAFoldIsFoldedByTheNextRound() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        // Each fold waits before it takes the lock: the second update lands meanwhile.
        let env = ["TRIPSTORE_SNAPSHOT_LINE_BYTES": "4096", "TRIPSTORE_PAUSE_AT": "lockless-compaction-written"]
        for (k, name) in ["first", "second"].enumerated() {
            let long = String(repeating: name, count: 100)
            #expect(try CLIRunner.runProcess(["--store", store, "update", "--where", "is Trip", "--set", "name=\(long)\(k)"], env: env).status == 0)
        }
        try expectFolded(store, at: 3, "the second big line was folded too")
    }

    /// A snapshot a command put in place (here an import's) gets its history
    /// index from the process the command starts, so no reader builds it.
    @Test func theHistoryIndexIsBuiltInTheBackgroundAfterAnImport() throws {
        let store = CLIRunner.scratch() + "/store"
        // Committed by a snapshot, as a big import is.
        #expect(try CLIRunner.runProcess(["--store", store, "import", CLIRunner.projectRoot + "/SampleData/trips.json"],
                                         env: ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "10"]).status == 0)
        let deadline = Date().addingTimeInterval(30)
        var names: [String] = []
        while Date() < deadline {
            names = try FileManager.default.contentsOfDirectory(atPath: store)
            if names.contains(where: { $0.hasSuffix(".history-index") }) { break }
            usleep(50_000)
        }
        CLIRunner.waitForCompactions(store)
        #expect(names.contains { $0.hasSuffix(".history-index") }, "\(names)")
        #expect(CLIRunner.run(["verify"], store: store).out.contains("the history index verified"))
    }

    /// A redaction while a compaction writes: the compaction's files held
    /// the values, and go at once; the compaction then drops its snapshot.
    @Test func aRedactionRemovesTheFilesOfACompactionRunningMeanwhile() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "purpose=\"Secret plan\""], store: store).code == 0)
        #expect(CLIRunner.run(["delete", "rome-summit"], store: store).code == 0)
        let c = try CLIRunner.start(["--store", store, "compact"], env: ["TRIPSTORE_PAUSE_AT": "lockless-compaction-written"])
        var seen = false
        for _ in 0..<100 where !seen {
            seen = try FileManager.default.contentsOfDirectory(atPath: store).contains { $0.contains(".compacting-") }
            usleep(20_000)
        }
        #expect(seen, "the compaction's files were written")
        #expect(CLIRunner.run(["history", "redact", "--id", "rome-summit"], store: store).code == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: store).filter { $0.contains(".compacting-") }
        #expect(left.isEmpty, "\(left)")
        c.waitUntilExit()
        #expect(c.terminationStatus == 0)
        for name in try FileManager.default.contentsOfDirectory(atPath: store) where !name.hasSuffix(".lock") {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: store + "/" + name))
            #expect(bytes.range(of: Data("Secret plan".utf8)) == nil, "\(name) still holds the redacted value")
        }
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// What is at `fold.lock` is never trusted: a FIFO, a folder or a link
    /// stops `compact` with the damage named and never hangs a writer.
    @Test func aFoldLockThatIsNoFileStopsCompactionAndNeverHangsAWriter() throws {
        for kind in ["fifo", "folder", "link"] {
            let store = CLIRunner.scratch() + "/store"
            #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
            let lock = store + "/fold.lock"
            switch kind {
            case "fifo": #expect(mkfifo(lock, 0o644) == 0)
            case "folder": try FileManager.default.createDirectory(atPath: lock, withIntermediateDirectories: false)
            default: try FileManager.default.createSymbolicLink(atPath: lock, withDestinationPath: store + "/tripstore.lock")
            }
            let p = try CLIRunner.start(["--store", store, "update", "rome-summit", "--set", "expenseCode=EX-9"],
                                        env: ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "1"])
            let deadline = Date().addingTimeInterval(20)
            while p.isRunning && Date() < deadline { usleep(20_000) }
            #expect(!p.isRunning, "\(kind): the write hung")
            if p.isRunning { p.terminate() }
            #expect(p.terminationStatus == 0, "\(kind)")
            let c = CLIRunner.run(["compact"], store: store)
            #expect(c.code == 2 && c.err.contains("fold.lock"), "\(kind): \(c.err)")
            // verify names it as compact does, and --repair removes it (never what it points at).
            let v = CLIRunner.run(["verify"], store: store)
            #expect(v.code == 2 && v.err.contains("fold.lock is not a regular file"), "\(kind): \(v.err)")
            #expect(CLIRunner.run(["verify", "--repair"], store: store).code == 0)
            #expect(CLIRunner.run(["verify"], store: store).code == 0 && FileIO.exists(store + "/tripstore.lock"), "\(kind)")
            #expect(CLIRunner.run(["compact"], store: store).code == 0, "\(kind): compaction runs again")
        }
    }

    /// The files a background compaction replaced are freed by it, once
    /// their readers let them go, not by a command that happened to have
    /// them open (freeing a big snapshot takes its last holder a while).
    @Test func aCompactionFreesWhatItReplacedOnceItsReadersLetGo() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        CLIRunner.waitForCompactions(store)
        var reader: Store? = try Store.open(store, schema: TripSchema.schema, access: .read)
        let old = try #require(reader?.snapshotToken)
        _ = reader?.history.count
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-REPLACED"], store: store).out.contains("token 2"))
        // As a write that makes the journal due starts it: a process of its own, which may wait.
        let c = try CLIRunner.start(["--store", store, "compact", "--background"])
        let deadline = Date().addingTimeInterval(30)
        while FileIO.exists(store + "/snapshot-\(old).jsonl") && Date() < deadline { usleep(5_000) }
        // In place: the compaction holds the replaced snapshot, unlinked, while this process reads it.
        func held() -> Bool {
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(c.processIdentifier)/fd")) ?? []
            return fds.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(c.processIdentifier)/fd/" + $0))?
                .hasSuffix("snapshot-\(old).jsonl (deleted)") ?? false }
        }
        var seen = false
        while !seen && c.isRunning && Date() < deadline {
            seen = held()
            usleep(5_000)
        }
        #expect(seen, "the compaction did not hold the file it replaced")
        #expect(reader?.object(id: "rome-summit") != nil, "the reader still reads the replaced files")
        reader?.close()
        reader = nil
        c.waitUntilExit()
        #expect(c.terminationStatus == 0)
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// `verify` writes nothing in the store's folder (it rebuilds the history
    /// index to compare elsewhere), so writers and other verifies meanwhile
    /// can neither remove its file nor meet it.
    @Test func verifyLeavesTheFolderAsItWas() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        CLIRunner.waitForCompactions(store)
        #expect(CLIRunner.run(["history", "--id", "rome-summit"], store: store).code == 0)
        #expect(FileIO.exists(store + "/snapshot-1.history-index"))
        var before = stat(), after = stat()
        stat(store, &before)
        let v = CLIRunner.run(["verify"], store: store)
        stat(store, &after)
        #expect(v.code == 0 && v.out.contains("the history index"), "\(v.out) \(v.err)")
        #expect(before.st_mtim.tv_sec == after.st_mtim.tv_sec && before.st_mtim.tv_nsec == after.st_mtim.tv_nsec, "a file was made or removed")
        // A folder where the image goes: verify --repair removes it when it is empty, and says so when it cannot.
        let image = store + "/snapshot-1.image"
        FileIO.unlink(image)
        try FileManager.default.createDirectory(atPath: image + "/inside", withIntermediateDirectories: true)
        let full = CLIRunner.run(["verify", "--repair"], store: store)
        #expect(full.code == 2 && full.err.contains("could not be removed"), "\(full.out) \(full.err)")
        try FileManager.default.removeItem(atPath: image + "/inside")
        #expect(CLIRunner.run(["verify", "--repair"], store: store).code == 0)
        #expect(!FileIO.exists(image))
    }

    /// `compact` with nothing new still writes without holding writers back.
    @Test func compactOfAnEmptyJournalHoldsNoWriterBack() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        let c = try CLIRunner.start(["--store", store, "compact"], env: ["TRIPSTORE_PAUSE_AT": "lockless-compaction-written"])
        usleep(500_000)
        let r = CLIRunner.run(["update", "rome-summit", "--set", "expenseCode=EX-7", "--wait", "0.5"], store: store)
        #expect(r.code == 0, "\(r.err)")
        c.waitUntilExit()
        #expect(c.terminationStatus == 0)
        #expect(CLIRunner.run(["get", "rome-summit"], store: store).out.contains("EX-7"))
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// `compact` writes without the lock: a writer that waits at most a
    /// second commits while it runs.
    @Test func compactHoldsNoWriterBack() throws {
        let store = CLIRunner.scratch() + "/store"
        var g = TripDataGenerator(seed: 21)
        let data = CLIRunner.scratch() + "/trips.json"
        try Data(g.jsonArray(trips: 3000)).write(to: URL(fileURLWithPath: data))
        #expect(CLIRunner.run(["import", data], store: store).code == 0)
        #expect(CLIRunner.run(["update", "--where", "is Trip", "--set", "destination=Oslo"], store: store).code == 0)
        // Paused after writing, before it takes the lock to put the snapshot in place.
        let c = try CLIRunner.start(["--store", store, "compact"], env: ["TRIPSTORE_PAUSE_AT": "lockless-compaction-written"])
        usleep(300_000)
        let r = CLIRunner.run(["update", "--where", "is Trip && name ^= \"Q1\"", "--set", "destination=Bergen", "--wait", "1"], store: store)
        #expect(r.code == 0, "\(r.err)")
        c.waitUntilExit()
        #expect(c.terminationStatus == 0)
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
        #expect(CLIRunner.run(["query", "destination == \"Bergen\"", "--count"], store: store).out != "0\n")
    }
}
