import TripStoreFormat
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension HistoryLog {
    /// What `filter.apply(to: all)` returns, reading only the snapshot's
    /// history lines and changes the answer needs, through the snapshot's
    /// history index (built and written beside the snapshot the first time
    /// one is needed). Nil when the history is to be read whole: it is in
    /// memory already, or the index cannot be had or disagrees with the
    /// snapshot (which this process then stops asking it about).
    func indexedLookup(_ filter: HistoryFilter) -> [HistoryTransaction]? {
        guard pending != nil, let indexed = openIndex() else { return nil }
        // The journal's lines are searched the same way, without an index (it is short; see `loaded(passing:)`).
        let journal = loaded(passing: filter)
        do {
            return filter.apply(to: try fromSnapshot(filter, indexed, journal: journal) + journal)
        } catch {
            // A damaged or disagreeing cache: removed, so that the next lookup builds it again.
            if let pending { FileIO.unlink(StoreFiles.historyIndex(ofSnapshot: pending.file)) }
            index = .unusable
            return nil
        }
    }

    /// The snapshot's transactions that may pass `filter`, enough of them for its limit.
    private func fromSnapshot(_ filter: HistoryFilter, _ indexed: IndexedHistory, journal: [HistoryTransaction]) throws -> [HistoryTransaction] {
        var unlimited = filter
        unlimited.limit = nil
        // The journal's transactions are newer: a limit they fill needs nothing older.
        let needed = filter.limit.map { $0 - filter.limitCount(of: unlimited.apply(to: journal)) }
        if let needed, needed <= 0 { return [] }
        if let id = filter.id { return try indexed.changes(of: id) }
        var out: [HistoryTransaction] = []
        var found = 0
        if filter.kinds == [.delete] {
            try indexed.deletes(tombstonesOnly: filter.tombstonesOnly, passing: unlimited,
                                enough: filter.limitCountsChanges ? needed : nil) { t in
                out.append(t)
                found += filter.limitCount(of: [t])
                return needed.map { found >= $0 } ?? false
            }
        } else {
            for n in try indexed.candidates(unlimited).reversed() {
                let passed = unlimited.apply(to: [try indexed.line(n)])
                guard !passed.isEmpty else { continue }
                out += passed
                found += filter.limitCount(of: passed)
                if let needed, found >= needed { break }
            }
        }
        return out.reversed()
    }

    /// What ties an index to the snapshot lines pending, and where it is.
    private var indexBinding: (HistoryIndexFile.Binding, path: String)? {
        guard let pending, let file = FileIdentity.of(pending.fd),
              let token = StoreFiles.token(String(pending.file.split(separator: "/").last ?? ""), prefix: "snapshot-") else { return nil }
        return (HistoryIndexFile.Binding(token: token, historyStart: Int64(pending.bytes.lowerBound),
                                         historyEnd: Int64(pending.bytes.upperBound), firstLine: Int64(pending.firstLine), file: file),
                StoreFiles.historyIndex(ofSnapshot: pending.file))
    }

    /// What is wrong with the snapshot's history index, if there is one
    /// (for `verify`, before the history is read): it is not this
    /// snapshot's, fails a page's checksum, or differs from one built now.
    /// Nil when it is sound or there is none.
    func indexProblem() -> (problem: String, stale: Bool)? {
        guard let pending, let (binding, path) = indexBinding, FileIO.exists(path) else { return nil }
        // A folder, a FIFO or a link where the index goes is never read, and never replaced by a lookup.
        var st = stat()
        guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG else { return ("it is not a regular file", false) }
        guard let index = HistoryIndex(path: path, binding: binding) else {
            return ("it does not describe this snapshot's history (stale or damaged)", true)
        }
        guard index.checkEveryPage() else { return ("a page of it fails its checksum", false) }
        // Its bytes now: a fold may remove it while the one to compare with is built.
        guard let a = try? FileIO.readFile(path) else { return nil }
        // Built outside the store's folder: a writer there removes what looks
        // left over, and two verifies must not share a name.
        let rebuilt = (getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp") + "/tripstore-verify-\(TemporaryNames.unique())-\(binding.token).history-index"
        defer { FileIO.unlink(rebuilt) }
        var builder = HistoryIndexBuilder(binding: binding, snapshotFD: pending.fd)
        guard builder.readLines(), builder.write(to: rebuilt) else { return ("the history it describes could not be read", false) }
        guard let b = try? FileIO.readFile(rebuilt), a == b else {
            return ("it differs from the index of the snapshot's history built now", false)
        }
        return nil
    }

    /// Whether the index holds a line for each of the snapshot's history
    /// lines, the first at the history's start and the last at its end.
    private func covers(_ index: HistoryIndex, _ binding: HistoryIndexFile.Binding) -> Bool {
        guard index.transactionCount == snapshotCount, snapshotCount > 0,
              let first = index.transaction(0), let last = index.transaction(snapshotCount - 1) else { return snapshotCount == 0 && index.transactionCount == 0 }
        return first.lineStart == binding.historyStart && last.lineStart + last.lineLength + 1 == binding.historyEnd
    }

    /// The index of the snapshot whose lines are pending: opened, or built
    /// and written when it is missing or not this snapshot's.
    func openIndex() -> IndexedHistory? {
        switch index {
        case .open(let i): return i
        case .unusable: return nil
        case .notLookedFor: break
        }
        index = .unusable
        guard let pending, let (binding, path) = indexBinding else { return nil }
        if HistoryIndex(path: path, binding: binding) == nil {
            var builder = HistoryIndexBuilder(binding: binding, snapshotFD: pending.fd)
            guard builder.readLines(), builder.write(to: path) else { return nil }
        }
        guard let opened = HistoryIndex(path: path, binding: binding), covers(opened, binding) else { return nil }
        let indexed = IndexedHistory(index: opened, snapshotFD: pending.fd)
        index = .open(indexed)
        return indexed
    }
}
