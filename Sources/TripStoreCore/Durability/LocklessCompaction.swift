import TripStoreFormat
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A compaction that writes the whole snapshot without the writer's lock,
/// so that no writer waits while the whole store is written: it reads the
/// store as a reader does, writes the snapshot of that state to temporary
/// files, and only then takes the lock, between two commits, to put it in
/// place with the journal lines committed meanwhile as the new journal
/// (as a program's background snapshot is put in place).
///
/// One runs at a time, under `fold.lock`; while one runs, writers leave its
/// temporary files alone. `tripstore compact` runs one, and each command
/// that makes the journal due starts `tripstore compact --background`, a
/// process of its own, so the command itself returns at once.
public enum LocklessCompaction {
    /// What a run did.
    public enum Outcome: Sendable, Equatable {
        /// Wrote and put in place the snapshot of this token.
        case compacted(token: Int64)
        /// The journal was empty: the snapshot already holds everything.
        case nothingToCompact
        /// Another one is running (only without `waitForOthers`).
        case anotherIsRunning
        /// A writer put another snapshot in place meanwhile (a migration, a
        /// prune, a redaction): this one was dropped.
        case overtaken
    }

    static let lockName = "fold.lock"

    /// Runs one. `open` opens the store (with the schema the caller would
    /// use) to read or to write; the write open waits for the lock as the
    /// options say. `waitForOthers`: wait for a compaction already running
    /// (`tripstore compact`) instead of returning `.anotherIsRunning`.
    /// `evenIfEmpty`: write the snapshot again when the journal is empty
    /// (`compact` on demand, to write it in this version's format), where
    /// a background run has nothing to do. While commits made meanwhile
    /// leave the journal due again, it runs again (a few times at most).
    /// Then (with `buildHistoryIndex`) it builds the history index of the
    /// store's snapshot if it has none (`snapshot-<token>.history-index`),
    /// so that no reader waits for that either.
    /// - Throws: `StoreError.damaged` when `fold.lock` is not a regular
    ///   file, `IOError` when it cannot be opened; what opening and writing throw.
    /// `readersWait`: how long it waits, after putting the snapshot in
    /// place, for the readers of the files it replaced to let them go, so
    /// that it frees them and not a command that read them (a process of
    /// its own can wait; `LocklessCompaction.readersWait`).
    public static func run(folder: String, waitForOthers: Bool, evenIfEmpty: Bool = false, buildHistoryIndex: Bool = true,
                           readersWait: Double = 0, open: (StoreAccess) throws -> Store) throws -> Outcome {
        guard let lock = try FoldLock(folder: folder, wait: waitForOthers) else { return .anotherIsRunning }
        defer { withExtendedLifetime(lock) {} }
        var outcome = try compact(folder: folder, evenIfEmpty: evenIfEmpty, open: open)
        for _ in 0..<3 {
            guard case .compacted(_, let due, let replaced) = outcome else { break }
            // The stores that read the replaced files are gone; the commands that read them exit soon.
            replaced.release(waitingForReaders: readersWait)
            guard due else { break }
            outcome = try compact(folder: folder, evenIfEmpty: false, open: open)
        }
        if case .compacted(_, _, let replaced) = outcome { replaced.release(waitingForReaders: readersWait) }
        if buildHistoryIndex, let store = try? open(.read) {
            _ = store.historyLog.openIndex()
            store.close()
        }
        if case .compacted(let token, _, _) = outcome { return .compacted(token: token) }
        return outcome.public
    }

    /// How long a compaction in a process of its own waits for the readers
    /// of the files it replaced (a command lasts milliseconds; a reader that
    /// outlasts the wait frees them itself).
    public static let readersWait = 5.0

    /// What one pass did; `due`: the journal it left is due for the next.
    private enum Pass {
        case compacted(Int64, due: Bool, replaced: ReplacedFiles)
        case other(Outcome)
        var `public`: Outcome {
            switch self {
            case .compacted(let token, _, _): return .compacted(token: token)
            case .other(let o): return o
            }
        }
    }

    private static func compact(folder: String, evenIfEmpty: Bool, open: (StoreAccess) throws -> Store) throws -> Pass {
        // One runs at a time: what another left was left by one that was killed.
        for t in (try? StoreFiles(folder: folder).list().temporary) ?? [] where isItsFile(t) { FileIO.unlink(t) }
        let frozen = try open(.read)
        defer { frozen.close() }
        // A journal that lacks transactions its replay state records stops a compaction as it stops a writer.
        for case .journalBehindState(let file, let detail) in frozen.warnings {
            throw StoreError.damaged(file: file, line: nil, detail: detail, repairable: false)
        }
        guard frozen.lastToken > frozen.snapshotToken || (evenIfEmpty && frozen.lastToken > 0) else { return .other(.nothingToCompact) }
        let base = frozen.snapshotToken, bytes = frozen.journal.size, transactions = frozen.journal.transactions
        // Lowest priority: the commits come first.
        Parallel.lowerThisThreadsPriority()
        let written = try frozen.writeSnapshot(tableIsChecked: false, temporaryTag: tag + "\(getpid())")
        written.flushImage()
        CrashPoint.hit("lockless-compaction-written")
        CrashPoint.pause("lockless-compaction-written", milliseconds: 1500)
        let writer: Store
        do {
            writer = try open(.write)
        } catch {
            written.discard()
            throw error
        }
        defer { writer.close() }
        // The journal it read must still be the store's, grown only by appends.
        guard writer.snapshotToken == base, writer.journal.size >= bytes, writer.journal.transactions >= transactions else {
            written.discard()
            return .other(.overtaken)
        }
        try writer.checkWritable(.compact)
        try writer.recordSchemaIfNeeded()
        let replaced = ReplacedFiles()
        writer.snapshotWork.replaced = replaced
        try writer.install(written, tail: JournalTail(bytes: bytes..<writer.journal.size,
                                                      transactions: writer.journal.transactions - transactions))
        writer.snapshotChecksumChecked = true
        return .compacted(written.token, due: writer.journalIsDue(by: writer.options), replaced: replaced)
    }

    /// What its temporary files' names hold.
    private static let tag = ".compacting-"

    /// Whether `path` is a temporary file of a lockless compaction.
    static func isItsFile(_ path: String) -> Bool {
        path.split(separator: "/").last?.contains(tag) ?? false
    }

    /// What is wrong with `folder`'s `fold.lock`, if anything: something
    /// other than a regular file there (a folder, a FIFO, a link) stops
    /// every compaction, the automatic ones silently (for `verify`).
    public static func lockProblem(in folder: String) -> String? {
        var st = stat()
        guard lstat(folder + "/" + lockName, &st) == 0, st.st_mode & S_IFMT != S_IFREG else { return nil }
        return "\(lockName) is not a regular file, so no snapshot can be written"
    }

    /// Removes what stands where `fold.lock` goes (an empty folder, a FIFO,
    /// a link; never a folder's contents); true once nothing is there.
    public static func removeBrokenLock(in folder: String) -> Bool {
        let path = folder + "/" + lockName
        if unlink(path) != 0 { _ = rmdir(path) }
        var st = stat()
        return lstat(path, &st) != 0
    }

    /// Whether a lockless compaction is running in `folder` now.
    static func isRunning(in folder: String) -> Bool {
        // Never blocks on a FIFO, never follows a link: only a regular file is the lock.
        guard let fd = try? FileIO.open(folder + "/" + lockName, O_RDONLY | O_NONBLOCK | O_NOFOLLOW) else { return false }
        defer { FileIO.close(fd) }
        guard FileIO.isRegularFile(fd) else { return false }
        if FileIO.tryLock(fd, exclusive: false) {
            FileIO.unlock(fd)
            return false
        }
        return true
    }
}

/// `fold.lock`: held by the one lockless compaction running.
private final class FoldLock {
    let fd: Int32

    /// Nil when another holds it and `wait` is false.
    init?(folder: String, wait: Bool) throws {
        let path = folder + "/" + LocklessCompaction.lockName
        let fd: Int32
        do {
            fd = try FileIO.open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK)
        } catch let e as IOError where e.code == ELOOP {
            throw StoreError.damaged(file: path, line: nil, detail: "it is a symbolic link; it is not followed", repairable: false)
        } catch let e as IOError where e.code == EISDIR || e.code == ENXIO {
            throw StoreError.damaged(file: path, line: nil, detail: "not a regular file", repairable: false)
        }
        guard FileIO.isRegularFile(fd) else {
            FileIO.close(fd)
            throw StoreError.damaged(file: path, line: nil, detail: "not a regular file", repairable: false)
        }
        while !FileIO.tryLock(fd, exclusive: true) {
            guard wait else {
                FileIO.close(fd)
                return nil
            }
            usleep(50_000)
        }
        self.fd = fd
    }

    deinit {
        FileIO.unlock(fd)
        FileIO.close(fd)
    }
}
