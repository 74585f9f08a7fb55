import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// The store streamed into a real PostgreSQL through `psql` (docs/postgres.md).
@Suite(.serialized) struct PostgresFeedTests {
    /// Runs the SQL a tripstore command prints through `psql -v ON_ERROR_STOP=1` into `db`.
    @discardableResult
    func pipe(_ args: [String], store: String, into db: String) -> Postgres.Result {
        let r = CLIRunner.run(args, store: store)
        #expect(r.code == 0, "\(args): \(r.err)")
        return Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(r.out.utf8))
    }

    /// The objects in PostgreSQL and in the store's export, as parsed JSON, by id.
    func sameObjects(_ db: String, _ store: String, _ comment: String) throws {
        let pg = Postgres.psql(["-d", db, "-tAc", "select jsonb_build_object('type', type, 'id', id, 'data', data) from tripstore.objects order by id collate \"C\""])
        let exported = CLIRunner.run(["export", "--format", "jsonl"], store: store).out
        func parse(_ text: String) throws -> [String: NSDictionary] {
            var out: [String: NSDictionary] = [:]
            for line in text.split(separator: "\n") {
                let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! NSDictionary
                out[o["id"] as! String] = o
            }
            return out
        }
        let a = try parse(pg.out), b = try parse(exported)
        #expect(a.count == b.count, "\(comment): \(a.count) objects in PostgreSQL, \(b.count) in the store")
        let differing = b.keys.filter { a[$0] != b[$0] }.sorted()
        #expect(differing.isEmpty, "\(comment): \(differing.count) objects differ, first \(differing.first ?? "")")
    }

    @Test func theSampleDataStreamsInAndStaysEqual() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()  // import, update, delete, compact
        // The DDL twice: harmless.
        #expect(pipe(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(pipe(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "0")
        // The history rows are compressed with LZ4 where the server has it (a bulk import's row is big).
        let serverHasLZ4 = Postgres.psql(["-d", db, "-c", "set default_toast_compression = lz4"]).status == 0
        let compression = Postgres.value(db, "select attcompression from pg_attribute where attrelid = 'tripstore.history'::regclass and attname = 'changes'")
        #expect(compression == (serverHasLZ4 ? "l" : ""), "history.changes compression '\(compression)'")
        let first = CLIRunner.run(["history", "--format", "sql", "--since", "0"], store: store).out
        #expect(first.contains("COPY \"tripstore\".objects"), "the import of many objects goes through COPY")
        let r = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(first.utf8))
        #expect(r.status == 0, "\(r.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "3")
        try sameObjects(db, store, "after the sample data")
        // Its history row goes through COPY too, and holds the changes `history --format jsonl` prints.
        #expect(first.contains("COPY \"tripstore\".history"))
        let line = try #require(CLIRunner.run(["history", "--format", "jsonl"], store: store).out.split(separator: "\n").first)
        let printed = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! NSDictionary
        let row = Postgres.value(db, "select json_build_array(author, changes) from tripstore.history where token = 1")
        let stored = try JSONSerialization.jsonObject(with: Data(row.utf8)) as! NSArray
        #expect(stored[0] as? String == printed["author"] as? String)
        #expect(stored[1] as? NSArray == printed["changes"] as? NSArray)
        #expect((stored[1] as? NSArray)?.count ?? 0 >= 20)
        // A cascading delete, an update, a redaction and a migration follow.
        #expect(CLIRunner.run(["delete", "romeoville-audit"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "perDiemRate=201.5"], store: store).code == 0)
        #expect(CLIRunner.run(["history", "redact", "--id", "rome-summit"], store: store).code == 0)
        #expect(CLIRunner.run(["migrate", "--schema", try CLIMigrateTests.version2()], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "place=Roma"], store: store).code == 0)
        let more = pipe(["history", "--format", "sql", "--since", "3"], store: store, into: db)
        #expect(more.status == 0, "\(more.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "8")
        #expect(Postgres.value(db, "select count(*) from tripstore.history") == "8")
        try sameObjects(db, store, "after a delete, a redaction and a migration")
        // The redaction rewrote the earlier history rows too.
        let rows = Postgres.value(db, "select count(*) from tripstore.history where changes::text like '%\"perDiemRate\": 201.5%'")
        #expect(rows == "0", "the redacted value is gone from every history row")
        #expect(Postgres.value(db, "select count(*) from tripstore.objects where types @> ARRAY['Trip'] and data->>'place' = 'Roma'") == "1")
    }

    /// A bulk import's objects land as the import made them, those changed
    /// since included: the feed of its token alone, then the rest.
    @Test func aBulkImportLandsAsItWasThoughSomeObjectsChangedSince() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch()
        var g = TripDataGenerator(seed: 31)
        let input = CLIRunner.scratch() + ".json"
        try Data(g.jsonArray(trips: 30)).write(to: URL(fileURLWithPath: input))
        #expect(CLIRunner.run(["import", input], store: store).code == 0)
        let before = CLIRunner.run(["export", "--format", "jsonl"], store: store).out
        let ids = CLIRunner.run(["query", "is BusinessTrip", "--format", "ids"], store: store).out.split(separator: "\n").map(String.init)
        let changed = try #require(ids.first), kept = try #require(ids.last)
        #expect(CLIRunner.run(["update", changed, "--set", "name=renamed later"], store: store).code == 0)
        pipe(["schema", "--format", "sql"], store: store, into: db)
        let feed = CLIRunner.run(["history", "--format", "sql", "--since", "0"], store: store).out
        let firstEnd = try #require(feed.range(of: "COMMIT;\n"))
        let r = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(feed[..<firstEnd.upperBound].utf8))
        #expect(r.status == 0, "\(r.err)")
        func data(_ id: String) throws -> NSDictionary {
            let text = Postgres.value(db, "select data from tripstore.objects where id = '\(id)'")
            return try JSONSerialization.jsonObject(with: Data(text.utf8)) as! NSDictionary
        }
        func exported(_ id: String, in jsonl: String) throws -> NSDictionary? {
            for line in jsonl.split(separator: "\n") {
                let o = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! NSDictionary
                if o["id"] as? String == id { return o["data"] as? NSDictionary }
            }
            return nil
        }
        #expect(try data(changed) == exported(changed, in: before), "as the import made it")
        #expect(try data(kept) == exported(kept, in: before))
        let rest = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(feed[firstEnd.upperBound...].utf8))
        #expect(rest.status == 0, "\(rest.err)")
        #expect(try data(changed)["name"] as? String == "renamed later")
        try sameObjects(db, store, "after the update")
    }

    /// The DDL run again while a feed's transaction is under way waits for
    /// it, even where `history.changes` is not LZ4 yet (as an older DDL left
    /// it, so this run alters the table): a feed locks the cursor, then
    /// writes history, and the DDL takes the cursor's lock before it alters
    /// history. The other way round, the two deadlocked and one was killed.
    @Test func theDDLRunAgainBesideAFeedWaitsForIt() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()
        let ddl = Data(CLIRunner.run(["schema", "--format", "sql"], store: store).out.utf8)
        #expect(Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: ddl).status == 0)
        let serverHasLZ4 = Postgres.psql(["-d", db, "-c", "set default_toast_compression = lz4"]).status == 0
        #expect(Postgres.psql(["-d", db, "-c", "ALTER TABLE tripstore.history ALTER COLUMN changes SET COMPRESSION pglz"]).status == 0)
        let feed = Data("""
            BEGIN;
            SELECT token FROM tripstore.cursor FOR UPDATE;
            SELECT pg_sleep(1.5);
            INSERT INTO tripstore.history (token, "timestamp", author, changes) VALUES (1, now(), 'feed', '[]');
            UPDATE tripstore.cursor SET token = 1;
            COMMIT;

            """.utf8)
        final class Outcome: @unchecked Sendable { var result: Postgres.Result? }
        let outcome = Outcome(), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            outcome.result = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: feed)
            done.signal()
        }
        Thread.sleep(forTimeInterval: 0.5)  // the feed holds the cursor
        let again = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: ddl)
        done.wait()
        #expect(again.status == 0, "the DDL run again: \(again.err)")
        #expect(outcome.result?.status == 0, "the feed: \(outcome.result?.err ?? "")")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "1")
        let compression = Postgres.value(db, "select attcompression from pg_attribute where attrelid = 'tripstore.history'::regclass and attname = 'changes'")
        #expect(compression == (serverHasLZ4 ? "l" : "p"))
    }

    @Test func aGapOrARepeatStopsPsqlNamingBothTokens() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()
        pipe(["schema", "--format", "sql"], store: store, into: db)
        let gap = pipe(["history", "--format", "sql", "--since", "1"], store: store, into: db)
        #expect(gap.status != 0)
        #expect(gap.err.contains("token 2 follows token 1, but this database is at token 0"), "\(gap.err)")
        #expect(Postgres.value(db, "select count(*) from tripstore.objects") == "0")
        #expect(pipe(["history", "--format", "sql", "--since", "0"], store: store, into: db).status == 0)
        let again = pipe(["history", "--format", "sql", "--since", "2"], store: store, into: db)
        #expect(again.status != 0)
        #expect(again.err.contains("token 3 follows token 2, but this database is at token 3"), "\(again.err)")
        #expect(Postgres.value(db, "select count(*) from tripstore.history") == "3")
    }

    @Test func aStoreWhoseEarlyHistoryWasPrunedSeedsThenFollows() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()
        #expect(CLIRunner.run(["history", "prune", "--before", "3"], store: store).code == 0)
        pipe(["schema", "--format", "sql"], store: store, into: db)
        #expect(CLIRunner.run(["history", "--format", "sql", "--since", "0"], store: store).code == 1)
        #expect(pipe(["export", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "3")
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "perDiemRate=150"], store: store).code == 0)
        #expect(pipe(["history", "--format", "sql", "--since", "3"], store: store, into: db).status == 0)
        try sameObjects(db, store, "seeded, then followed")
        // Seeding a database that is not empty is refused.
        #expect(pipe(["export", "--format", "sql"], store: store, into: db).status != 0)
    }

    /// `history --follow --format sql | psql`, killed at random moments and
    /// resumed from the cursor, applies every token exactly once.
    @Test func aKilledFollowerResumesWithEveryTokenOnce() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch() + "/store"
        var g = TripDataGenerator(seed: 45)
        let input = CLIRunner.scratch() + "/trips.json"
        try Data(g.jsonArray(trips: 2000)).write(to: URL(fileURLWithPath: input))
        #expect(try CLIRunner.runProcess(["--store", store, "import", input]).status == 0)
        pipe(["schema", "--format", "sql"], store: store, into: db)
        let ids = CLIRunner.run(["query", "is BusinessTrip", "--limit", "300", "--format", "ids"], store: store).out.split(separator: "\n")
        // A writer commits single-object updates while the follower is killed and restarted.
        let writer = Thread {
            for (k, id) in ids.enumerated() {
                _ = CLIRunner.run(["update", String(id), "--set", "perDiemRate=\(100 + k)"], store: store)
            }
        }
        writer.start()
        var random = SplitMix(seed: 11)
        let env = ProcessInfo.processInfo.environment
        for _ in 0..<6 {
            let cursor = Postgres.value(db, "select token from tripstore.cursor")
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/sh")
            p.arguments = ["-c", "exec \"$0\" --store \"$1\" history --follow --format sql --since \"$2\" | psql -X -q -v ON_ERROR_STOP=1 -d \"$3\"",
                           CLIRunner.binary, store, cursor, db]
            p.environment = env
            p.standardOutput = FileHandle.nullDevice
            p.standardError = FileHandle.nullDevice
            try p.run()
            usleep(UInt32(200_000 + random.next() % 600_000))
            // kill -9 the whole pipeline: the shell's children too.
            _ = try? CLIRunner.runProcess(["pkill", "-9", "-P", String(p.processIdentifier)], executable: "/usr/bin/pkill")
            kill(p.processIdentifier, SIGKILL)
            p.waitUntilExit()
        }
        while writer.isExecuting { usleep(50_000) }
        let last = CLIRunner.run(["stats"], store: store).out.split(separator: "\n").first { $0.hasPrefix("last token") }
            .map { String($0.split(separator: " ").last ?? "") } ?? ""
        // The last resume runs to the end.
        let cursor = Postgres.value(db, "select token from tripstore.cursor")
        let rest = pipe(["history", "--format", "sql", "--since", cursor], store: store, into: db)
        #expect(rest.status == 0, "\(rest.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == last)
        #expect(Postgres.value(db, "select count(*) from tripstore.history") == last)
        #expect(Postgres.value(db, "select count(distinct token) from tripstore.history") == last)
        try sameObjects(db, store, "after kills and resumes")
    }
}
