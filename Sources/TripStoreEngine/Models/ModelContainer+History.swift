import TripStoreCore
import TripStoreFormat
import Foundation

extension ModelContainer {
    /// The store as it was right after `token`, read-only: its contexts fetch
    /// and load relationships from that past state, and a save throws.
    /// - Throws: `StoreError.tokenOutOfReach` naming the reachable range for
    ///   a token outside retained history.
    public func asOf(_ token: Int64) throws -> ModelContainer {
        let past = try withStore { s in try s.past(at: .token(token)) }
        return ModelContainer(models: models, unshared: past)
    }

    /// The change feed: each transaction committed after `token` (nil: after
    /// the last one now), in order and once each, as it commits, whether
    /// this process or another saved it. It reads the store's files (never
    /// the lock) every `pollInterval` seconds while it waits, and ends when
    /// its task is cancelled.
    ///
    /// ```swift
    /// for try await t in container.changes() { print(t.token, t.author, t.changes.count) }
    /// ```
    public func changes(since token: Int64? = nil, pollInterval: Double = 0.02) -> HistoryChanges {
        HistoryChanges(folder: store.files.folder, schema: models.schema, since: token, pollInterval: pollInterval)
    }
}

extension ModelContext {
    /// Fetches as the store was right after `token` (time travel). The
    /// objects belong to a read-only context of their own, and their
    /// relationships load from the same past. They are read-only: once one
    /// is changed, this context's `save()` throws `StoreError.pastModel`
    /// naming it (nothing is saved, the change stays), and `rollback()`
    /// drops the change.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>, asOf token: Int64) throws -> [T] {
        let past = ModelContext(try container.asOf(token))
        let objects = try past.fetch(descriptor)
        container.lock.lock()
        defer { container.lock.unlock() }
        pastContexts = pastContexts.filter { $0.context != nil } + [PastContext(context: past)]
        return objects
    }

    /// The first change made to an object of the past that a save of this
    /// context would be asked to write (here, or in a context `fetch(_:asOf:)` made).
    func changeToThePast() -> StoreError? {
        if case .past(let token) = store.state, let (m, action) = firstPendingChange() {
            return .pastModel(type: "\(type(of: m))", id: m.persistentModelID, token: token, action: action)
        }
        for past in pastContexts {
            if let error = past.context?.changeToThePast() { return error }
        }
        return nil
    }

    /// The first object with a pending change, and what the change is.
    private func firstPendingChange() -> (PersistentModel, String)? {
        if let m = inserted.first { return (m, "inserted") }
        if let m = deleted.first { return (m, "deleted") }
        if let m = changed.values.first(where: { differs($0) }) { return (m, "changed") }
        return nil
    }
}

/// Transactions as they are committed (see `ModelContainer.changes(since:)`).
public struct HistoryChanges: AsyncSequence, Sendable {
    public typealias Element = HistoryTransaction
    let folder: String
    let schema: Schema
    let since: Int64?
    let pollInterval: Double

    public func makeAsyncIterator() -> Iterator {
        Iterator(source: self)
    }

    /// Polls the store's files; each transaction comes once, in token order.
    public struct Iterator: AsyncIteratorProtocol {
        let source: HistoryChanges
        var follower: HistoryFollower?
        var buffer: [HistoryTransaction] = []

        init(source: HistoryChanges) {
            self.source = source
        }

        /// The next committed transaction; nil once the task is cancelled.
        /// - Throws: what opening the store throws (`StoreError`), or `.historyNotRetained`
        ///   when history the feed needs was pruned.
        public mutating func next() async throws -> HistoryTransaction? {
            while buffer.isEmpty {
                if Task.isCancelled { return nil }
                if follower == nil {
                    let (folder, schema) = (source.folder, source.schema)
                    follower = try HistoryFollower(folder: folder, since: source.since) {
                        try Store.open(folder, schema: schema, access: .read)
                    }
                }
                if let batch = try follower?.poll() {
                    buffer = batch.transactions
                } else {
                    do {
                        try await Task.sleep(nanoseconds: UInt64(source.pollInterval * 1e9))
                    } catch {
                        return nil
                    }
                }
            }
            return buffer.removeFirst()
        }
    }
}
