import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension Store {
    /// Commits a transaction: appends its journal line, flushes it to disk,
    /// then applies it in memory. Returns nil (and writes nothing) when the
    /// transaction changes nothing.
    ///
    /// A transaction staged before other commits is checked against them: if
    /// they changed a property it sets, or deleted an object it changes,
    /// deletes or links to, or inserted an id it inserts, it is refused with
    /// `StoreError.conflict`; otherwise it is merged onto the current state.
    /// A transaction whose result would leave a reference to a missing object,
    /// of the wrong type, or one side of a pair without the other is refused
    /// with `StoreError.inconsistent`. Either way nothing is written.
    ///
    /// When this returns, the transaction survives a crash. A failure before
    /// that leaves the store as it was.
    /// - Throws: `StoreError.conflict`, `StoreError.inconsistent`,
    ///   `StoreError.denied` (a deny rule), `StoreError.notWritable` (a store
    ///   not open for writing), `.foreignTransaction` (another store's
    ///   transaction), `IOError` when the journal cannot be written and flushed. Nothing is written in any of these cases.
    @discardableResult
    public func commit(_ staged: TransactionBuilder, author: String, timestamp: Double? = nil) throws -> HistoryTransaction? {
        try commit(staged, author: author, timestamp: timestamp, orderedLike: nil)
    }

    /// `commit`, recording the changes in the order of `order` (a replayed
    /// feed line's, whose changes the transaction was checked to make), so a
    /// standby's history is the primary's byte for byte.
    func commit(_ staged: TransactionBuilder, author: String, timestamp: Double?, orderedLike order: [Change]?) throws -> HistoryTransaction? {
        try checkWritable(.commit)
        guard staged.table === table else { throw StoreError.foreignTransaction }
        var tx = staged
        let conflicts = conflicts(in: tx)
        if !conflicts.isEmpty { throw StoreError.conflict(conflicts) }
        Trace.mark("conflicts")
        if tx.baseToken != lastToken || tx.base != table.rowCount {
            tx = try tx.rebased(onto: lastToken)
        }
        try tx.checkDenyRules()
        Trace.mark("rebase and deny rules")
        if let first = tx.disagreeingInverses.first {
            // The rows came from an image whose two sides of a relationship
            // disagree: following one side would break the other in the JSON.
            guard let image = table.image else { throw StoreError.inconsistent(tx.disagreeingInverses) }
            image.noteDamage("relationships whose sides disagree (\(first))")
            throw StoreError.imageDamaged(file: imagePath, detail: table.imageDamage ?? first)
        }
        let problems = tx.integrityProblems()
        if !problems.isEmpty {
            // Rows of a damaged image read as empty: the damage, not the change, is what is wrong.
            if let d = table.imageDamage { throw StoreError.imageDamaged(file: imagePath, detail: d) }
            throw StoreError.inconsistent(problems)
        }
        Trace.mark("checks")
        var changes = tx.changes()
        if let order { changes = Self.reordered(changes, like: order) }
        Trace.mark("changes")
        if changes.isEmpty { return nil }
        // Commit times never decrease, even when the clock is set back.
        let t = HistoryTransaction(token: lastToken + 1, timestamp: max(timestamp ?? Store.now(), try lastCommitTime() ?? -.infinity),
                                   author: author, changes: changes)
        if changes.count >= options.snapshotCommitChanges {
            return try commitBySnapshot(tx, t)
        }
        try touchWhatApplyReads(tx)
        let line = JournalFormat.line(t, schema: schema, inserted: tx.insertedObjects, lookup: tx)
        Trace.mark("journal line \(line.count) bytes")
        try appendToJournal(line)
        Trace.mark("journal write+fsync")
        apply(tx)
        Trace.mark("table and indexes updated")
        historyLog.append(t)
        lastToken = t.token
        if let state = journal.state {
            // The rows the commit changed, deleted or added (`apply`).
            let rows = Set((tx.changedOrder + tx.deletedOrder).filter { Int($0) < tx.base }).sorted()
                + (tx.base..<table.rowCount).map { RowID($0) }
            state.committed(line: line, journal: journal, rows: rows, table: table)
            Trace.mark("journal state")
        }
        snapshotIfDue()
        return t
    }

    /// `changes` in the order the same changes have in `order`; any not
    /// found there keep their place after those that are.
    static func reordered(_ changes: [Change], like order: [Change]) -> [Change] {
        func key(_ c: Change) -> String { "\(c.kind.rawValue)\u{0}\(c.type)\u{0}\(c.id)" }
        var rank: [String: Int] = [:]
        for (k, c) in order.enumerated() where rank[key(c)] == nil { rank[key(c)] = k }
        return changes.enumerated().sorted { a, b in
            let x = rank[key(a.element)] ?? order.count + a.offset, y = rank[key(b.element)] ?? order.count + b.offset
            return x != y ? x < y : a.offset < b.offset
        }.map(\.element)
    }

    /// Applies the transaction in memory and writes it as a new snapshot: the
    /// rename makes it durable, all or nothing. If writing fails, the files
    /// still hold the previous state and this `Store` must be opened again.
    func commitBySnapshot(_ tx: TransactionBuilder, _ t: HistoryTransaction) throws -> HistoryTransaction {
        try touchWhatApplyReads(tx)
        guard table.checkEverything() else { throw StoreError.imageDamaged(file: imagePath, detail: table.imageDamage ?? "") }
        apply(tx)
        Trace.mark("table and indexes updated")
        return try recordBySnapshot(t)
    }

    /// Records a transaction already applied to the table and writes the
    /// new snapshot that makes it durable; a failure leaves this `Store` to be opened again.
    func recordBySnapshot(_ t: HistoryTransaction) throws -> HistoryTransaction {
        historyLog.append(t)
        lastToken = t.token
        do {
            try compact(tableIsChecked: true)
        } catch {
            // Before the new snapshot took its place nothing was committed (the
            // command line then runs a damaged image's work again from the JSON).
            if !FileIO.exists(files.snapshot(t.token)) { lastToken = t.token - 1 }
            markBroken(by: error)
            throw error
        }
        return t
    }

    func appendToJournal(_ line: [UInt8]) throws {
        try recordSchemaIfNeeded()
        do {
            try journal.append(line)
        } catch let e as IOError where (e.code == ENOSPC || e.code == EDQUOT) && snapshotWork.background != nil {
            // The snapshot being written in the background holds space the
            // commit needs: it gives way, as a foreground one would have
            // failed and freed it before this commit (the append cut what it wrote).
            abandonBackgroundSnapshot(because: e)
            try journal.append(line)
        } catch let e as IOError where (e.code == ENOSPC || e.code == EDQUOT) && LocklessCompaction.isRunning(in: files.folder) {
            // So does a compaction running without the lock: its files go,
            // and it drops its snapshot when it finds them gone.
            let theirs = ((try? files.list().temporary) ?? []).filter(LocklessCompaction.isItsFile)
            guard !theirs.isEmpty else { throw e }
            for f in theirs { FileIO.unlink(f) }
            try journal.append(line)
        }
    }

    /// Puts a committed transaction's objects into the table and indexes.
    /// Reads, before anything is written, every piece of the image that
    /// `apply` will read, so that damage in it stops the commit instead of
    /// showing halfway through (its pieces are checked when first touched).
    private func touchWhatApplyReads(_ tx: TransactionBuilder) throws {
        guard table.image != nil else { return }
        // The type index is not read: rows added and removed are laid over
        // the image's until a query reads them (see `StoreIndexes`).
        for row in tx.changedOrder + tx.deletedOrder where Int(row) < tx.base {
            if table.entity(at: row) != nil { _ = table.object(at: row) }
        }
        if let d = table.imageDamage { throw StoreError.imageDamaged(file: imagePath, detail: d) }
    }

    func apply(_ tx: TransactionBuilder) {
        table.reserve(tx.newObjects.count)
        for (i, o) in tx.newObjects.enumerated() {
            let row = RowID(tx.base + i)
            if let o, !tx.deleted.contains(row) {
                table.set(o, at: row)
                indexes.add(row, o)
                table.oneWay.update(row: row, old: nil, new: o)
            } else {
                table.appendEmpty()
            }
        }
        for row in tx.changedOrder where !tx.deleted.contains(row) {
            guard let new = tx.changed[row], let old = table.object(at: row) else { continue }
            indexes.update(row, old: old, new: new)
            table.oneWay.update(row: row, old: old, new: new)
            table.set(new, at: row)
        }
        for row in tx.deletedOrder where Int(row) < tx.base {
            if let old = table.object(at: row) {
                indexes.remove(row, old)
                table.oneWay.update(row: row, old: old, new: nil)
            }
            table.remove(row)
        }
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        // History keeps milliseconds, counted from the reference date as dates are.
        return Double((Int64(ts.tv_sec) - Int64(ISODate.referenceOffset)) * 1000 + Int64(ts.tv_nsec / 1_000_000)) / 1000
    }

    /// Before a writer's first journal line or snapshot: records the schema
    /// when the store has no record or an older one (this program added to it).
    func recordSchemaIfNeeded() throws {
        guard recordedFingerprint != schema.fingerprint else { return }
        let previous = recordedFingerprint
        // The renames the record names stay named (see `Schema.keepingRenames`).
        try writeSchemaRecord(of: recordedDescriptions.map { schema.keepingRenames(recordedIn: $0) }, to: files.schemaRecord)
        recordedFingerprint = schema.fingerprint
        if previous != nil {
            warnings.append(.schemaExtended(fingerprint: schema.fingerprint, record: files.schemaRecord))
        }
    }

    /// Writes this store's schema (or `other`, of the same shape) as a
    /// record at `path`: a temporary file, flushed, renamed, and the folder flushed.
    func writeSchemaRecord(of other: Schema? = nil, to path: String) throws {
        try FileIO.replaceDurably(path, with: SchemaRecordFormat.bytes(other ?? schema), folder: files.folder)
    }
}
