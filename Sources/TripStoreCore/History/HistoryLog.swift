import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A store's retained history, oldest first: the transactions in memory, and
/// the snapshot's history lines, which are read the first time the whole
/// history is asked for (a query never needs them).
final class HistoryLog {
    /// What is in memory: everything once `pending` is read; before that,
    /// the transactions committed after the snapshot. Reads the `deferred`
    /// journal lines first.
    var loaded: [HistoryTransaction] {
        get {
            readDeferred()
            return read
        }
        _modify {
            readDeferred()
            yield &read
        }
    }
    private var read: [HistoryTransaction] = []
    /// Journal lines whose rows an open took from the journal's replay
    /// state (`JournalState`), checked but not yet read as transactions:
    /// they come before `read`'s. A command that reads no history never
    /// reads them.
    private(set) var deferred: DeferredJournalLines?
    /// The snapshot's history lines, not yet read: an open descriptor of the
    /// snapshot (it stays readable if a compaction removes the file), their
    /// byte range in it, and the first one's line number.
    var pending: (fd: Int32, bytes: Range<Int>, firstLine: Int, file: String)?
    /// How many transactions the snapshot holds (known without reading them).
    var snapshotCount = 0
    /// When the last transaction in or before the snapshot was committed, as
    /// its trailer says, retained or pruned since (nil for a snapshot written
    /// before the trailer said it).
    var snapshotLastCommit: Double?
    /// When the newest transaction a prune dropped was committed: the
    /// state `--as-of` reaches just before the oldest retained one (nil
    /// when nothing was pruned, or the snapshot was written before it was kept).
    var oldestReachableCommit: Double?
    /// Where the history starts in the snapshot, as its image records it.
    var imageStart = 0
    /// History lines that could not be read (reported by `verify`).
    var problems: [HistoryProblem] = []
    /// The snapshot's history index, once a lookup has looked for it.
    var index: HistoryIndexState = .notLookedFor

    /// Every retained transaction, reading the snapshot's lines first if they are pending.
    var all: [HistoryTransaction] {
        get {
            readPending()
            return loaded
        }
        set {
            readPending()
            loaded = newValue
        }
    }

    /// How many transactions are retained, without reading the snapshot's lines.
    var count: Int { (pending == nil ? 0 : snapshotCount) + (deferred?.count ?? 0) + read.count }

    /// Appends a transaction committed or replayed after those in memory
    /// (reading no deferred line).
    func append(_ t: HistoryTransaction) { read.append(t) }

    /// The first transaction after the snapshot's, and when the last was
    /// committed, without reading deferred lines.
    var firstLoadedToken: Int64? {
        guard let d = deferred, deferredPosition == 0 else { return read.first?.token }
        return d.firstToken
    }
    var lastLoadedTimestamp: Double? {
        guard let d = deferred, read.count == deferredPosition else { return read.last?.timestamp }
        return d.lastTimestamp
    }

    /// Defers journal lines (`deferred`) to come after the transactions in memory now.
    func deferLines(_ lines: DeferredJournalLines) {
        deferred = lines
        lastSearch = nil
        deferredPosition = read.count
    }
    /// Where the deferred lines go among the transactions in memory: after those read before them.
    private var deferredPosition = 0
    /// The deferred lines `loaded(passing:)` last found holding some bytes
    /// (one command asks for one object's history more than once).
    private var lastSearch: (needle: [[UInt8]], found: [HistoryTransaction])?

    /// Reads the deferred journal lines, checking each as a replay would
    /// (whole, checksummed, the next token: their bytes were bound to the
    /// state at open, so only a forgery can fail); one that fails is noted
    /// in `problems`, so `checkedHistory` names it.
    private func readDeferred() {
        guard let lines = deferred else { return }
        deferred = nil
        var parsed: [HistoryTransaction] = []
        parsed.reserveCapacity(lines.count)
        lines.forEachLine(problem: { problems.append($0) }) { line, token in
            var why = ""
            guard let t = DeferredJournalLines.transaction(line, token: token, why: &why) else { return why }
            parsed.append(t)
            return nil
        }
        read.insert(contentsOf: parsed, at: min(deferredPosition, read.count))
    }

    /// What `loaded` holds, less journal lines that cannot hold a change
    /// `filter` keeps: the deferred lines are searched for the bytes each
    /// change it keeps is written with (see `JournalNeedle`), and only
    /// those that hold them are read, for this answer alone. So one
    /// object's history costs a search of the journal, not a reading of
    /// every line. `loaded` when nothing is deferred, the filter names no
    /// such bytes, or a line fails a check (reading them all names it).
    func loaded(passing filter: HistoryFilter) -> [HistoryTransaction] {
        guard let lines = deferred, let needle = JournalNeedle(filter) else { return loaded }
        var found: [HistoryTransaction] = []
        if let last = lastSearch, last.needle == needle.alternatives {
            found = last.found
        } else {
            var sound = true
            lines.forEachLine(problem: { _ in sound = false }) { line, token in
                guard needle.isIn(line) else { return Store.leadingToken(line) == token ? nil : "out of order" }
                var why = ""
                guard let t = DeferredJournalLines.transaction(line, token: token, why: &why) else { return why }
                found.append(t)
                return nil
            }
            guard sound else { return loaded }
            lastSearch = (needle.alternatives, found)
        }
        let at = min(deferredPosition, read.count)
        return Array(read[..<at]) + found + Array(read[at...])
    }

    /// Reads the snapshot's history lines, left in the file at load; a line
    /// that cannot be read is noted in `problems`, never dropped silently.
    func readPending() {
        guard let pending else { return }
        self.pending = nil
        defer { FileIO.close(pending.fd) }
        var read: [HistoryTransaction] = []
        read.reserveCapacity(snapshotCount + loaded.count)
        var bytes = [UInt8](repeating: 0, count: pending.bytes.count)
        let ok = bytes.withUnsafeMutableBytes { FileIO.read(pending.fd, into: $0, at: pending.bytes.lowerBound) } == bytes.count
        guard ok else {
            problems.append(HistoryProblem(file: pending.file, line: nil, detail: "the history could not be read again"))
            return
        }
        bytes.withUnsafeBufferPointer { buf in
            var k = 0
            JSONLines.forEachLine(in: buf) { _, range, _ in
                defer { k += 1 }
                var why = ""
                if let t = Store.readHistoryLine(UnsafeBufferPointer(rebasing: buf[range]), why: &why) {
                    read.append(t)
                } else {
                    problems.append(HistoryProblem(file: pending.file, line: pending.firstLine + k, detail: why))
                }
            }
        }
        loaded = read + loaded
    }

    /// Lets go of the snapshot's descriptor, if its lines were never read.
    func close() {
        if let p = pending { FileIO.close(p.fd) }
        pending = nil
        deferred = nil
        index = .notLookedFor
    }

    deinit {
        if let p = pending { FileIO.close(p.fd) }
    }
}

/// Whether a store has its snapshot's history index at hand.
enum HistoryIndexState {
    case notLookedFor
    case open(IndexedHistory)
    /// Not usable in this process (not writable, or it disagreed with the snapshot): history is read whole.
    case unusable
}

/// A snapshot history line that could not be read: where, and why.
struct HistoryProblem: CustomStringConvertible {
    var file: String
    var line: Int?
    var detail: String
    var description: String { file + (line.map { " line \($0)" } ?? "") + ": " + detail }
}


/// The journal lines an open took from the replay state, read as
/// transactions (and checked) only when history is asked for (see
/// `HistoryLog.deferred`).
struct DeferredJournalLines {
    /// The journal as the open read it (its descriptor: the bytes stay
    /// readable if a fold removes the file), whose first `end` bytes are `count` lines.
    let journal: JournalFile
    let end: Int
    let count: Int
    let file: String
    let firstToken: Int64
    let lastTimestamp: Double
}

extension DeferredJournalLines {
    /// Reads the lines through the journal's descriptor and hands each
    /// whole one to `body` with the token it must hold; `body` says why it
    /// fails, or nil. A line that fails, is cut short, or the lines being
    /// other than `count` go to `problem`.
    func forEachLine(problem: (HistoryProblem) -> Void, _ body: (UnsafeBufferPointer<UInt8>, Int64) -> String?) {
        var expected = firstToken, number = 0
        do {
            try journal.forEachLine(upTo: end) { n, line, complete in
                number = n
                let why = complete ? body(line, expected) : "the line is cut short"
                if let why {
                    problem(HistoryProblem(file: file, line: n, detail: why))
                } else {
                    expected += 1
                }
            }
        } catch {
            problem(HistoryProblem(file: file, line: nil, detail: "\(error)"))
            return
        }
        if number != count {
            problem(HistoryProblem(file: file, line: nil, detail: "it holds \(number) lines where its replay state says \(count)"))
        }
    }

    /// A journal line as a transaction, checked as a replay checks it
    /// (checksummed, holding `token`), or nil and why not.
    static func transaction(_ line: UnsafeBufferPointer<UInt8>, token: Int64, why: inout String) -> HistoryTransaction? {
        guard JournalFormat.isIntact(line) else {
            why = "checksum mismatch"
            return nil
        }
        guard let t = Store.readJournalLine(line, why: &why) else { return nil }
        guard t.token == token else {
            why = "token \(t.token) follows \(token - 1)"
            return nil
        }
        return t
    }
}
