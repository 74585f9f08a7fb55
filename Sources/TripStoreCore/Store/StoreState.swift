/// What an open `Store` may do now. A store is in exactly one state, and
/// `Store.checkWritable(_:)` is the one place that decides whether a write
/// may happen.
///
/// ```
///   open(.read) ──▶ reading ──────────────┐
///   open(.write) ─▶ writing ──────────────┤
///                      │ a write changed   ├──▶ close() ──▶ closed
///                      │ memory, then      │
///                      ▼ failed            │
///                   broken ───────────────┤
///   past(at:) / open(asOf:) ─▶ past ──────┤
///   writing ─▶ migrate(to:) ─▶ migrated ──┘
///              (the store it returns is writing)
/// ```
///
/// - `reading`: opened with `StoreAccess.read`; reads, and catches up with
///   other processes' commits (`catchUp()`).
/// - `writing`: opened with `StoreAccess.write`, holding the writer's lock;
///   the only state in which any write succeeds.
/// - `past`: the store as it was right after a token (time travel). It is a
///   value of its own, made by `Store.past(at:)` or `Store.open(_:schema:asOf:)`;
///   the live store is never turned into the past.
/// - `broken`: a write changed memory and then failed before it was durable
///   (a snapshot could not be written): memory is ahead of the files, so
///   nothing more is written; open the store again.
/// - `migrated`: `migrate(to:)` moved the store to another schema and
///   returned a store of that schema, which holds the lock now; this value
///   refuses every write.
/// - `closed`: `close()` released the files and the lock.
public enum StoreState: Sendable, Equatable, CustomStringConvertible {
    case reading
    case writing
    case past(token: Int64)
    case broken(reason: String)
    case migrated(token: Int64)
    case closed

    public var description: String {
        switch self {
        case .reading: return "opened read-only"
        case .writing: return "open for writing"
        case .past(let token): return "a read-only view of the store as it was at token \(token)"
        case .broken(let reason): return "unusable for writing since an earlier write failed (\(reason)); open it again"
        case .migrated(let token): return "replaced by the store the migration at token \(token) returned; use that one"
        case .closed: return "closed"
        }
    }
}

/// The writes a store can be asked for; each checks `Store.checkWritable(_:)` first.
public enum StoreWrite: String, Sendable, CaseIterable {
    case commit, compact, pruneHistory, redact, repair, apply, bulkImport, migrate

    /// The write in a few words, for messages.
    public var noun: String {
        switch self {
        case .commit: return "a commit"
        case .compact: return "a compaction"
        case .pruneHistory: return "pruning history"
        case .redact: return "a redaction"
        case .repair: return "a repair"
        case .apply: return "applying a feed"
        case .bulkImport: return "a bulk import"
        case .migrate: return "a migration"
        }
    }
}

extension Store {
    /// Throws `StoreError.notWritable` unless the store is `.writing`: the one
    /// check that every write entry point makes before it changes anything.
    /// A write that rewrites the snapshot or the history first puts an
    /// automatic snapshot being written in the background in place.
    func checkWritable(_ write: StoreWrite) throws(StoreError) {
        guard state == .writing, lock != nil else { throw .notWritable(write, state: state) }
        if write != .commit && write != .apply { settleBackgroundSnapshot() }
        guard state == .writing else { throw .notWritable(write, state: state) }
    }

    /// A write changed memory and could not make it durable: from now on the
    /// store refuses writes (its memory is ahead of its files).
    /// Whether `write` may happen now: `checkWritable(_:)` without the error,
    /// for what a writer's open repairs (files a crash left, a torn journal
    /// tail, a missing image), which a reader leaves as they are.
    func mayWrite(_ write: StoreWrite) -> Bool {
        (try? checkWritable(write)) != nil
    }

    func markBroken(by error: any Error) {
        if state == .writing { state = .broken(reason: "\(error)") }
    }
}
