#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import TripStoreEngine
import TripStoreModels

/// Single durable commits on an existing store: one small update of the
/// trip in the middle per transaction, each flushed, for 25,000 commits (or
/// five times `budget` seconds). The 10,000th commit since a snapshot
/// starts the next one, written in the background while the commits go on
/// and put in place between two of them, so the run pays for two (SQLite's
/// peer pays for its checkpoints the same way). Returns the rate, how many
/// snapshots took their place, how long `close()` then waited for one still
/// being written, and the 99th percentile and the slowest commit.
func measureCommits(_ path: String, budget: Double) throws -> (perSecond: Double, snapshots: Int, closeSeconds: Double, p99: Double, max: Double) {
    sync()
    sleep(1)
    var options = StoreOptions()
    // To compare with the commit that writes the snapshot itself.
    options.snapshotsInBackground = ProcessInfo.processInfo.environment["TRIPSTORE_BENCH_FOREGROUND_SNAPSHOTS"] == nil
    // The command line's setting, to measure other thresholds.
    if let t = ProcessInfo.processInfo.environment["TRIPSTORE_SNAPSHOT_TRANSACTIONS"].flatMap(Int.init) { options.snapshotAfterTransactions = t }
    let w = try Store.open(path, schema: try Store.recordedSchema(in: path) ?? TripSchema.schema, access: .write, options: options)
    let trips = try w.run(Query("is Trip")).rows
    guard let slot = w.schema.entity(named: "Trip")?.property(named: "name")?.slot, !trips.isEmpty else { fail("\(path) holds no trips") }
    let row = trips[trips.count / 2]
    var commits = 0, snapshots = 0
    var token = w.snapshotToken
    let start = ProcessInfo.processInfo.systemUptime
    var times: [Double] = []
    times.reserveCapacity(25_000)
    while (ProcessInfo.processInfo.systemUptime - start < 5 * budget || commits < 20) && commits < 25_000 {
        let t0 = ProcessInfo.processInfo.systemUptime
        var tx = w.transaction()
        tx.setAttribute(row, slot: slot, to: .string("bench \(commits)"))
        try w.commit(tx, author: "bench")
        commits += 1
        let dt = ProcessInfo.processInfo.systemUptime - t0
        times.append(dt)
        if w.snapshotToken != token {
            token = w.snapshotToken
            snapshots += 1
        }
    }
    let rate = Double(commits) / (ProcessInfo.processInfo.systemUptime - start)
    let sorted = times.sorted()
    let closing = ProcessInfo.processInfo.systemUptime
    w.close()
    if !w.warnings.isEmpty { fail("the commits warned: \(w.warnings)") }
    return (rate, snapshots, ProcessInfo.processInfo.systemUptime - closing, sorted[sorted.count * 99 / 100], sorted[sorted.count - 1])
}
