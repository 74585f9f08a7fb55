#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TripStoreEngine
import TripStoreModels

/// The audit trail's figures on the benchmark's store: how soon `history
/// --follow` delivers a commit, `--as-of` against the same cold query now,
/// and a standby kept by `apply` compared with its primary.
struct HistoryFigures {
    let storePath: String
    let work: String
    let cli: String
    let transactions: Int
    let emit: (String, Double, String) -> Void
    /// Runs the CLI on a store and returns (seconds, standard output).
    let runCLI: ([String], String) -> (Double, String)
    /// Runs the CLI on a store with its standard output into a file; returns the seconds.
    let runCLIInto: ([String], String, String) -> Double
    var mismatches = 0

    static func median(_ xs: [Double]) -> Double {
        let s = xs.sorted()
        return s.isEmpty ? 0 : s[s.count / 2]
    }

    /// Starts `tripstore` with its standard output on a pipe.
    func start(_ arguments: [String], env: [String: String] = [:]) throws -> (Process, FileHandle) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: cli)
        p.arguments = arguments
        var e = ProcessInfo.processInfo.environment
        for (k, v) in env { e[k] = v }
        p.environment = e
        let pipe = Pipe()
        p.standardOutput = pipe
        p.standardError = FileHandle.nullDevice
        try p.run()
        return (p, pipe.fileHandleForReading)
    }

    /// CPU seconds a process has used (user + system), from /proc.
    static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 13, let u = Double(fields[11]), let s = Double(fields[12]) else { return 0 }
        return (u + s) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// A follower process and a writer in this one: the delay from each
    /// commit's return to its line on the follower's output.
    mutating func followLatency() throws {
        let (follower, output) = try start(["--store", storePath, "history", "--follow", "--format", "jsonl"])
        let arrivals = Arrivals()
        let reader = Thread {
            var pending: [UInt8] = []
            while true {
                let chunk = output.availableData
                if chunk.isEmpty { break }
                let at = ProcessInfo.processInfo.systemUptime
                pending.append(contentsOf: chunk)
                while let nl = pending.firstIndex(of: 0x0A) {
                    let line = Array(pending[..<nl])
                    pending.removeSubrange(...nl)
                    if case .int(let t)? = (try? JSONReader.parse(line))?["token"] { arrivals.put(t, at) }
                }
            }
        }
        reader.start()
        // Idle means after its start: opening for a follow checks the whole
        // image, which takes seconds of both cores at 1,000,000 trips.
        var settled = Self.cpuSeconds(follower.processIdentifier)
        for _ in 0..<120 {
            Thread.sleep(forTimeInterval: 0.5)
            let now = Self.cpuSeconds(follower.processIdentifier)
            defer { settled = now }
            if now - settled < 0.02 { break }
        }
        let cpuBefore = Self.cpuSeconds(follower.processIdentifier)
        Thread.sleep(forTimeInterval: 2)
        emit("follow_idle_cpu_percent", (Self.cpuSeconds(follower.processIdentifier) - cpuBefore) / 2 * 100, "%")
        let w = try Store.open(storePath, schema: TripSchema.schema, access: .write)
        let trip = w.schema.entity(named: "Trip")!
        let rows = try w.run(Query("is Trip", limit: 1000)).rows
        var committed: [Int64: Double] = [:]
        for k in 0..<1000 {
            var tx = w.transaction()
            tx.setAttribute(rows[k % rows.count], slot: trip.property(named: "name")!.slot, to: .string("follow \(k)"))
            if let t = try w.commit(tx, author: "bench") { committed[t.token] = ProcessInfo.processInfo.systemUptime }
        }
        w.close()
        let deadline = ProcessInfo.processInfo.systemUptime + 60
        while arrivals.count < committed.count && ProcessInfo.processInfo.systemUptime < deadline { Thread.sleep(forTimeInterval: 0.05) }
        follower.terminate()
        follower.waitUntilExit()
        let latencies = committed.compactMap { token, at in arrivals.at(token).map { ($0 - at) * 1000 } }
        emit("follow_delivered_of_1000", Double(latencies.count), "transactions")
        emit("follow_latency_median_ms", Self.median(latencies), "ms")
        emit("follow_latency_p95_ms", latencies.sorted().dropFirst(latencies.count * 95 / 100).first ?? 0, "ms")
        emit("follow_exit_status", Double(follower.terminationStatus), "")
        if latencies.count != committed.count || follower.terminationStatus != 0 { mismatches += 1 }
    }

    /// `transactions` random transactions with compactions between; then
    /// `--as-of` the middle token against the same cold query now, and the
    /// export as of that token against the export taken then.
    mutating func timeTravelAndStandby() throws {
        let w = try Store.open(storePath, schema: TripSchema.schema, access: .write)
        let schema = w.schema
        let tripEntity = schema.entity(named: "Trip")!
        let meal = schema.entity(named: "BusinessMeal")!
        var random = SplitMix64(seed: 18)
        func pick(_ n: Int) -> Int { Int(random.next() % UInt64(max(1, n))) }
        var trips = try w.run(Query("is Trip")).rows
        let business = try w.run(Query("is BusinessTrip")).rows
        let meals = try w.run(Query("", from: "BusinessMeal")).rows
        let began = ProcessInfo.processInfo.systemUptime
        var middle: Int64 = 0
        var middleExport = ""
        for k in 0..<transactions {
            var tx = w.transaction()
            switch pick(10) {
            case 0, 1:
                let row = trips[pick(trips.count)]
                if tx.object(at: row) != nil { try tx.delete(row) }
            case 2:
                var g = TripDataGenerator(seed: 1_000_000 + UInt64(k))
                try w.stage(try EnvelopeInput.decode(g.jsonArray(trips: 1), schema: schema), mode: .insert, into: &tx)
            case 3:
                let m = meals[pick(meals.count)], b = business[pick(business.count)]
                if tx.object(at: m) != nil && tx.object(at: b) != nil { tx.link(m, slot: meal.property(named: "trip")!.slot, to: b) }
            default:
                let row = trips[pick(trips.count)]
                if tx.object(at: row) != nil {
                    tx.setAttribute(row, slot: tripEntity.property(named: "destination")!.slot, to: .string("Stop \(k)"))
                }
            }
            _ = try w.commit(tx, author: "bench-\(k % 7)")
            if k % 500 == 0 { trips = trips.filter { w.table.object(at: $0) != nil } }
            if k == transactions / 3 || k == 2 * transactions / 3 { try w.compact() }
            if k == transactions / 2 {
                middle = w.lastToken
                middleExport = runCLI(["export", "--format", "jsonl"], storePath).1
            }
        }
        emit("history_workload_commits_per_s", Double(transactions) / (ProcessInfo.processInfo.systemUptime - began), "commits/s")
        w.close()

        let query = ["query", #"is BusinessTrip && destination ~ "Rome""#, "--count"]
        func cold(_ args: [String]) -> Double {
            _ = runCLI(args, storePath)
            return Self.median((0..<5).map { _ in runCLI(args, storePath).0 }) * 1000
        }
        let current = cold(query)
        let past = cold(query + ["--as-of", String(middle)])
        emit("cli_query_b_now_ms", current, "ms")
        emit("cli_asof_query_b_ms", past, "ms")
        emit("asof_vs_now", past / current, "x")
        if runCLI(["export", "--format", "jsonl", "--as-of", String(middle)], storePath).1 != middleExport {
            mismatches += 1
            FileHandle.standardError.write(Data("export --as-of \(middle) differs from the export taken at that token\n".utf8))
        }

        // A standby made from the whole feed, compacting on its own as it goes.
        let feedPath = work + "/feed.jsonl", standby = work + "/standby"
        let feedSeconds = runCLIInto(["history", "--format", "feed"], storePath, feedPath)
        emit("feed_s", feedSeconds, "s")
        emit("feed_bytes", Double(FileIO.fileSize(feedPath) ?? 0), "bytes")
        let t = ProcessInfo.processInfo.systemUptime
        let (applier, _) = try start(["--store", standby, "apply", feedPath], env: ["TRIPSTORE_SNAPSHOT_BYTES": "4000000"])
        applier.waitUntilExit()
        emit("apply_s", ProcessInfo.processInfo.systemUptime - t, "s")
        // Compared as files: each export of a million trips runs to gigabytes.
        let exports = [standby, storePath].map { store in
            let path = work + "/\(store == standby ? "standby" : "primary").jsonl"
            _ = runCLIInto(["export", "--format", "jsonl"], store, path)
            return path
        }
        defer { for path in exports { try? FileManager.default.removeItem(atPath: path) } }
        let equal = applier.terminationStatus == 0 && FileManager.default.contentsEqual(atPath: exports[0], andPath: exports[1])
        emit("standby_export_equals_primary", equal ? 1 : 0, "bool")
        if !equal { mismatches += 1 }
        try? FileManager.default.removeItem(atPath: standby)
        try? FileManager.default.removeItem(atPath: feedPath)
    }
}

/// Arrival times by token, written by the reader thread.
final class Arrivals: @unchecked Sendable {
    private let lock = NSLock()
    private var times: [Int64: Double] = [:]
    func put(_ token: Int64, _ at: Double) { lock.lock(); if times[token] == nil { times[token] = at }; lock.unlock() }
    func at(_ token: Int64) -> Double? { lock.lock(); defer { lock.unlock() }; return times[token] }
    var count: Int { lock.lock(); defer { lock.unlock() }; return times.count }
}
