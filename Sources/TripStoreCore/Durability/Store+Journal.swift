import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
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
                try StoreLoader(self).replayJournalLine(UnsafeBufferPointer(rebasing: buf[range]), number: journal.transactions + 1, path: path)
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

    /// A writer's last step: after a fold in this process, the journal's
    /// replay state would name rows of the image this store was opened
    /// from, so none is kept for the new journal; when that journal holds
    /// more lines than a writer leaves uncovered, it is read again from the
    /// files and its state written, so that the next open takes them
    /// instead of replaying them (a library store's journal after its last
    /// fold, `compact --background`'s carried lines). Never throws: a cache.
    func writeJournalStateForNextOpen() {
        guard mayWrite(.commit), journal.state == nil, snapshotHasImage,
              journal.transactions > JournalState.rewriteAfterLines else { return }
        var o = StoreOptions()
        o.lockWait = 0
        guard let fresh = try? Store.open(files.folder, schema: schema, access: .read, options: o) else { return }
        defer { fresh.close() }
        guard fresh.snapshotToken == snapshotToken, fresh.lastToken == lastToken, fresh.imageDamage == nil else { return }
        fresh.journal.state?.writeWhole(journal: fresh.journal, table: fresh.table)
    }

    /// The token of the oldest retained transaction (nil when none is
    /// retained), known without reading the snapshot's history lines: they
    /// run without a gap up to the snapshot's token.
    public var oldestRetainedToken: Int64? {
        if historyLog.pending != nil && historyLog.snapshotCount > 0 { return snapshotToken - Int64(historyLog.snapshotCount) + 1 }
        return historyLog.firstLoadedToken
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
        if let t = historyLog.lastLoadedTimestamp { return t }
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

    /// Reads a journal line (its checksum checked before) as a transaction, or says why it cannot.
    static func readJournalLine(_ line: UnsafeBufferPointer<UInt8>, why: inout String) -> HistoryTransaction? {
        if let t = HistoryFastReader.readJournalUpdates(line) { return t }
        var r = JSONReader(buffer: line)
        if let value = try? r.parseDocument(), let t = HistoryCoding.read(value) { return t }
        why = "unreadable transaction"
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
