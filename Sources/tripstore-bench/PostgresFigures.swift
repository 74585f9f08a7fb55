#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TripStoreEngine
import TripStoreModels

/// The feed into PostgreSQL (docs/postgres.md) on the benchmark's data, through
/// `psql` on the server that `PGHOST`/`PGPORT`/`PGUSER` name: the import
/// streamed as SQL against PostgreSQL's own `COPY` of the same rows, and a
/// follower's lag while a writer commits 1,000 single-object transactions a second.
struct PostgresFigures {
    let data: String
    let work: String
    let cli: String
    let emit: (String, Double, String) -> Void

    static let psql = "/usr/bin/psql"

    /// Runs `argv` (posix_spawn and waitpid: Foundation's `Process` can hang
    /// waiting here beside a long-running child) and returns its seconds,
    /// exit status and standard output.
    static func spawn(_ argv: [String]) -> (seconds: Double, status: Int32, out: String) {
        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { return (0, -1, "") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addclose(&actions, pipeFDs[0])
        posix_spawn_file_actions_addclose(&actions, pipeFDs[1])
        let cArgs = argv.map { strdup($0) } + [nil]
        let cEnv = ProcessInfo.processInfo.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for p in cArgs + cEnv { free(p) } }
        var pid: pid_t = 0
        let start = ProcessInfo.processInfo.systemUptime
        guard posix_spawn(&pid, argv[0], &actions, nil, cArgs, cEnv) == 0 else {
            close(pipeFDs[0]); close(pipeFDs[1])
            return (0, -1, "")
        }
        close(pipeFDs[1])
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(pipeFDs[0], $0.baseAddress, $0.count) }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            out.append(contentsOf: buffer[0..<n])
        }
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        return (ProcessInfo.processInfo.systemUptime - start, (status >> 8) & 0xff, String(decoding: out, as: UTF8.self))
    }

    /// Runs `sh -c script` and returns its seconds and exit status.
    func shell(_ script: String) throws -> (Double, Int32) {
        let r = Self.spawn(["/bin/sh", "-c", script])
        return (r.seconds, r.status)
    }

    static func value(_ db: String, _ sql: String) -> String {
        spawn([psql, "-X", "-tA", "-d", db, "-c", sql]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    func database(_ name: String, schemaSQL: String) throws -> String {
        let db = "bench_\(name)_\(getpid())"
        _ = try shell("\(Self.psql) -X -q -d postgres -c 'DROP DATABASE IF EXISTS \(db)' -c 'CREATE DATABASE \(db)' && "
                      + "\(Self.psql) -X -q -v ON_ERROR_STOP=1 -d \(db) -f '\(schemaSQL)' > /dev/null")
        return db
    }

    mutating func run() throws {
        guard FileManager.default.isExecutableFile(atPath: Self.psql), !Self.value("postgres", "select 1").isEmpty else {
            FileHandle.standardError.write(Data("tripstore-bench: --postgres needs psql and a server (PGHOST, PGPORT, PGUSER); skipped\n".utf8))
            return
        }
        let store = work + "/pg-store"
        try? FileManager.default.removeItem(atPath: store)
        guard try shell("'\(cli)' --store '\(store)' import '\(data)' > /dev/null").1 == 0 else { throw BenchError("the import for PostgreSQL failed") }
        let schemaSQL = work + "/pg-schema.sql", feedSQL = work + "/pg-feed.sql", rows = work + "/pg-rows.copy"
        _ = try shell("'\(cli)' --store '\(store)' schema --format sql > '\(schemaSQL)'")
        _ = try shell("'\(cli)' --store '\(store)' history --format sql --since 0 > '\(feedSQL)'")
        // The same rows as PostgreSQL's own COPY reads them: the feed's COPY block of objects alone.
        _ = try shell("awk '/^COPY [^ ]*[.]objects /{on=1; next} /^\\\\\\.$/{on=0} on' '\(feedSQL)' > '\(rows)'")
        let feedDB = try database("feed", schemaSQL: schemaSQL), copyDB = try database("copy", schemaSQL: schemaSQL)
        // Each side as a user runs it: a pipe from the command into psql; psql reading the rows file.
        // Each side starts just after a checkpoint: the write-ahead log of
        // what ran before would otherwise make PostgreSQL checkpoint in the
        // middle of one side and not the other (1.4–2.5× between runs).
        let checkpoint = "\(Self.psql) -X -q -d postgres -c CHECKPOINT > /dev/null 2>&1; sync"
        _ = try shell(checkpoint)
        let feed = try shell("'\(cli)' --store '\(store)' history --format sql --since 0 | \(Self.psql) -X -q -v ON_ERROR_STOP=1 -d \(feedDB) > /dev/null")
        _ = try shell(checkpoint)
        let copy = try shell("\(Self.psql) -X -q -v ON_ERROR_STOP=1 -d \(copyDB) -c \"\\\\copy tripstore.objects (id, type, types, data, token) from '\(rows)'\"")
        guard feed.1 == 0, copy.1 == 0 else { throw BenchError("the feed (exit \(feed.1)) or the COPY (exit \(copy.1)) into PostgreSQL failed") }
        let objects = Self.value(feedDB, "select count(*) from tripstore.objects")
        guard objects == Self.value(copyDB, "select count(*) from tripstore.objects") else { throw BenchError("the feed and COPY loaded other rows") }
        emit("pg_feed_import_s", feed.0, "s")
        emit("pg_copy_same_rows_s", copy.0, "s")
        emit("pg_feed_vs_copy", feed.0 / copy.0, "x")
        try followerLag(store: store, db: feedDB)
        _ = try shell("\(Self.psql) -X -q -d postgres -c 'DROP DATABASE \(feedDB)' -c 'DROP DATABASE \(copyDB)'")
    }

    /// A follower pipeline into PostgreSQL while this process commits 1,000
    /// single-object transactions a second for 3 seconds: how far behind the
    /// cursor is when the writer stops, and how long until it has the last token.
    func followerLag(store: String, db: String) throws {
        let cursor = Self.value(db, "select token from tripstore.cursor")
        // The pipeline runs on in the background; its shell's pid is kept to stop it.
        let pidFile = work + "/pg-follower.pid"
        _ = try shell("( '\(cli)' --store '\(store)' history --follow --format sql --since \(cursor) | \(Self.psql) -X -q -v ON_ERROR_STOP=1 -d \(db) ) "
                      + "< /dev/null > /dev/null 2>&1 & echo $! > '\(pidFile)'")
        Thread.sleep(forTimeInterval: 0.5)
        let w = try Store.open(store, schema: TripSchema.schema, access: .write)
        let trip = w.schema.entity(named: "Trip")!
        let rows = try w.run(Query("is Trip", limit: 1000)).rows
        var last: Int64 = 0
        let start = ProcessInfo.processInfo.systemUptime
        for k in 0..<3000 {
            // Paced at 1,000 a second.
            let due = start + Double(k) / 1000
            let now = ProcessInfo.processInfo.systemUptime
            if due > now { usleep(UInt32((due - now) * 1_000_000)) }
            var tx = w.transaction()
            tx.setAttribute(rows[k % rows.count], slot: trip.property(named: "name")!.slot, to: .string("lag \(k)"))
            if let t = try w.commit(tx, author: "bench") { last = t.token }
        }
        let stopped = ProcessInfo.processInfo.systemUptime
        let rate = 3000 / (stopped - start)
        w.close()
        let behind = Int64(Self.value(db, "select token from tripstore.cursor")).map { last - $0 } ?? -1
        var caughtUp = -1.0
        while ProcessInfo.processInfo.systemUptime < stopped + 60 {
            if let t = Int64(Self.value(db, "select token from tripstore.cursor")), t >= last {
                caughtUp = ProcessInfo.processInfo.systemUptime - stopped
                break
            }
            usleep(10_000)
        }
        _ = try shell("pkill -P \"$(cat '\(pidFile)')\"; kill \"$(cat '\(pidFile)')\"")
        emit("pg_follow_commits_per_s", rate, "commits/s")
        emit("pg_follow_tokens_behind_at_stop", Double(behind), "transactions")
        emit("pg_follow_caught_up_after_stop_ms", caughtUp * 1000, "ms")
    }
}

struct BenchError: Error, CustomStringConvertible {
    var description: String
    init(_ d: String) { description = d }
}

