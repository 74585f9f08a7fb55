import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// Writes a snapshot of the current state and history, starts a new
    /// journal, and removes the older files. Crash-safe at every step: the
    /// old snapshot and journal stay until the new ones are on disk.
    ///
    /// - Throws: `StoreError.notWritable` on a store not open for writing, `StoreError.damaged` when
    ///   the table fails its invariants (nothing is written), `IOError` when a
    ///   file cannot be written (the previous snapshot and journal stay).
    public func compact() throws {
        try checkWritable(.compact)
        try compact(tableIsChecked: false)
    }

    /// `compact()`; `tableIsChecked` skips the invariant check of the whole
    /// table where a commit has just checked everything its transaction
    /// touched on a table that was sound before it.
    /// `bulk` is a bulk import's commit (its image indexes being made on a
    /// thread of its own): its history line is encoded on every core and
    /// written after the retained history. After a bulk import, or when the
    /// snapshot's history lines were never read, the history is read from
    /// the new snapshot when first used, as after an open.
    /// `migrating`: the snapshot commits a migration: the new schema record
    /// is written beside the old one first and takes its place only once
    /// the snapshot is on disk (see `SchemaRecord.read`).
    func compact(tableIsChecked: Bool, bulk: BulkCommitWork? = nil, migrating: Bool = false) throws {
        // Every entry point has checked the state; this guards the files
        // against a caller inside the module that forgot to.
        guard state == .writing, lock != nil else { throw StoreError.notWritable(.compact, state: state) }
        // One snapshot at a time: one being written in the background is put in place first.
        settleBackgroundSnapshot()
        if migrating {
            try writeSchemaRecord(to: files.pendingSchemaRecord)
        } else {
            try recordSchemaIfNeeded()
        }
        let written = try writeSnapshot(tableIsChecked: tableIsChecked, bulk: bulk)
        try install(written, migrating: migrating)
    }


    /// Writes the snapshot of the current state and history (see `SnapshotWriter`).
    func writeSnapshot(tableIsChecked: Bool, bulk: BulkCommitWork? = nil, temporaryTag: String = "") throws -> WrittenSnapshot {
        let writer = SnapshotWriter(schema: schema, table: table, indexes: indexes, files: files, history: historyLog, token: lastToken,
                                    imagePath: imagePath)
        return try writer.write(tableIsChecked: tableIsChecked, bulk: bulk, temporaryTag: temporaryTag) { try whileCheckingSnapshotChecksum($0) }
    }

    /// Puts a written snapshot in place: the rename commits it, then its
    /// image is bound to it, its journal started and the older files removed.
    /// `tail` is what the current journal holds after the snapshot's token
    /// (the commits made while it was written in the background): it becomes
    /// the new journal, on disk before the snapshot takes its place.
    func install(_ written: WrittenSnapshot, migrating: Bool = false, tail: JournalTail = .none) throws {
        let token = written.token, path = files.snapshot(token)
        defer { written.discard() }
        let carriedLongestLine = tail.transactions > 0 ? try copyJournalTail(tail, to: files.journal(token)) : 0
        CrashPoint.hit("snapshot-before-rename")
        do {
            try FileIO.rename(written.temp, path)
        } catch {
            FileIO.unlink(written.temp)
            throw error
        }
        written.renamed = true
        do {
            try putInPlace(written, migrating: migrating, tail: tail, longestLine: carriedLongestLine)
        } catch {
            // The new snapshot is the store's now: a journal line appended
            // to the old journal would be lost, so this store writes no more.
            markBroken(by: error)
            throw error
        }
    }

    /// What follows the rename that committed `install`'s snapshot.
    private func putInPlace(_ written: WrittenSnapshot, migrating: Bool, tail: JournalTail, longestLine: Int) throws {
        let token = written.token, path = files.snapshot(token)
        try FileIO.fsyncDirectory(files.folder)
        CrashPoint.hit("snapshot-after-rename")
        if migrating {
            // Committed: from here a crash leaves the store migrated, and the next writer finishes this.
            CrashPoint.hit("migrate-before-schema-record")
            try FileIO.rename(files.pendingSchemaRecord, files.schemaRecord)
            try FileIO.fsyncDirectory(files.folder)
            recordedFingerprint = schema.fingerprint
            recordedDescriptions = schema.descriptions
        }
        Trace.mark("snapshot rename+fsync folder")
        // The image is bound to the snapshot file as the file system sees it now, after the rename.
        var file: FileIdentity?
        if let fd = try? FileIO.openRegular(path) {
            file = FileIdentity.of(fd)
            FileIO.close(fd)
        }
        snapshotHasImage = false
        if let image = written.takeImage() {
            if let file {
                snapshotHasImage = bindImage(image, binding: SnapshotImage.Binding(
                    token: token, snapshotBytes: Int64(written.bytes), snapshotCRC: written.crc,
                    fingerprint: SnapshotImage.fingerprint(schema), file: file),
                          historyStart: written.history.lowerBound, historyCount: written.historyCount)
            } else {
                image.discard()
            }
        }

        // The new journal starts empty, or with the tail; then the old files can go.
        let newJournal = files.journal(token)
        if tail.transactions == 0 && (!FileIO.exists(newJournal) || token != snapshotToken) {
            let jfd = try FileIO.createFresh(newJournal, O_WRONLY)
            try FileIO.fsync(jfd, path: newJournal)
            FileIO.close(jfd)
        }
        try FileIO.fsyncDirectory(files.folder)
        // A replay state names the rows of the image it was made with: one
        // left by an earlier journal of this token is not the new journal's.
        // Nor is a history index of an earlier snapshot of this token this
        // one's (its binding could match: an inode reused, the same size,
        // times within the file system's tick).
        FileIO.unlink(files.journalState(token))
        FileIO.unlink(files.historyIndex(token))
        let old = try files.list()
        let caches: [String] = files.historyIndexTokens().filter { $0 < token }.map { files.historyIndex($0) }
            + files.journalStateTokens().filter { $0 < token }.map { files.journalState($0) }
        removeFiles(old.snapshots.filter { $0 < token }.flatMap { [files.image($0), files.snapshot($0)] } + caches
                    + old.journals.filter { $0 < token }.map { files.journal($0) })
        journal.close()
        snapshotToken = token
        journal = Journal(folder: files.folder, path: newJournal)
        journal.size = tail.bytes.count
        journal.transactions = tail.transactions
        journal.longestLine = longestLine
        snapshotWork.failedAt = nil
        hasSnapshot = true
        if written.historyFD >= 0 {
            // The history is read from the new file when first used; what
            // was committed after its token stays in memory.
            historyLog.close()
            historyLog.pending = (written.takeHistoryFD(), written.history, 2 + written.objects, path)
            historyLog.loaded.removeAll { $0.token <= token }
        } else {
            // Written from a history read whole (this store's, or the one
            // that wrote it in the background): this one holds it whole too.
            historyLog.readPending()
        }
        historyLog.snapshotCount = written.historyCount
        historyLog.snapshotLastCommit = written.lastCommit
        // Its history index is built where no command waits for it.
        if written.historyCount > 0, let writer = options.snapshotWriter, !snapshotWork.dueForCaller { writer(files.folder) }
    }

    /// Removes files a new snapshot replaced. Freeing a big file's blocks
    /// takes tens of milliseconds, which a store that snapshots in the
    /// background spends on a thread of its own (waited for by the next
    /// removal and by `close()`); a crash before it only leaves them for the
    /// next writer to remove.
    private func removeFiles(_ paths: [String]) {
        settleFileRemoval()
        if let replaced = snapshotWork.replaced {
            replaced.take(paths)
            return
        }
        guard options.snapshotsInBackground else {
            for p in paths { FileIO.unlink(p) }
            return
        }
        snapshotWork.removingOldFiles = Parallel.start { for p in paths { FileIO.unlink(p) } }
    }

    /// Waits for the files `removeFiles` is removing on its thread.
    func settleFileRemoval() {
        snapshotWork.removingOldFiles?.wait()
        snapshotWork.removingOldFiles = nil
    }

    /// Copies the journal's lines after a snapshot's token to that snapshot's
    /// journal, a megabyte at a time (commits that outran the snapshot may
    /// have left hundreds), through a temporary file, flushed with its folder.
    /// Returns the bytes of the longest line it carried.
    private func copyJournalTail(_ tail: JournalTail, to path: String) throws -> Int {
        let fd = try FileIO.openRegular(journal.path)
        defer { FileIO.close(fd) }
        var chunk = [UInt8](repeating: 0, count: min(tail.bytes.count, 1 << 20))
        var longest = 0, lineStart = tail.bytes.lowerBound
        try FileIO.replaceDurably(path, folder: files.folder) { out, temp in
            var at = tail.bytes.lowerBound
            while at < tail.bytes.upperBound {
                let want = min(chunk.count, tail.bytes.upperBound - at)
                let got = chunk.withUnsafeMutableBytes { FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want]), at: at) }
                guard got == want else {
                    throw StoreError.damaged(file: journal.path, line: nil, detail: "the journal could not be read again to carry it over", repairable: false)
                }
                try chunk.withUnsafeBytes { try FileIO.writeAll(out, UnsafeRawBufferPointer(rebasing: $0[0..<got]), path: temp) }
                for i in 0..<got where chunk[i] == 0x0A {
                    longest = max(longest, at + i + 1 - lineStart)
                    lineStart = at + i + 1
                }
                at += got
            }
        }
        CrashPoint.hit("snapshot-journal-carried")
        return longest
    }


    /// Binds a written image to its snapshot (see `UnboundImage`); a failure
    /// only means the next open reads the JSON.
    @discardableResult
    func bindImage(_ image: UnboundImage?, binding: SnapshotImage.Binding, historyStart: Int, historyCount: Int) -> Bool {
        guard let image else { return false }
        defer { Trace.mark("snapshot image") }
        return image.bind(binding, historyStart: historyStart, historyCount: historyCount, as: files.image(binding.token))
    }

    /// Runs `body` while the snapshot this store was opened from is read
    /// through on a thread of its own and its checksum compared with its
    /// trailer, when this process has not read it (opened from its image);
    /// returns once both are done. The read is mostly the disk's time (a
    /// snapshot is written past the page cache), so it overlaps the checks
    /// of the table that `body` makes. A snapshot that fails its checksum
    /// is reported before anything `body` threw.
    func whileCheckingSnapshotChecksum<T>(_ body: () throws -> T) throws -> T {
        guard hasSnapshot && !snapshotChecksumChecked else { return try body() }
        let path = files.snapshot(snapshotToken)
        let check = Parallel.start { Result { try Store.verifySnapshotChecksum(at: path) } }
        let result = Result { try body() }
        try check.wait().get()
        snapshotChecksumChecked = true
        return try result.get()
    }

    /// Reads a snapshot through and compares its checksum with its trailer.
    static func verifySnapshotChecksum(at path: String) throws {
        let fd = try FileIO.openRegular(path)
        defer { FileIO.close(fd) }
        try verifySnapshotChecksum(fd, path: path)
    }

    /// The same, for the snapshot open as `fd`.
    static func verifySnapshotChecksum(_ fd: Int32, path: String) throws {
        let trailer = try StoreLoader.readTrailer(fd, size: try FileIO.size(fd, path: path), path: path)
        var crc: UInt32 = 0
        try SnapshotWriter.read(fd, path: path, 0..<trailer.start) { crc = CRC32C.checksum($0, continuing: crc) }
        try trailer.check(bodyCRC: crc, path: path, note: "; the snapshot was not rewritten")
    }

    /// Drops history transactions with a token below `token`; the objects stay.
    /// Written at once as a new snapshot. Returns how many were dropped.
    /// - Throws: as `compact()`; the history is then left as it was.
    @discardableResult
    public func pruneHistory(before token: Int64) throws -> Int {
        try checkWritable(.pruneHistory)
        let keep = history.filter { $0.token >= token }
        let dropped = history.count - keep.count
        guard dropped > 0 else { return 0 }
        let saved = history, savedLast = historyLog.snapshotLastCommit, savedOldest = historyLog.oldestReachableCommit
        // The snapshot keeps when the last commit was, whatever is dropped:
        // the next commit is stamped no earlier, and `--as-of` a time before
        // it is before the oldest reachable state.
        historyLog.snapshotLastCommit = try lastCommitTime()
        // And when the newest dropped one was: the state just before the
        // oldest kept one stays reachable by its time as by its token.
        historyLog.oldestReachableCommit = saved.last { $0.token < token }?.timestamp
        history = keep
        do {
            try compact()
        } catch {
            history = saved
            historyLog.snapshotLastCommit = savedLast
            historyLog.oldestReachableCommit = savedOldest
            throw error
        }
        return dropped
    }
}

