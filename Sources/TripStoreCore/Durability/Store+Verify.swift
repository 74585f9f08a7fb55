import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// True when the journal ends with a torn (incomplete) line.
    public var hasTornTail: Bool { journal.tornTail != nil }

    /// True when the store has a snapshot file.
    public var hasSnapshotFile: Bool { hasSnapshot }

    /// Checks that every reference points at a live object of the right type
    /// and that both sides of every relationship agree. Empty when sound.
    public func checkInvariants() -> [String] {
        var problems = table.referenceProblems(limit: 100)
        problems.append(contentsOf: indexes.checkInvariants(table))
        _ = history.count  // reads the snapshot's history lines, noting any that cannot be read
        problems.append(contentsOf: historyLog.problems.map(\.description))
        let tokens = history.map(\.token)
        if tokens != tokens.sorted() || Set(tokens).count != tokens.count {
            problems.append("history tokens are not strictly increasing")
        }
        if let last = tokens.max(), last > lastToken {
            problems.append("history holds token \(last), after the store's last token \(lastToken)")
        }
        return problems
    }

    /// What `verify` adds about commit times (apart from `checkInvariants`,
    /// whose damage blocks a repair; these do not): times that go back, a
    /// snapshot's `lastCommit` that disagrees with its last history line,
    /// and an oldest reachable state said to be younger than retained history.
    public func commitTimeProblems() -> [String] {
        var problems: [String] = []
        let history = self.history
        let snapshotLines = historyLog.snapshotCount
        if let said = historyLog.snapshotLastCommit, snapshotLines > 0, snapshotLines <= history.count,
           history[snapshotLines - 1].timestamp != said {
            problems.append("the snapshot says its last commit was at \(ISODate.format(said)), "
                + "its last history line says \(ISODate.format(history[snapshotLines - 1].timestamp))")
        }
        if let oldest = historyLog.oldestReachableCommit, let last = historyLog.snapshotLastCommit ?? history.last?.timestamp, last < oldest {
            problems.append("the snapshot says the oldest reachable state was committed at \(ISODate.format(oldest)), after the last commit (\(ISODate.format(last)))")
        }
        if let oldest = historyLog.oldestReachableCommit, let first = history.first, first.timestamp < oldest {
            problems.append("the snapshot says the oldest reachable state was committed at \(ISODate.format(oldest)), "
                + "after the oldest retained transaction (token \(first.token), \(ISODate.format(first.timestamp)))")
        }
        if let k = history.indices.dropFirst().first(where: { history[$0].timestamp < history[$0 - 1].timestamp }) {
            problems.append("history goes back in time at token \(history[k].token) (\(ISODate.format(history[k].timestamp)), "
                + "after \(ISODate.format(history[k - 1].timestamp)))")
        }
        return problems
    }
}
