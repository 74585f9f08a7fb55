import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// How a store behaves: when it snapshots, how long a writer waits for the lock.
public struct StoreOptions: Sendable {
    /// Write a snapshot automatically once the journal holds this many bytes.
    /// Every open checks the bytes of the lines its replay state covers and
    /// takes the rows they added, so bytes bound an open's cost where the
    /// 10,000 transactions below would allow lines of any size.
    public var snapshotAfterBytes: Int = 8 << 20
    /// … or this many transactions.
    public var snapshotAfterTransactions: Int = 10_000
    /// A journal this big, or of eight times `snapshotAfterTransactions`,
    /// makes commits wait for the automatic snapshot (written in the
    /// background, or left to `snapshotWriter`) so that what an open reads stays bounded.
    static let farJournalBytes = 512 << 20
    /// … or, past this many bytes, once the journal is as big as the snapshot
    /// (replaying it would cost more than reading the snapshot again; Redis
    /// rewrites its append-only file on the same rule).
    public var snapshotWhenJournalOutgrowsSnapshotAfter: Int = 1 << 20
    /// … or while the journal holds a line at least this big: every open
    /// until the next snapshot replays it, and a line of a few thousand
    /// changes costs an open as much as thousands of small ones.
    public var snapshotAfterLineBytes: Int = 1 << 20
    /// Write the automatic snapshot on a thread of its own while commits go
    /// on, and put it in place between two commits (or at `close()`): a
    /// commit then never waits for the whole store to be written. Off, the
    /// commit that makes the journal due writes it before it returns (what
    /// the command line does, whose processes make one commit each).
    public var snapshotsInBackground = true
    /// Leaves the automatic snapshot to this function, called with the
    /// store's folder by the commit that makes it due (once per store): it
    /// is to write it without the lock (`LocklessCompaction`), as the
    /// command line does in a process of its own. Past 512 MiB of journal
    /// or eight times `snapshotAfterTransactions` a commit writes it itself,
    /// so the journal stays bounded if the snapshots this starts never come.
    public var snapshotWriter: (@Sendable (String) -> Void)?
    /// A transaction with at least this many changes is committed by writing
    /// a snapshot (atomic by rename) instead of a journal line: a big import
    /// is then written once, not twice.
    public var snapshotCommitChanges: Int = 20_000
    /// A snapshot is read in pieces of this size (grown for a longer line), so
    /// loading never holds the whole file and all its objects at once.
    public var snapshotReadBytes: Int = 16 << 20
    /// Open from `snapshot-N.image` when it matches the snapshot (`verify`
    /// turns this off to read and check the JSON itself).
    public var useSnapshotImage = true
    /// Take the rows the journal's replay state holds (`journal-<token>.state`,
    /// a cache) instead of replaying the lines it covers (`verify` turns
    /// this off to compare the two).
    public var useJournalState = true
    /// When the image's pieces are checked: each the first time it is
    /// touched (the default: an open costs the same at any size, and a read
    /// that meets damage notes it in `Store.imageDamage`, where the work is
    /// done again on `Store.reopenedFromJSON()`, as `ModelContext` and the
    /// command line do), or all at open (a program that would rather pay
    /// once, at open, and never meet damage later).
    public var imageChecks: ImageChecks = .onFirstTouch
    /// Open a store whose files hold references to missing objects, leaving
    /// those references out and listing them in `Store.danglingReferences`
    /// (for `verify` and its repair; reads the JSON, never the image).
    public var salvageDanglingReferences = false
    /// Seconds a writer waits for another writer's lock before failing.
    public var lockWait: Double = 5

    /// The defaults above.
    public init() {}

    /// The defaults for a program that opens the store, commits once and
    /// ends, as each `tripstore` command does. Every open replays the
    /// journal, a few microseconds a transaction, and a program that opens
    /// for each commit pays that at every commit, so its automatic snapshot
    /// comes four times as often (every 2,500 transactions), and is written
    /// before the commit returns (the process ends right after). A program
    /// that stays open replays its journal once and writes its snapshots in
    /// the background: the defaults suit it.
    public static var committingOncePerOpen: StoreOptions {
        var o = StoreOptions()
        o.snapshotAfterTransactions = 2_500
        o.snapshotsInBackground = false
        return o
    }
}

/// When the pieces of a snapshot image are checked (see `StoreOptions.imageChecks`).
public enum ImageChecks: Sendable {
    case atOpen
    case onFirstTouch
}

/// Whether a store is opened to read or to write.
public enum StoreAccess: Sendable {
    /// Never waits for the lock; sees the last committed state.
    case read
    /// Takes the writer's lock; creates the store if the folder holds none.
    case write
}
