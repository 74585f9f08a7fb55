import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
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
        let listing = try files.list()
        table.oneWay.reset()
        if let snap = listing.snapshots.last {
            if options.salvageDanglingReferences {
                try loadSnapshotSalvaging(snap)
            } else {
                try loadSnapshot(snap)
            }
            snapshotToken = snap
            journal = Journal(folder: files.folder, path: files.journal(snap))
            hasSnapshot = true
        } else if let j = listing.journals.first(where: { $0 != 0 }), !listing.journals.contains(0) {
            // (Beside journal-0, a later one was carried over for a first snapshot that never took its place.)
            throw StoreError.damaged(file: files.journal(j), line: nil,
                                     detail: "it follows snapshot-\(j).jsonl, which is missing", repairable: false)
        }
        let journal = files.journal(snapshotToken)
        if FileIO.exists(journal) {
            try loadJournal(journal)
        } else if !mayWrite(.repair), let newest = try files.list().snapshots.last, newest > snapshotToken {
            // A writer compacted while we read: its journal is gone. Read again, from the new snapshot.
            throw IOError(operation: "open", path: journal, code: ENOENT)
        }
        try checkReplayedDeletes()
        if hasSnapshot && mayWrite(.repair) {
            // Files a compaction cut short before removing them (the newest snapshot holds all they held).
            for s in listing.snapshots where s < snapshotToken {
                FileIO.unlink(files.image(s))
                FileIO.unlink(files.snapshot(s))
            }
            for j in listing.journals where j < snapshotToken { FileIO.unlink(files.journal(j)) }
            for h in files.historyIndexTokens() where h < snapshotToken { FileIO.unlink(files.historyIndex(h)) }
        }
        if listing.journals.contains(snapshotToken) && mayWrite(.repair) {
            // A journal after the newest snapshot was carried over for a
            // snapshot that never took its place: the current journal holds its lines.
            for j in listing.journals where j > snapshotToken { FileIO.unlink(files.journal(j)) }
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
            if let recorded = recordedDescriptions, fp != recordedFingerprint {
                let problems = SchemaCompatibility.differences(stored: stored, current: recorded)
                if !problems.isEmpty {
                    throw StoreError.damaged(file: files.schemaRecord, line: 1,
                                             detail: "it does not describe \(path)'s schema: " + problems.joined(separator: "; "), repairable: false)
                }
            }
            if fp != schema.fingerprint {
                let problems = SchemaCompatibility.differences(stored: stored, current: schema.descriptions)
                if !problems.isEmpty { throw StoreError.schemaMismatch(problems) }
            }
        }
    }

    /// Sets a relationship slot and, for a snapshot, the derived side of each target.
    func set(_ rows: [RowID], row: RowID, slot: Int, deriveInverses: Bool) {
        guard let entity = table.entity(at: row), let rel = schema.entities[entity].properties[slot].relationship else { return }
        table.setValue(rel.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null), row: row, slot: slot)
        guard deriveInverses, let inverse = rel.inverseSlot else { return }
        for t in rows {
            guard let target = table.entity(at: t),
                  let back = schema.entities[target].properties[inverse].relationship, !back.isStoredSide else { continue }
            if back.isToMany {
                table.appendReference(row, to: t, slot: inverse)
            } else {
                table.setValue(.toOne(row), row: t, slot: inverse)
            }
        }
    }

    /// Sets relationship slots from references by id, as a journal line records
    /// them (both sides are in the line, so nothing is derived).
    func resolveLinks(_ pending: [(RowID, [PendingLink])], file: String) throws {
        for (row, links) in pending {
            for link in links {
                var rows: [RowID] = []
                rows.reserveCapacity(link.targets.count)
                for t in link.targets {
                    guard let r = table.row(for: t.id) else {
                        throw StoreError.danglingReferences(file: file, line: nil, detail: "a reference points at missing id '\(t.id)'")
                    }
                    if let type = t.type, let e = table.entity(at: r), schema.entities[e].name != type {
                        throw StoreError.damaged(file: file, line: nil, detail: "a reference says '\(t.id)' is a \(type), but it is a \(schema.entities[e].name)",
                                                 repairable: false)
                    }
                    rows.append(r)
                }
                set(rows, row: row, slot: link.slot, deriveInverses: false)
            }
        }
    }

    func loadJournal(_ path: String) throws {
        var bytes = try FileIO.readFile(path)
        if let limit = journalReadLimit, bytes.count > limit { bytes.removeSubrange(limit...) }
        journal.size = bytes.count
        var ahead: JournalTouchAhead?
        if bytes.count >= Store.longJournalBytes {
            table.prepareForScatteredChanges(bytes.count / Store.updateLineBytes)
            ahead = table.image.map { JournalTouchAhead.start(bytes, image: $0) }
        }
        defer { ahead?.stop() }
        try bytes.withUnsafeBufferPointer { buf in
            try JSONLines.forEachLine(in: buf) { number, range, complete in
                guard complete else {
                    journal.tornTail = range.lowerBound
                    journal.size = range.lowerBound
                    return
                }
                try replayJournalLine(UnsafeBufferPointer(rebasing: buf[range]), number: number, path: path)
            }
        }
        // Bytes after the last newline that make no line (white space: the
        // lines skip it) are a torn tail all the same: the next line appended
        // after them would not read back.
        let ended = (bytes.lastIndex(of: 0x0A) ?? -1) + 1
        if journal.tornTail == nil && ended < bytes.count {
            journal.tornTail = ended
            journal.size = ended
        }
        if journal.tornTail != nil {
            // A reader that met a writer's line half-written is silent: the
            // writer holds the lock, or has finished the line since (the file grew).
            let finishedSince = (FileIO.fileSize(path) ?? 0) > bytes.count
            let cuts = mayWrite(.repair)
            if cuts || !finishedSince && !StoreLock.isHeld(folder: files.folder) {
                warnings.append(.tornTail(file: path, cut: cuts))
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
        if !options.salvageDanglingReferences, let t = HistoryFastReader.readJournalUpdates(line) {
            guard t.token == lastToken + 1 else {
                throw StoreError.damaged(file: path, line: number, detail: "token \(t.token) follows \(lastToken)", repairable: false)
            }
            try JournalReplay.apply(updates: t.changes, to: self, file: path, line: number)
            historyLog.loaded.append(t)
            lastToken = t.token
            journal.transactions += 1
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
        guard t.token == lastToken + 1 else {
            throw StoreError.damaged(file: path, line: number, detail: "token \(t.token) follows \(lastToken)", repairable: false)
        }
        let replayed = options.salvageDanglingReferences ? salvage(journalLine: value, file: path, line: number) : value
        try JournalReplay.apply(replayed, to: self, file: path, line: number)
        historyLog.loaded.append(t)
        lastToken = t.token
        journal.transactions += 1
    }

    /// Takes in, for a store opened to read, the journal lines committed
    /// since it was opened or last caught up (a follower's way to keep up
    /// without opening the store again). False when that is not enough: a
    /// compaction started a new snapshot, or the journal shrank (a repair);
    /// then open the store again. After a throw the store is unusable.
    public func catchUp() throws -> Bool {
        guard state == .reading else { return false }
        guard (try files.list().snapshots.last ?? 0) == snapshotToken else { return false }
        let path = files.journal(snapshotToken)
        guard let size = FileIO.fileSize(path) else { return journal.size == 0 }
        guard size >= journal.size else { return false }
        guard size > journal.size else { return true }
        let fd = try FileIO.openRegular(path)
        defer { FileIO.close(fd) }
        var bytes = [UInt8](repeating: 0, count: size - journal.size)
        let got = bytes.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: journal.size) }
        guard got == bytes.count else { return false }
        var consumed = 0
        try bytes.withUnsafeBufferPointer { buf in
            try JSONLines.forEachLine(in: buf) { number, range, complete in
                guard complete else { return }  // a writer's line half-written: next time
                try replayJournalLine(UnsafeBufferPointer(rebasing: buf[range]), number: journal.transactions + 1, path: path)
                var end = range.upperBound
                while end < buf.count && buf[end] != 0x0A { end += 1 }
                consumed = end + 1
            }
        }
        journal.size += consumed
        // A query after this one reads the values replayed, not an index built before them.
        if consumed > 0 { indexes.forgetBuiltValueIndexes() }
        return true
    }

    /// Cuts a torn last journal line (writers only).
    func repairTornTail() throws {
        try journal.cutTornTail()
    }
}
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// The token of the oldest retained transaction (nil when none is
    /// retained), known without reading the snapshot's history lines: they
    /// run without a gap up to the snapshot's token.
    public var oldestRetainedToken: Int64? {
        if historyLog.pending != nil && historyLog.snapshotCount > 0 { return snapshotToken - Int64(historyLog.snapshotCount) + 1 }
        return historyLog.loaded.first?.token
    }

    /// The retained transactions after `token`, oldest first. Reads only the
    /// snapshot history lines after `token` (a line's token is its first
    /// member), so a follower or a time travel to a recent token does not pay
    /// for a long history, such as one bulk import's line.
    /// - Throws: `StoreError.damaged` naming a history line it cannot read.
    public func history(after token: Int64) throws -> [HistoryTransaction] {
        guard let pending = historyLog.pending else { return Array(try checkedHistory().drop { $0.token <= token }) }
        if token >= snapshotToken { return Array(historyLog.loaded.drop { $0.token <= token }) }
        // Lines run in token order: read backwards, a growing window from the
        // end, until it reaches a line at or before `token` (or the start).
        var want = 1 << 16
        var bytes: [UInt8] = []
        var firstLine = 0
        while true {
            let start = max(pending.bytes.lowerBound, pending.bytes.upperBound - want)
            bytes = [UInt8](repeating: 0, count: pending.bytes.upperBound - start)
            guard bytes.withUnsafeMutableBytes({ FileIO.read(pending.fd, into: $0, at: start) }) == bytes.count else {
                throw StoreError.damaged(file: pending.file, line: nil, detail: "the history could not be read again", repairable: false)
            }
            if start == pending.bytes.lowerBound { break }
            guard let nl = bytes.firstIndex(of: 0x0A) else { want *= 4; continue }
            let reached: Bool = bytes.withUnsafeBufferPointer { buf in
                Self.leadingToken(UnsafeBufferPointer(rebasing: buf[(nl + 1)...])).map { $0 <= token } ?? false
            }
            if reached {
                bytes.removeSubrange(...nl)
                firstLine = -1  // line numbers are unknown in a window
                break
            }
            want *= 4
        }
        var read: [HistoryTransaction] = []
        var problem: HistoryProblem?
        bytes.withUnsafeBufferPointer { buf in
            var k = 0
            JSONLines.forEachLine(in: buf) { _, range, _ in
                defer { k += 1 }
                let line = UnsafeBufferPointer(rebasing: buf[range])
                if let t = Self.leadingToken(line), t <= token { return }
                var why = ""
                if let t = Self.readHistoryLine(line, why: &why) {
                    read.append(t)
                } else if problem == nil {
                    problem = HistoryProblem(file: pending.file, line: firstLine < 0 ? nil : pending.firstLine + k, detail: why)
                }
            }
        }
        if let problem { throw StoreError.damaged(file: problem.file, line: problem.line, detail: problem.detail, repairable: false) }
        return read + historyLog.loaded
    }

    /// When the last transaction was committed: the newest journal line's,
    /// else the snapshot's last history line's (as the trailer says, or read
    /// from the line); with no transaction retained, what the trailer says
    /// (nil for a store whose history was pruned before trailers said it).
    public func lastCommitTime() throws -> Double? {
        if let t = historyLog.loaded.last { return t.timestamp }
        guard let pending = historyLog.pending, historyLog.snapshotCount > 0, !pending.bytes.isEmpty else {
            return historyLog.snapshotLastCommit
        }
        if let t = historyLog.snapshotLastCommit { return t }
        return try lastCommitTimeFromTheLine(pending)
    }

    /// The snapshot's last history line's time, read backwards from its end
    /// (what `lastCommitTime` did before trailers said it; `verify` compares both).
    func lastCommitTimeFromTheLine(_ pending: (fd: Int32, bytes: Range<Int>, firstLine: Int, file: String)) throws -> Double {
        // Only the last line is needed: read backwards until its start.
        var want = 4096
        while true {
            let start = max(pending.bytes.lowerBound, pending.bytes.upperBound - want)
            var bytes = [UInt8](repeating: 0, count: pending.bytes.upperBound - start)
            guard bytes.withUnsafeMutableBytes({ FileIO.read(pending.fd, into: $0, at: start) }) == bytes.count else {
                throw StoreError.damaged(file: pending.file, line: nil, detail: "the history could not be read again", repairable: false)
            }
            var end = bytes.count
            while end > 0 && (bytes[end - 1] == 0x0A || bytes[end - 1] == 0x0D) { end -= 1 }
            if let nl = bytes[..<end].lastIndex(of: 0x0A) ?? (start == pending.bytes.lowerBound ? -1 : nil) {
                let line = Array(bytes[(nl + 1)..<end])
                let time: Double? = line.withUnsafeBufferPointer { buf in
                    Self.leadingToken(buf) != nil ? Self.leadingTimestamp(buf) : nil
                }
                guard let time else {
                    throw StoreError.damaged(file: pending.file, line: nil, detail: "the last history line has no readable timestamp", repairable: false)
                }
                return time
            }
            want *= 4
        }
    }

    /// The timestamp of a history line as the store writes it (`{"token":N,"timestamp":"…",…`).
    static func leadingTimestamp(_ line: UnsafeBufferPointer<UInt8>) -> Double? {
        let key = Array(#","timestamp":""#.utf8)
        guard let comma = line.firstIndex(of: UInt8(ascii: ",")), comma + key.count < line.count else { return nil }
        for (k, b) in key.enumerated() where line[comma + k] != b { return nil }
        let from = comma + key.count
        guard let close = line[from...].firstIndex(of: UInt8(ascii: "\"")) else { return nil }
        return ISODate.parse(bytes: UnsafeBufferPointer(rebasing: line[from..<close]))
    }

    /// One snapshot history line: by the byte reader where it has the form
    /// the store writes, else by the tree reader; nil, and `why`, when it is
    /// no transaction.
    static func readHistoryLine(_ line: UnsafeBufferPointer<UInt8>, why: inout String) -> HistoryTransaction? {
        if let t = HistoryFastReader.read(line) { return t }
        var r = JSONReader(buffer: line)
        let value = try? r.parseDocument()
        if let value, let t = HistoryCoding.read(value) { return t }
        why = "unreadable history transaction" + (value.flatMap(HistoryCoding.idProblem).map { ": \($0)" } ?? "")
        return nil
    }

    /// The token of a history line as the store writes it (`{"token":N,…`), nil otherwise.
    static func leadingToken(_ line: UnsafeBufferPointer<UInt8>) -> Int64? {
        let prefix = Array(#"{"token":"#.utf8)
        guard line.count > prefix.count + 1 else { return nil }
        for (k, b) in prefix.enumerated() where line[k] != b { return nil }
        var value: Int64 = 0
        var i = prefix.count
        while i < line.count, line[i] >= 0x30, line[i] <= 0x39, i - prefix.count < 18 {
            value = value * 10 + Int64(line[i] - 0x30)
            i += 1
        }
        guard i > prefix.count, i < line.count, line[i] == UInt8(ascii: ",") else { return nil }
        return value
    }
}
