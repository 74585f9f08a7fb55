import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

extension Store {
    func decodeCount(_ path: String) throws -> Int {
        try EnvelopeInput.decode(try FileIO.readFile(path), schema: schema).count
    }
}

/// Kills a real `tripstore` process at chosen points and checks what survives.
@Suite(.serialized) struct CrashTests {
    func file(_ trips: Int, seed: UInt64) throws -> String {
        var g = TripDataGenerator(seed: seed)
        let path = CLIRunner.runRoot + "crash-\(seed)-\(UUID().uuidString).json"
        try Data(g.jsonArray(trips: trips)).write(to: URL(fileURLWithPath: path))
        return path
    }

    func count(_ store: String) throws -> Int {
        try Store.open(store, schema: TripSchema.schema, access: .read).table.count
    }

    @Test(arguments: ["journal-mid-write", "journal-before-fsync", "journal-after-fsync",
                      "snapshot-mid-write", "snapshot-before-rename", "snapshot-after-rename", "image-mid-write"])
    func killedImportIsAllOrNothing(_ point: String) throws {
        let store = CLIRunner.runRoot + "crash-store-\(UUID().uuidString)"
        let first = try file(30, seed: 1), second = try file(300, seed: 2)
        #expect(try CLIRunner.runProcess(["--store", store, "import", first]).status == 0)
        let before = try count(store)
        // Journal points: the import is a journal line (then an automatic snapshot).
        // Snapshot points: the import is committed by writing a snapshot.
        let env = point.hasPrefix("journal")
            ? ["TRIPSTORE_CRASH_AT": point, "TRIPSTORE_SNAPSHOT_BYTES": "1000", "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "1000000"]
            : ["TRIPSTORE_CRASH_AT": point, "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "10"]
        let r = try CLIRunner.runProcess(["--store", store, "import", second], env: env)
        #expect(r.killed, "the process should have been killed at \(point)")
        var verify = try CLIRunner.runProcess(["--store", store, "verify"])
        if verify.status == 2 {
            #expect(try CLIRunner.runProcess(["--store", store, "verify", "--repair"]).status == 0)
            verify = try CLIRunner.runProcess(["--store", store, "verify"])
        }
        #expect(verify.status == 0)
        let after = try count(store)
        let whole = before + (try Store.empty(schema: TripSchema.schema).decodeCount(second))
        // Committed once the journal line is flushed or the snapshot renamed; not before.
        // Killed between write and fsync, the page cache still holds the line (a kill is
        // not a power cut), so either outcome is whole.
        switch point {
        case "journal-mid-write", "snapshot-mid-write", "snapshot-before-rename": #expect(after == before)
        case "journal-before-fsync": #expect(after == before || after == whole)
        default: #expect(after == whole, "\(point): \(before) → \(after), expected \(whole)")
        }
        if point == "image-mid-write" {
            // The snapshot was durable before its image was bound: the store opens from the JSON.
            let opened = try Store.open(store, schema: TripSchema.schema, access: .read)
            #expect(!opened.loadedFromImage)
            #expect(opened.checkInvariants().isEmpty)
        }
        // The store still takes writes.
        #expect(try CLIRunner.runProcess(["--store", store, "import", try file(3, seed: 3)]).status == 0)
        #expect(try count(store) > after)
    }

    /// `update --where` of many objects (made without staging, committed by
    /// a snapshot) killed at each point of that snapshot: every trip renamed, or none.
    @Test(arguments: ["snapshot-mid-write", "snapshot-before-rename", "snapshot-after-rename", "image-mid-write"])
    func killedBulkUpdateIsAllOrNothing(_ point: String) throws {
        let store = CLIRunner.runRoot + "crash-bulk-update-\(UUID().uuidString)"
        #expect(try CLIRunner.runProcess(["--store", store, "import", try file(60, seed: 6)]).status == 0)
        let r = try CLIRunner.runProcess(["--store", store, "update", "--where", "is Trip", "--set", "destination=Killed"],
                                         env: ["TRIPSTORE_CRASH_AT": point, "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "10"])
        #expect(r.killed, "the process should have been killed at \(point)")
        #expect(try CLIRunner.runProcess(["--store", store, "verify"]).status == 0)
        let s = try Store.open(store, schema: TripSchema.schema, access: .read)
        let renamed = try s.run(try Query("destination == \"Killed\"", from: "Trip")).rows.count
        let trips = try s.run(try Query("is Trip", from: "Trip")).rows.count
        s.close()
        switch point {
        case "snapshot-mid-write", "snapshot-before-rename": #expect(renamed == 0)
        default: #expect(renamed == trips, "\(point): \(renamed) of \(trips)")
        }
        // The store still takes writes.
        #expect(try CLIRunner.runProcess(["--store", store, "update", "--where", "is Trip", "--set", "destination=After"]).status == 0)
    }

    /// An input that another process shrinks while the import has it mapped
    /// ends the import with exit 1 and a message (not a crash), and the
    /// store is not written.
    @Test func anInputThatShrinksWhileMappedExits1() throws {
        let store = CLIRunner.runRoot + "crash-store-\(UUID().uuidString)"
        let input = try file(300, seed: 4)
        defer { unlink(input) }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        p.arguments = ["--store", store, "import", input]
        var env = ProcessInfo.processInfo.environment
        env["TRIPSTORE_CRASH_AT"] = "input-shrinks-after-map"
        env["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES"] = "10"
        p.environment = env
        let err = Pipe()
        p.standardOutput = FileHandle.nullDevice
        p.standardError = err
        try p.run()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 1)
        #expect(message == "error: the input file changed size or could not be read while it was imported; nothing was imported\n")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
        #expect(!files.contains { $0.hasPrefix("snapshot") || $0.hasPrefix("journal") }, "\(files)")
    }

    /// An input another process writes to while the bulk path reads it, or
    /// between the bulk path's read and the usual path's (when the bulk path
    /// declined it), is refused: imported half old and half new, or as a file
    /// other than the one checked, it would be neither. Exit 1, no store.
    @Test(arguments: ["input-grows-while-read", "input-grows-after-bulk-read"])
    func anInputWrittenWhileImportedIsRefused(_ point: String) throws {
        let store = CLIRunner.runRoot + "grow-store-\(UUID().uuidString)"
        let input = try file(300, seed: 5)
        defer { unlink(input) }
        let p = try CLIRunner.start(["--store", store, "import", input],
                                    env: ["TRIPSTORE_CRASH_AT": point, "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "10"], stderr: true)
        let err = String(decoding: (p.standardError as? Pipe)?.fileHandleForReading.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationReason == .exit && p.terminationStatus == 1)
        #expect(err == "error: \(input) changed while it was imported (it is not the file first read); nothing was imported: import it again\n",
                "\(point): \(err)")
        let files = (try? FileManager.default.contentsOfDirectory(atPath: store)) ?? []
        #expect(!files.contains { $0.hasPrefix("snapshot") || $0.hasPrefix("journal") }, "\(point): \(files)")
    }

    @Test func twoWritersAtOnceNeitherLosesNorDuplicates() throws {
        let store = CLIRunner.runRoot + "lock-store-\(UUID().uuidString)"
        let a = try file(400, seed: 11), b = try file(400, seed: 12)
        let pa = try CLIRunner.start(["--store", store, "--wait", "30", "import", a])
        let pb = try CLIRunner.start(["--store", store, "--wait", "30", "import", b])
        pa.waitUntilExit()
        pb.waitUntilExit()
        #expect(pa.terminationStatus == 0 && pb.terminationStatus == 0)
        let s = try Store.open(store, schema: TripSchema.schema, access: .read)
        #expect(s.history.count == 2)
        #expect(s.checkInvariants().isEmpty)
    }

    @Test func aWriterThatCannotGetTheLockExits2() throws {
        let store = CLIRunner.runRoot + "lock2-\(UUID().uuidString)"
        #expect(try CLIRunner.runProcess(["--store", store, "import", try file(2, seed: 5)]).status == 0)
        let holder = try Store.open(store, schema: TripSchema.schema, access: .write)
        let r = CLIRunner.run(["import", try file(2, seed: 6), "--wait", "0.2"], store: store)
        #expect(r.code == 2)
        #expect(r.err.hasPrefix("error: the store is locked by another writer (pid \(getpid()))"))
        // Readers never wait.
        #expect(CLIRunner.run(["stats"], store: store).code == 0)
        holder.close()
    }

    @Test func flippedByteIsDamageAndVerifyChangesNothing() throws {
        let store = CLIRunner.runRoot + "flip-\(UUID().uuidString)"
        for seed in 1...3 { #expect(CLIRunner.run(["import", try file(2, seed: UInt64(seed))], store: store).code == 0) }
        let journal = store + "/journal-0.jsonl"
        var bytes = try Data(contentsOf: URL(fileURLWithPath: journal))
        let mid = bytes.firstIndex(of: 0x0A)! + 100
        bytes[mid] ^= 0x20
        try bytes.write(to: URL(fileURLWithPath: journal))
        let verify = CLIRunner.run(["verify", "--repair"], store: store)
        #expect(verify.code == 2)
        #expect(verify.err.contains("journal-0.jsonl line 2: checksum mismatch"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == bytes)
        #expect(CLIRunner.run(["import", try file(1, seed: 9)], store: store).code == 2)
        #expect(try Data(contentsOf: URL(fileURLWithPath: journal)) == bytes)
    }

    /// A standby applying a feed writes its automatic snapshots in the
    /// background: killed while one is written or put in place, it opens
    /// whole, takes the rest of the feed, and ends byte for byte the primary.
    @Test(arguments: ["background-snapshot-written", "background-snapshot-installing", "snapshot-journal-carried",
                      "background-snapshot-installed"])
    func killedStandbyWritingASnapshotInTheBackgroundResumes(_ point: String) throws {
        let primary = CLIRunner.runRoot + "crash-primary-\(UUID().uuidString)"
        let standby = CLIRunner.runRoot + "crash-standby-\(UUID().uuidString)"
        let bulk = ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "10"]
        #expect(CLIRunner.run(["import", try file(12, seed: 11)], store: primary, env: bulk).code == 0)
        for k in 0..<40 {
            #expect(CLIRunner.run(["update", "--where", "is Trip", "--set", "name=round \(k)"], store: primary).code == 0)
        }
        let feed = CLIRunner.run(["history", "--format", "feed"], store: primary)
        let lines = feed.out.split(separator: "\n").map(String.init)
        #expect(lines.count == 41)
        let feedFile = CLIRunner.runRoot + "crash-feed-\(UUID().uuidString).jsonl"
        try Data(feed.out.utf8).write(to: URL(fileURLWithPath: feedFile))

        // The first line goes in by a snapshot of its own (the bulk way), so
        // every automatic snapshot after it is written in the background.
        // (Its 12 trips hold about 100 objects; each update changes 12.)
        let r = try CLIRunner.runProcess(["--store", standby, "apply", feedFile],
                                         env: ["TRIPSTORE_CRASH_AT": point, "TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "50", "TRIPSTORE_SNAPSHOT_TRANSACTIONS": "8"])
        #expect(r.killed, "the process should have been killed at \(point)")
        #expect(CLIRunner.run(["verify"], store: standby).code == 0)
        let reader = try Store.open(standby, schema: TripSchema.schema, access: .read)
        let token = reader.lastToken
        reader.close()
        #expect(token >= 9, "the commits before the snapshot was started are durable")
        // Each feed line starts `{"token":N,`.
        let rest = lines.filter { Int64(String($0.dropFirst(9).prefix(while: \.isNumber))).map { $0 > token } ?? false }
        let restFile = feedFile + ".rest"
        try Data(rest.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: restFile))
        if !rest.isEmpty { #expect(try CLIRunner.runProcess(["--store", standby, "apply", restFile]).status == 0) }
        #expect(CLIRunner.run(["history", "--format", "feed"], store: standby).out == feed.out)
        #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: primary).out)
        #expect(CLIRunner.run(["verify"], store: standby).code == 0)
    }

    /// On a nearly full disk the snapshot being written in the background
    /// gives way to the commits: a journal line that finds no space makes it
    /// remove its files, and the line goes in. Needs `mount` (root); skipped elsewhere.
    @Test func aBackgroundSnapshotGivesWayToCommitsOnAFullDisk() throws {
        let primary = CLIRunner.runRoot + "full-primary-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", try file(300, seed: 12)], store: primary, env: ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "100"]).code == 0)
        let p = try Store.open(primary, schema: TripSchema.schema, access: .write)
        let trip = try #require(try p.run(Query("is Trip")).rows.first.flatMap { p.object(at: $0)?.id })
        for k in 0..<150 {
            var u = p.transaction()
            try u.set("name", of: trip, to: .string("round \(k) " + String(repeating: "x", count: 600)))
            try p.commit(u, author: "t")
        }
        p.close()
        let feed = CLIRunner.run(["history", "--format", "feed"], store: primary).out
        let lines = feed.split(separator: "\n").map { String($0) + "\n" }
        let disk = CLIRunner.scratch() + "/disk"
        try FileManager.default.createDirectory(atPath: disk, withIntermediateDirectories: true)
        guard try CLIRunner.runProcess(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", disk], executable: "/bin/mount").status == 0 else { return }
        defer { _ = try? CLIRunner.runProcess(["umount", disk], executable: "/bin/umount") }
        let standby = disk + "/standby"
        // The import by a snapshot of its own (so later ones can be written in the background).
        let first = CLIRunner.scratch() + "/first.jsonl", rest = CLIRunner.scratch() + "/rest.jsonl"
        try lines[0].write(toFile: first, atomically: false, encoding: .utf8)
        try lines.dropFirst().joined().write(toFile: rest, atomically: false, encoding: .utf8)
        #expect(try CLIRunner.runProcess(["--store", standby, "apply", first], env: ["TRIPSTORE_SNAPSHOT_COMMIT_CHANGES": "100"]).status == 0)
        // Fill the disk but for a snapshot and its image and a few lines. The
        // next snapshot is written while the lines wait half a second, then held
        // two seconds while they go on.
        let used = try FileManager.default.contentsOfDirectory(atPath: standby).reduce(0) { $0 + (FileIO.fileSize(standby + "/" + $1) ?? 0) }
        var stats = statvfs()
        #expect(statvfs(disk, &stats) == 0)
        let free = Int(stats.f_bavail) * Int(stats.f_frsize)
        // (Each line is about 1.5 KB: the next snapshot holds 20 more than this
        // one, and the 129 after it need more than the room left beside it.)
        try Data(count: max(0, free - used - (160 << 10))).write(to: URL(fileURLWithPath: disk + "/filler"))
        let r = try CLIRunner.runProcess(["--store", standby, "apply", rest],
                                         env: ["TRIPSTORE_SNAPSHOT_TRANSACTIONS": "20", "TRIPSTORE_PAUSE_AT": "background-snapshot-started,background-snapshot-written"])
        #expect(r.status == 0 && !r.killed)
        try FileManager.default.removeItem(atPath: disk + "/filler")
        let applied = CLIRunner.run(["history", "--format", "feed"], store: standby).out
        let same = applied == feed
        #expect(same, "\(applied.split(separator: "\n").count) of \(lines.count) lines")
        #expect(CLIRunner.run(["verify"], store: standby).code == 0)
    }
}
