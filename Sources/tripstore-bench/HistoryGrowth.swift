import Foundation
import TripStoreEngine
import TripStoreModels

/// The bulk writes and audit reads, as a user runs them: each step a
/// fresh `tripstore` process on a store of its own, made by `tripstore
/// import` from the benchmark's data (so that nothing the rest of the
/// benchmark writes ages it, and its figures are left as they were).
///
/// The audit reads (`history --id`, `get --history`, `history --deletes
/// --limit 20`) run twice: fresh, right after the import, and aged, after
/// every trip's destination was updated (once, or `--history-changes`
/// rounds) and the trips named "Q1…" deleted, as SQLite's peer ages its
/// audit table. Aged against fresh shows what a longer history costs a read.
struct HistoryGrowth {
    /// The benchmark's data file and where this store goes (removed at the end).
    let data: String
    let store: String
    /// `--history-changes`: changes of a trip's destination to make in all
    /// before the delete (0: one bulk update).
    let changes: Int
    let emit: (String, Double, String) -> Void
    /// Runs the CLI on `store` (arguments, trace): (seconds, output, trace).
    let runCLI: ([String], Bool) -> (Double, String, String)
    /// The peak resident bytes a trace reports.
    let peak: (String) -> Double
    /// `sync`, a second's pause, and the file read into the page cache.
    let settle: (String) -> Void
    /// Checks that failed (each said on standard error); the benchmark exits non-zero.
    var mismatches = 0

    /// The value SQLite's peer sets (`BULK_DESTINATION` in scripts/peer_sqlite.py).
    static let destination = "Bulk City, Nowhere"
    static let q1 = #"is Trip && name ^= "Q1""#
    /// The audit reads: a figure's name, and the arguments for the audited
    /// trip's id. `stats` first, the open alone, to tell an open that grew
    /// (a journal to replay) from a read that did.
    static let reads: [(String, @Sendable (String) -> [String])] = [
        ("stats", { _ in ["stats"] }),
        ("history_id", { ["history", "--id", $0] }),
        ("get_history", { ["get", $0, "--history"] }),
        ("history_deletes_20", { _ in ["history", "--deletes", "--limit", "20"] }),
    ]

    mutating func run() throws {
        settle(data)
        let imported = runCLI(["import", data, "--author", "bench"], false)
        guard imported.1.contains("inserted") else { throw BenchError("the history store's import printed \(imported.1)") }
        let (audited, trips, q1) = try pick()
        let fresh = readAudit(audited, phase: "fresh")
        try bulkUpdate(trips)
        age(trips)
        try bulkDelete(q1)
        let aged = readAudit(audited, phase: "aged")
        for (name, _) in Self.reads {
            guard let f = fresh[name], let a = aged[name], f > 0 else { continue }
            emit("\(name)_aged_vs_fresh", a / f, "x")
        }
        try? FileManager.default.removeItem(atPath: store)
    }

    mutating func check(_ ok: Bool, _ message: @autoclosure () -> String) {
        guard !ok else { return }
        mismatches += 1
        FileHandle.standardError.write(Data("tripstore-bench: \(message())\n".utf8))
    }

    /// Counts on the store in this process (not measured).
    func count(_ predicate: String) throws -> Int {
        let s = try Store.open(store, schema: TripSchema.schema, access: .read)
        defer { s.close() }
        return try s.run(Query(predicate), countOnly: true).total ?? 0
    }

    /// The trip whose audit is read (the one in the middle of those the delete
    /// keeps, so that it exists throughout), the trips, and those named "Q1…".
    func pick() throws -> (id: String, trips: Int, q1: Int) {
        let s = try Store.open(store, schema: TripSchema.schema, access: .read)
        defer { s.close() }
        let kept = try s.run(Query(#"is Trip && !(name ^= "Q1")"#)).rows
        guard !kept.isEmpty, let id = s.table.object(at: kept[kept.count / 2])?.id else { throw BenchError("the history store holds no trips") }
        let trips = try s.run(Query("is Trip"), countOnly: true).total ?? 0
        let q1 = try s.run(Query(Self.q1), countOnly: true).total ?? 0
        return (id, trips, q1)
    }

    /// Each audit read as fresh processes: one warm-up, the median of 5, and
    /// one more traced for its peak memory. `get --history` prints what
    /// `history --id` does; aged, there are deletes to print. Returns the
    /// medians by name.
    mutating func readAudit(_ id: String, phase: String) -> [String: Double] {
        settle(store)
        var medians: [String: Double] = [:]
        var outputs: [String: String] = [:]
        for (name, arguments) in Self.reads {
            let argv = arguments(id)
            var output = runCLI(argv, false).1
            var times: [Double] = []
            for _ in 0..<5 {
                let (t, out, _) = runCLI(argv, false)
                times.append(t)
                output = out
            }
            let ms = times.sorted()[times.count / 2] * 1000
            medians[name] = ms
            emit("cli_\(name)_\(phase)_ms", ms, "ms")
            emit("cli_\(name)_\(phase)_peak_rss_bytes", peak(runCLI(argv, true).2), "bytes")
            emit("cli_\(name)_\(phase)_output_bytes", Double(output.utf8.count), "bytes")
            outputs[name] = output
        }
        check(!(outputs["history_id"] ?? "").isEmpty && outputs["get_history"] == outputs["history_id"],
              "\(phase): get \(id) --history and history --id \(id) printed different timelines")
        check(phase == "fresh" || !(outputs["history_deletes_20"] ?? "").isEmpty, "\(phase): history --deletes printed nothing")
        return medians
    }

    /// Every trip's destination in one `update --where`, after `sync` and a
    /// second's pause as SQLite's peer starts its own: time and peak memory
    /// from one traced run; then every trip is checked to hold the new value.
    mutating func bulkUpdate(_ trips: Int) throws {
        settle(store)
        let (seconds, _, traced) = runCLI(["update", "--where", "is Trip", "--set", "destination=\(Self.destination)"], true)
        emit("cli_bulk_update_s", seconds, "s")
        emit("cli_bulk_update_peak_rss_bytes", peak(traced), "bytes")
        let updated = try count("is Trip && destination == \"\(Self.destination)\"")
        emit("cli_bulk_update_rows", Double(updated), "rows")
        check(updated == trips, "the bulk update left \(updated) of \(trips) trips with the new destination")
    }

    /// With `--history-changes K`, further updates of every trip's
    /// destination (`round-N`) until about K changes were made in all, the
    /// bulk update the first of them: at 100,000 trips, 2,000,000 is the
    /// product's aged store (20 updates of every trip, then the delete).
    func age(_ trips: Int) {
        let rounds = changes > 0 && trips > 0 ? max(1, Int((Double(changes) / Double(trips)).rounded())) : 1
        emit("history_update_rounds", Double(rounds), "rounds")
        guard rounds > 1 else { return }
        var times: [Double] = []
        for k in 2...rounds {
            times.append(runCLI(["update", "--where", "is Trip", "--set", "destination=round-\(k)"], false).0)
        }
        emit("cli_aging_update_mean_s", times.reduce(0, +) / Double(times.count), "s")
        emit("cli_aging_update_last_s", times.last ?? 0, "s")
    }

    /// Every trip named "Q1…" deleted in one `delete --where`; the trips are
    /// counted before and after.
    mutating func bulkDelete(_ q1: Int) throws {
        let (seconds, _, traced) = runCLI(["delete", "--where", Self.q1], true)
        emit("cli_bulk_delete_s", seconds, "s")
        emit("cli_bulk_delete_peak_rss_bytes", peak(traced), "bytes")
        emit("cli_bulk_delete_rows", Double(q1), "rows")
        let left = try count(Self.q1)
        check(left == 0 && q1 > 0, "the bulk delete left \(left) of \(q1) trips named Q1…")
    }
}
