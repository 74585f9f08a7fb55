extension Store {
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
