import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Reads a store's history as it grows: each `poll` returns the transactions
/// committed since the last one, oldest first, each exactly once, across
/// automatic snapshots, `compact` and journal rotation. It opens the store
/// to read, so it never takes the writer's lock and never slows a writer;
/// the token is the cursor, so a compaction that moves transactions from
/// the journal into a snapshot neither hides nor repeats one.
public final class HistoryFollower {
    /// The last token delivered (or the starting point).
    public private(set) var cursor: Int64
    private let folder: String
    private let open: () throws -> Store
    private var seen: [Int64]?
    /// The store the last poll read, until the next one opens it again.
    private var current: Store?
    private var unread = true

    /// Follows the store in `folder`, starting after `since` (nil: after the
    /// last token now). `open` opens it to read (with the right schema).
    /// - Throws: `StoreError.noStore`, or `.historyNotRetained` when `since` is older than
    ///   the retained history (naming its oldest token).
    public init(folder: String, since: Int64?, open: @escaping () throws -> Store) throws {
        self.folder = folder
        self.open = open
        // Read before opening: a commit in between shows as a change next time.
        seen = Self.signature(folder)
        let store = try open()
        cursor = since ?? store.lastToken
        current = store
        try check(store)
    }

    deinit { current?.close() }

    /// The store files' tokens and the newest journal's size: when they are
    /// unchanged, nothing was committed (a commit appends or renames).
    private static func signature(_ folder: String) -> [Int64]? {
        let files = StoreFiles(folder: folder)
        guard let l = try? files.list() else { return nil }
        let newest = l.snapshots.last ?? 0
        return l.snapshots + [-1] + l.journals + [-1, Int64(FileIO.fileSize(files.journal(newest)) ?? -1)]
    }

    private func check(_ store: Store) throws {
        guard store.lastToken > cursor else { return }
        let oldest = store.oldestRetainedToken
        if let oldest, oldest <= cursor + 1 { return }
        throw StoreError.historyNotRetained(after: cursor, oldestRetained: oldest, lastToken: store.lastToken)
    }

    /// The transactions committed after the cursor (oldest first) and the
    /// store they were read from, or nil when nothing changed on disk.
    /// The cursor moves past what is returned.
    public func poll() throws -> (store: Store, transactions: [HistoryTransaction])? {
        let store: Store
        if unread, let first = current {
            // The first poll reads the store opened by `init`.
            store = first
            unread = false
        } else {
            let now = Self.signature(folder)
            guard now == nil || now != seen else { return nil }
            seen = now
            // Most changes are journal lines: take them in without opening again.
            if let open = current, (try? open.catchUp()) == true {
                store = open
            } else {
                current?.close()
                current = nil
                store = try open()
                current = store
            }
        }
        try check(store)
        guard store.lastToken > cursor else { return nil }
        let new = try store.history(after: cursor)
        cursor = store.lastToken
        return (store, new)
    }
}
