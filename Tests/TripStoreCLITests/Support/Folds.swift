import Foundation
import TripStoreEngine
import TripStoreModels
#if canImport(Glibc)
import Glibc
#endif

/// The folds a command starts in a process of its own (`compact --background`).
enum Folds {
    /// The token of the store's snapshot.
    static func snapshotToken(_ store: String) throws -> Int64 {
        let s = try Store.open(store, schema: TripSchema.schema, access: .read)
        defer { s.close() }
        return s.snapshotToken
    }

    /// Waits, a minute at most, for the store's snapshot to reach `token`
    /// (the fold may not have started when the command returned) and for no
    /// fold to be running; returns the token it is at then.
    static func waitForSnapshot(_ store: String, at token: Int64) throws -> Int64 {
        let deadline = Date().addingTimeInterval(60)
        while try snapshotToken(store) != token && Date() < deadline { usleep(50_000) }
        CLIRunner.waitForCompactions(store)
        return try snapshotToken(store)
    }
}
