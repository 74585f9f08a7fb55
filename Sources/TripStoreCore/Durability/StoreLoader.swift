import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Opens a store's files into its table: the newest snapshot (from its
/// image where one is bound to it, else from the JSON), then the journal
/// replayed line by line. A loader is used once, by `Store.open`, by a
/// background snapshot's frozen copy, and by a follower catching up.
struct StoreLoader {
    let store: Store

    init(_ store: Store) { self.store = store }

    /// Loads the newest snapshot and replays its journal.
    func load() throws {
        do {
            try loadFiles()
        } catch let e as IOError where e.code == IOError.notRegularFile {
            // A FIFO, a device or a folder where a store file belongs.
            throw StoreError.damaged(file: e.path, line: nil, detail: "not a regular file", repairable: false)
        }
    }

    private func loadFiles() throws {
        try loadSchemaRecord()
        let listing = try store.files.list()
        store.table.oneWay.reset()
        if let snap = listing.snapshots.last {
            if store.options.salvageDanglingReferences {
                try loadSnapshotSalvaging(snap)
            } else {
                try loadSnapshot(snap)
            }
            store.snapshotToken = snap
            store.journal = Journal(folder: store.files.folder, path: store.files.journal(snap))
            store.hasSnapshot = true
        } else if let j = listing.journals.first(where: { $0 != 0 }), !listing.journals.contains(0) {
            // (Beside journal-0, a later one was carried over for a first snapshot that never took its place.)
            throw StoreError.damaged(file: store.files.journal(j), line: nil,
                                     detail: "it follows snapshot-\(j).jsonl, which is missing", repairable: false)
        }
        let journal = store.files.journal(store.snapshotToken)
        if FileIO.exists(journal) {
            try loadJournal(journal)
        } else if !store.mayWrite(.repair), let newest = try store.files.list().snapshots.last, newest > store.snapshotToken {
            // A writer compacted while we read: its journal is gone. Read again, from the new snapshot.
            throw IOError(operation: "open", path: journal, code: ENOENT)
        } else if let state = journalState() {
            // No journal, and no lines in it, unless its replay state says there were.
            state.readPromise(table: store.table)
            try noteMissingTransactions(state, journal: journal, bytes: nil, wholeLinesEnd: 0)
        }
        try checkReplayedDeletes()
        if store.hasSnapshot && store.mayWrite(.repair) {
            // Files a compaction cut short before removing them (the newest snapshot holds all they held).
            for s in listing.snapshots where s < store.snapshotToken {
                FileIO.unlink(store.files.image(s))
                FileIO.unlink(store.files.snapshot(s))
            }
            for j in listing.journals where j < store.snapshotToken { FileIO.unlink(store.files.journal(j)) }
            for h in store.files.historyIndexTokens() where h < store.snapshotToken { FileIO.unlink(store.files.historyIndex(h)) }
            for j in store.files.journalStateTokens() where j < store.snapshotToken { FileIO.removeFileOrEmptyFolder(store.files.journalState(j)) }
        }
        if listing.journals.contains(store.snapshotToken) && store.mayWrite(.repair) {
            // A journal after the newest snapshot was carried over for a
            // snapshot that never took its place: the current journal holds its lines.
            for j in listing.journals where j > store.snapshotToken { FileIO.unlink(store.files.journal(j)) }
        }
        // The type index followed the snapshot's rows and the journal's inserts and deletes as they were read.
        Trace.mark("replay journal")
    }

    func checkHeader(_ header: JSONValue, start: SnapshotFormat.HeaderStart?, path: String, token: Int64) throws {
        func damaged(_ detail: String) -> StoreError { .damaged(file: path, line: 1, detail: detail, repairable: false) }
        guard case .int(let format)? = header["format"] else { throw damaged("the header has no format version") }
        guard format <= SnapshotFormat.version else { throw StoreError.newerFormat(file: path, version: Int(format)) }
        // One value a key: a reader that took the last of two would see another time than this one.
        if case .object(let members) = header, Set(members.map(\.key)).count != members.count {
            throw damaged("the header holds a key twice")
        }
        // Format 4 and `oldestReachableCommit` go together (`readHeaderStart` read its value).
        guard (format == 4) == (header["oldestReachableCommit"] != nil) else {
            throw damaged("the header's format \(format) does not match its oldestReachableCommit")
        }
        // The times are dates, where the format puts them (the first bytes, read before this).
        for (key, read) in [("oldestReachableCommit", start?.oldestReachableCommit), ("lastCommit", start?.lastCommit)] {
            guard let value = header[key] else { continue }
            guard case .string(let text) = value, let time = ISODate.parse(text) else { throw damaged("the header's \(key) is not a date") }
            guard read == time else { throw damaged("the header's \(key) is not where the format puts it (right after the format)") }
        }
        guard case .int(let t)? = header["token"], t == token else {
            throw StoreError.damaged(file: path, line: 1, detail: "the header's token does not match the file name", repairable: false)
        }
        if let s = header["schema"], case .string(let fp)? = s["fingerprint"] {
            guard let entities = s["entities"], let stored = SchemaCoding.read(entities) else {
                throw StoreError.damaged(file: path, line: 1, detail: "the header's schema is unreadable", repairable: false)
            }
            // The fingerprint must be the one of the schema the header describes.
            guard (try? Schema(stored)) != nil, SchemaCoding.fingerprint(of: stored) == fp else {
                throw StoreError.damaged(file: path, line: 1, detail: "the header's schema fingerprint \(fp) is not the fingerprint of the schema it describes",
                                         repairable: false)
            }
            // The record is written before any snapshot, so it holds at least what the header does.
            if let recorded = store.recordedDescriptions, fp != store.recordedFingerprint {
                let problems = SchemaCompatibility.differences(stored: stored, current: recorded)
                if !problems.isEmpty {
                    throw StoreError.damaged(file: store.files.schemaRecord, line: 1,
                                             detail: "it does not describe \(path)'s schema: " + problems.joined(separator: "; "), repairable: false)
                }
            }
            if fp != store.schema.fingerprint {
                let problems = SchemaCompatibility.differences(stored: stored, current: store.schema.descriptions)
                if !problems.isEmpty { throw StoreError.schemaMismatch(problems) }
            }
        }
    }

    /// Where the replay state says the journal held transactions it does
    /// not (see `JournalState.missingTransactions`): a writer stops, so
    /// that no commit takes their tokens again; a reader answers from what
    /// the journal holds, with a warning.
    /// Returns whether it did.
    @discardableResult
    private func noteMissingTransactions(_ state: JournalState, journal path: String, bytes: Int?, wholeLinesEnd: Int) throws -> Bool {
        guard let missing = state.missingTransactions(journalBytes: bytes, wholeLinesEnd: wholeLinesEnd, lastToken: store.lastToken,
                                                      snapshotToken: store.snapshotToken) else { return false }
        let detail = state.missingTransactionsDetail(missing, journal: path, journalBytes: bytes)
        if store.mayWrite(.commit) { throw StoreError.damaged(file: path, line: nil, detail: detail, repairable: false) }
        store.warnings.append(.journalBehindState(file: path, detail: detail))
        return true
    }

    /// The journal's replay state, where the store takes one (opened from an image, not salvaging).
    private func journalState() -> JournalState? {
        guard !store.options.salvageDanglingReferences, store.options.useJournalState else { return nil }
        return store.table.image.map { JournalState(path: store.files.journalState(store.snapshotToken), binding: .init($0)) }
    }

    func loadJournal(_ path: String) throws {
        // Only the lines past what the replay state covers are read into
        // memory; the covered ones are checksummed through a small buffer.
        let file = try JournalFile(path: path)
        var size = min(file.size, store.journalReadLimit ?? .max)
        CrashPoint.pause("journal-opened", milliseconds: 1_500)
        let state = journalState()
        store.journal.state = state
        // A writer's frames hold the lists each commit changed.
        if state != nil { store.table.lists.noteChanges() }
        // The lines the replay state covers are not parsed: their rows come
        // from the state, their history when it is asked for.
        var from = 0, linesBefore = 0
        if let state, let covered = state.read(journal: file, journalBytes: size, table: store.table),
           takeCoveredLines(covered, file, path: path) {
            state.adopt(covered)
            from = covered.bytes
            linesBefore = covered.lines
            Trace.mark("journal state: \(covered.lines) lines, \(covered.records.entries.count) rows")
        }
        let bytes = try file.read(from..<size)
        // A writer that cut a torn tail since the size was taken: the journal ends where its bytes do.
        size = from + bytes.count
        store.journal.size = size
        var ahead: JournalTouchAhead?
        if bytes.count >= StoreLoader.longJournalBytes {
            store.table.prepareForScatteredChanges(bytes.count / StoreLoader.updateLineBytes)
            ahead = store.table.image.map { JournalTouchAhead.start(bytes, image: $0) }
        }
        defer { ahead?.stop() }
        try bytes.withUnsafeBufferPointer { buf in
            try JSONLines.forEachLine(in: buf) { number, range, complete in
                guard complete else {
                    store.journal.tornTail = from + range.lowerBound
                    store.journal.size = from + range.lowerBound
                    return
                }
                try replayJournalLine(UnsafeBufferPointer(rebasing: buf[range]), number: linesBefore + number, path: path)
            }
        }
        // Bytes after the last newline that make no line (white space: the
        // lines skip it) are a torn tail all the same: the next line appended
        // after them would not read back.
        let ended = from + (bytes.lastIndex(of: 0x0A) ?? -1) + 1
        if store.journal.tornTail == nil && ended < size {
            store.journal.tornTail = ended
            store.journal.size = ended
        }
        // A reader may meet a frame written after it took the size: the file holds its lines now.
        let behind = try state.map { try noteMissingTransactions($0, journal: path, bytes: max(file.size, file.currentSize() ?? 0),
                                                                 wholeLinesEnd: store.journal.size) } ?? false
        // (No writer cuts a torn tail there: it stops first.)
        if store.journal.tornTail != nil && !behind {
            // A reader that met a writer's line half-written is silent: the
            // writer holds the lock, or has finished the line since (the file grew).
            let finishedSince = (FileIO.fileSize(path) ?? 0) > size
            let cuts = store.mayWrite(.repair)
            if cuts || !finishedSince && !StoreLock.isHeld(folder: store.files.folder) {
                store.warnings.append(.tornTail(file: path, cut: cuts))
            }
        }
    }

    /// A journal from this size on changes enough rows, scattered over the
    /// image, that the table readies for them (`prepareForScatteredChanges`).
    static let longJournalBytes = 256 << 10
    /// About the size of a journal line that updates one attribute.
    static let updateLineBytes = 256

    /// Checks one complete journal line and applies it to memory.
    func replayJournalLine(_ line: UnsafeBufferPointer<UInt8>, number: Int, path: String) throws {
        guard JournalFormat.isIntact(line) else {
            throw StoreError.damaged(file: path, line: number, detail: "checksum mismatch", repairable: false)
        }
        // Most lines set a few attributes: read from the bytes, not as a tree.
        if !store.options.salvageDanglingReferences, let t = HistoryFastReader.readJournalUpdates(line) {
            guard t.token == store.lastToken + 1 else {
                throw StoreError.damaged(file: path, line: number, detail: "token \(t.token) follows \(store.lastToken)", repairable: false)
            }
            try JournalReplay.apply(updates: t.changes, to: store, file: path, line: number)
            store.historyLog.append(t)
            store.lastToken = t.token
            store.journal.counted(line)
            return
        }
        var reader = JSONReader(buffer: line)
        let value: JSONValue
        do {
            value = try reader.parseDocument()
        } catch {
            throw StoreError.damaged(file: path, line: number, detail: "\(error)", repairable: false)
        }
        guard let t = HistoryCoding.read(value) else {
            throw StoreError.damaged(file: path, line: number, detail: "unreadable transaction", repairable: false)
        }
        guard t.token == store.lastToken + 1 else {
            throw StoreError.damaged(file: path, line: number, detail: "token \(t.token) follows \(store.lastToken)", repairable: false)
        }
        let replayed = store.options.salvageDanglingReferences ? salvage(journalLine: value, file: path, line: number) : value
        try JournalReplay.apply(replayed, to: store, file: path, line: number)
        store.historyLog.append(t)
        store.lastToken = t.token
        store.journal.counted(line)
    }

    /// Takes the journal lines a replay state covers (the first
    /// `covered.bytes` of `journal`, checksummed by the state's read)
    /// without parsing them: their count and longest line from the state,
    /// the last one for the last token and commit time. Their transactions
    /// are read when history is asked for (`HistoryLog.deferred`). False,
    /// with nothing taken, when the last line is not the transaction that
    /// many lines after the snapshot: the journal is replayed instead.
    func takeCoveredLines(_ covered: JournalState.Covered, _ journal: JournalFile, path: String) -> Bool {
        var why = ""
        guard covered.lastLine.withUnsafeBufferPointer({ JournalFormat.isIntact($0) }),
              let last = covered.lastLine.withUnsafeBufferPointer({ Store.readJournalLine($0, why: &why) }),
              last.token == store.lastToken + Int64(covered.lines), store.table.acceptsReplayed(covered.records) else { return false }
        store.journal.transactions += covered.lines
        store.journal.longestLine = max(store.journal.longestLine, covered.longestLine)
        store.historyLog.deferLines(DeferredJournalLines(journal: journal, end: covered.bytes, count: covered.lines, file: path,
                                                         firstToken: store.lastToken + 1, lastTimestamp: last.timestamp))
        store.lastToken = last.token
        let (added, deleted) = store.table.adoptReplayed(covered.records)
        // A new row is past every row of its type; a deleted one leaves its type's rows now, its entity checked with its unit.
        for (row, entity) in added { store.indexes.appendType(row, entity) }
        for (row, entity) in deleted { store.indexes.removeType(row, entity) }
        return true
    }

    /// At open: reads `schema.json` and checks that this program's schema can
    /// use the store (equal, or only additions).
    func loadSchemaRecord() throws {
        guard try store.files.exists(), let recorded = try SchemaRecord.read(store.files, known: store.schema) else { return }
        store.recordedDescriptions = recorded.descriptions
        store.recordedFingerprint = recorded.fingerprint
        if recorded.fingerprint != store.schema.fingerprint {
            let problems = SchemaCompatibility.differences(stored: recorded.descriptions, current: store.schema.descriptions)
            if !problems.isEmpty { throw StoreError.schemaMismatch(problems) }
        }
    }
}
