#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

// The benchmark's command line: what to measure, on what, where.

struct Options {
    var trips = 100_000
    var seed: UInt64 = 1
    var work = NSTemporaryDirectory() + "tripstore-bench"
    var compareSQLite = false
    var budget = 2.0
    var cli: String?
    var coldProcesses = true
    var historyTransactions = 10_000
    /// Changes of a trip's destination before the aged audit reads of docs/benchmarks.md (0: one bulk update).
    var historyChanges = 0
    var postgres = false
    /// Measure single durable commits on this store and nothing else (the
    /// benchmark runs itself so, in a process of its own, as SQLite's peer does).
    var commitsIn: String?
}

func usage() -> Never {
    print("""
    usage: tripstore-bench [--trips N] [--seed S] [--work DIR] [--budget SECONDS] [--cli PATH] [--compare-sqlite] [--postgres]
      --trips N         trips to generate (default 100000; about 8.5 objects and 1.7 KB each)
      --work DIR        where the data file and the store go (default $TMPDIR/tripstore-bench)
      --budget SECONDS  time per query figure (default 2)
      --cli PATH        the tripstore binary for the cold-process figures (default: next to this one)
      --compare-sqlite  also run the repository's SQLite peer, scripts/peer_sqlite.py (python3 and the
                        sqlite3 CLI), on the same file and print ratios and the goals of docs/benchmarks.md side by side
      --no-cli          skip the cold-process figures (each loads the whole store)
      --postgres        also stream the data into the PostgreSQL server PGHOST/PGPORT/PGUSER name
                        (against its own COPY of the same rows) and time a follower's lag
      --history-transactions K
                        random transactions for the --as-of and standby figures (default 10000)
      --history-changes K
                        before the aged audit reads of docs/benchmarks.md, update every trip's destination in about
                        K / trips rounds (default 0: the one bulk update); the product's aged store is
                        --trips 100000 --history-changes 2000000 (20 rounds, then the "Q1…" delete)
      --commits-in STORE
                        only single durable commits on an existing store of trips, for --budget seconds
    """)
    exit(1)
}

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("tripstore-bench: \(message)\n".utf8))
    exit(2)
}

func parseOptions() -> Options {
    var options = Options()
    var args = Array(CommandLine.arguments.dropFirst())
    func value() -> String {
        if args.isEmpty { usage() }
        return args.removeFirst()
    }
    func number<T: LosslessStringConvertible>(_ type: T.Type) -> T {
        guard let v = T(value()) else { usage() }
        return v
    }
    while !args.isEmpty {
        switch args.removeFirst() {
        case "--trips": options.trips = number(Int.self)
        case "--seed": options.seed = number(UInt64.self)
        case "--work": options.work = value()
        case "--budget": options.budget = number(Double.self)
        case "--cli": options.cli = value()
        case "--compare-sqlite": options.compareSQLite = true
        case "--no-cli": options.coldProcesses = false
        case "--postgres": options.postgres = true
        case "--history-transactions": options.historyTransactions = number(Int.self)
        case "--history-changes": options.historyChanges = number(Int.self)
        case "--commits-in": options.commitsIn = value()
        default: usage()
        }
    }
    return options
}
