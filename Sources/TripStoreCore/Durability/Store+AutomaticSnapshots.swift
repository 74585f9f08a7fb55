import TripStoreFormat
import TripStoreSystem

/// A snapshot being written on a thread of its own while commits go on
/// (`StoreOptions.snapshotsInBackground`). It is written by a read-only
/// store opened at the token it starts from, which shares nothing with the
/// writer; the writer puts it in place between two commits, with the
/// journal's lines committed meanwhile as the new journal.
final class BackgroundSnapshot {
    /// The last transaction it holds.
    let token: Int64
    /// The journal's bytes and lines up to `token`; those after them go to the new journal.
    let journalBytes: Int
    let journalTransactions: Int
    let work: Parallel.Pending<Result<WrittenSnapshot, any Error>>

    init(token: Int64, journalBytes: Int, journalTransactions: Int, work: Parallel.Pending<Result<WrittenSnapshot, any Error>>) {
        self.token = token
        self.journalBytes = journalBytes
        self.journalTransactions = journalTransactions
        self.work = work
    }
}

/// What a writer's snapshots have going on beside its commits.
struct SnapshotWork {
    /// The automatic snapshot being written on a thread of its own, if one is.
    var background: BackgroundSnapshot?
    /// Set when one failed there: the automatic snapshots after it are written in the foreground.
    var backgroundFailed = false
    /// The journal's transactions and bytes when an automatic snapshot last
    /// failed: the next is due once the journal has grown by the thresholds since.
    var failedAt: (transactions: Int, bytes: Int)?
    /// Older files being removed on a thread of their own, after a snapshot took their place.
    var removingOldFiles: Parallel.Pending<Void>?
    /// A snapshot is due and left to `StoreOptions.snapshotWriter`.
    var dueForCaller = false
    /// Where the files a new snapshot replaces go instead of being removed
    /// on a thread (a lockless compaction frees them once no reader has them).
    var replaced: ReplacedFiles?
}

extension Store {
    /// Whether an automatic snapshot is being written in the background now
    /// (see `StoreOptions.snapshotsInBackground`).
    public var isWritingSnapshotInBackground: Bool { snapshotWork.background != nil }

    /// Whether a commit made the automatic snapshot due and left it to
    /// `StoreOptions.snapshotWriter`.
    public var isSnapshotDue: Bool { snapshotWork.dueForCaller }

    /// Whether the journal as it is now makes a snapshot due by the
    /// thresholds of `options` (`apply` asks with a command's as it ends).
    public func journalIsDue(by options: StoreOptions) -> Bool {
        journalIsDue(by: options, sinceFailure: nil)
    }

    /// Due by what the journal has gained since an automatic snapshot last
    /// failed, if one did; a line too long to replay makes it due only when
    /// none failed (it stays in the journal, and would try again at every commit).
    private func journalIsDue(by o: StoreOptions, sinceFailure: (transactions: Int, bytes: Int)?) -> Bool {
        let transactions = journal.transactions - (sinceFailure?.transactions ?? 0), bytes = journal.size - (sinceFailure?.bytes ?? 0)
        return bytes >= o.snapshotAfterBytes || transactions >= o.snapshotAfterTransactions
            || bytes >= o.snapshotWhenJournalOutgrowsSnapshotAfter && bytes >= (FileIO.fileSize(files.snapshot(snapshotToken)) ?? 0)
            || sinceFailure == nil && journal.longestLine >= o.snapshotAfterLineBytes
    }

    /// After a commit: puts a background snapshot that is done in place, and
    /// starts the automatic snapshot when the journal is due for one. Never
    /// throws (the commit is durable already): a failure is a warning, and
    /// the automatic snapshots after it are written in the foreground.
    func snapshotIfDue() {
        // Commits faster than snapshots can be written wait at some point, so
        // that the journal an open replays stays bounded.
        let far = journal.size >= StoreOptions.farJournalBytes || journal.transactions / 8 >= options.snapshotAfterTransactions  // (no overflow at .max)
        settleBackgroundSnapshot(wait: far)
        // Due by what the journal holds now (one just put in place took most of it over).
        guard journalIsDue(by: options, sinceFailure: snapshotWork.failedAt), snapshotWork.background == nil else { return }
        if let writer = options.snapshotWriter, !far {
            if !snapshotWork.dueForCaller { writer(files.folder) }
            snapshotWork.dueForCaller = true
            return
        }
        if options.snapshotsInBackground && !snapshotWork.backgroundFailed && snapshotHasImage {
            startBackgroundSnapshot()
            CrashPoint.pause("background-snapshot-started", milliseconds: 500)
            return
        }
        do {
            try compact()
        } catch {
            // The transaction is durable in the journal; the snapshot can
            // wait, and is tried again once the journal has grown as much again.
            noteAutomaticSnapshotFailed(error)
        }
    }

    /// A warning, once per failed automatic snapshot; the next is tried once
    /// the journal has grown by the thresholds again.
    private func noteAutomaticSnapshotFailed(_ error: any Error) {
        snapshotWork.failedAt = (journal.transactions, journal.size)
        warnings.append(.automaticSnapshotFailed(reason: "\(error)"))
    }

    /// Starts writing a snapshot of the state as of now on a thread of its
    /// own, from the snapshot's image and the journal as far as it is now.
    private func startBackgroundSnapshot() {
        let folder = files.folder, schema = schema, token = lastToken, bytes = journal.size
        let options = options, checked = snapshotChecksumChecked
        let work = Parallel.start { () -> Result<WrittenSnapshot, any Error> in
            // The commits come first: this thread and the workers it starts
            // (which inherit it) run at the lowest priority.
            Parallel.lowerThisThreadsPriority()
            return Result {
                let frozen = Store(folder: folder, schema: schema, access: .read, options: options)
                frozen.journalReadLimit = bytes
                defer { frozen.close() }
                try StoreLoader(frozen).load()
                // The writer has read this snapshot through, or wrote it.
                if checked { frozen.snapshotChecksumChecked = true }
                guard frozen.loadedFromImage, frozen.imageDamage == nil, frozen.lastToken == token else {
                    throw StoreError.damaged(file: frozen.imagePath, line: nil,
                                             detail: "the image could not be used to write the next snapshot in the background", repairable: false)
                }
                let written = try frozen.writeSnapshot(tableIsChecked: false)
                written.waitForImage()
                CrashPoint.hit("background-snapshot-written")
                CrashPoint.pause("background-snapshot-written", milliseconds: 2000)
                return written
            }
        }
        snapshotWork.background = BackgroundSnapshot(token: token, journalBytes: bytes, journalTransactions: journal.transactions, work: work)
    }

    /// Gives up the snapshot being written in the background, waiting for
    /// its thread and removing its files, with a warning; the automatic
    /// snapshots after it are written in the foreground.
    func abandonBackgroundSnapshot(because error: any Error) {
        guard let b = snapshotWork.background else { return }
        snapshotWork.background = nil
        if case .success(let written) = b.work.wait() { written.discard() }
        snapshotWork.backgroundFailed = true
        noteAutomaticSnapshotFailed(error)
    }

    /// Puts a background snapshot in place once it is written (waiting for
    /// it with `wait`), with the journal's lines after its token as its
    /// journal. A snapshot that failed is dropped with a warning.
    func settleBackgroundSnapshot(wait: Bool = true) {
        guard let b = snapshotWork.background, wait || b.work.isDone else { return }
        snapshotWork.background = nil
        let written: WrittenSnapshot
        switch b.work.wait() {
        case .success(let w): written = w
        case .failure(let error):
            snapshotWork.backgroundFailed = true
            noteAutomaticSnapshotFailed(error)
            return
        }
        guard state == .writing else {
            written.discard()
            return
        }
        CrashPoint.hit("background-snapshot-installing")
        do {
            try install(written, tail: JournalTail(bytes: b.journalBytes..<journal.size,
                                                   transactions: journal.transactions - b.journalTransactions))
            // The writer's snapshot was checked through by the store that wrote this one.
            snapshotChecksumChecked = true
            CrashPoint.hit("background-snapshot-installed")
        } catch {
            snapshotWork.backgroundFailed = true
            noteAutomaticSnapshotFailed(error)
        }
    }
}
