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
        let saved = history
        history = keep
        do {
            try compact()
        } catch {
            history = saved
            throw error
        }
        return dropped
    }
}
