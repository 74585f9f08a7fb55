import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A point in a store's history: a token, or a time, meaning the last token
/// committed at or before it (`.time(ISOTime("2026-11-16T09:00:00Z")!)`, or
/// `.time(ISOTime(seconds: date.timeIntervalSinceReferenceDate))`).
public enum PointInTime: Sendable, Equatable {
    case token(Int64)
    case time(ISOTime)
}

/// Objects at an earlier token, worked out backwards from now.
package struct Rewinding {
    /// The objects whose state then differs from now (every object, once a
    /// migration was crossed).
    var states: [String: PastState] = [:]
    /// The schema of that time, once the walk went back across a migration
    /// (nil: the store's own).
    var schema: Schema?
}

/// One object at an earlier token, as retained history rebuilds it.
package enum PastState: Sendable {
    /// The object did not exist then.
    case absent
    /// It existed: `base` (the object as it is now, when it still exists)
    /// with `data` laid over it (values as JSON, relationships as references).
    /// Keeping the current object as it is, rather than as JSON, spares
    /// reading every object it refers to.
    case present(type: String, base: StoredObject?, data: [JSONMember])
}

/// The names one type and its subclasses had in each part of retained
/// history: migrations may rename, add or remove entities, and a name may
/// mean another entity before a migration than after it.
public struct HistoryTypeNames: Sendable, Equatable {
    /// Each era of history, from the token that starts it (a migration's),
    /// with the names the type and its subclasses had then.
    public let eras: [Era]

    public struct Era: Sendable, Equatable {
        /// The first token of the era (`Int64.min` for the first).
        public let from: Int64
        public let names: Set<String>
    }

    /// Whether a change of `type` recorded at `token` is one of the type's.
    public func contains(_ type: String, at token: Int64) -> Bool {
        (eras.last { $0.from <= token }?.names.contains(type)) ?? false
    }

    /// Every name the type had, in any era.
    public var allNames: Set<String> { eras.reduce(into: Set<String>()) { $0.formUnion($1.names) } }
}

extension Store {
    /// The tokens `--as-of` can reach: from just before the oldest retained
    /// transaction (0, the empty store, while token 1 is retained) to the last.
    public var reachableTokens: ClosedRange<Int64> {
        guard let oldest = oldestRetainedToken else { return lastToken...lastToken }
        return (oldest - 1)...lastToken
    }

    /// The last token committed at or before `time` (seconds since the
    /// reference date), or nil when that is before every reachable token.
    /// Reads only each history line's leading token and time.
    public func token(at time: Double) throws -> Int64? {
        try token(at: ISOTime(seconds: time))
    }

    /// The last token committed at or before `time`, compared exactly (text
    /// may be finer than a commit time's `Double`), or nil when that is
    /// before every reachable token.
    public func token(at time: ISOTime) throws -> Int64? {
        guard let last = try lastCommitTime() else { return lastToken }  // no history: only the current state
        if time.isAtOrAfter(last) { return lastToken }
        // The journal's transactions are in memory, and newer than the snapshot's.
        if let t = historyLog.loaded.last(where: { time.isAtOrAfter($0.timestamp) }) { return t.token }
        // The snapshot's own token was committed when its trailer says, even
        // when a prune dropped its history line; so was the state just
        // before the oldest retained transaction, the oldest reachable.
        let oldestState = oldestRetainedToken.flatMap { oldest in
            historyLog.oldestReachableCommit.flatMap { time.isAtOrAfter($0) ? oldest - 1 : nil }
        }
        let snapshotState = historyLog.snapshotLastCommit.flatMap { time.isAtOrAfter($0) ? snapshotToken : nil } ?? oldestState
        guard let pending = historyLog.pending else { return snapshotState }
        var bytes = [UInt8](repeating: 0, count: pending.bytes.count)
        guard bytes.withUnsafeMutableBytes({ FileIO.read(pending.fd, into: $0, at: pending.bytes.lowerBound) }) == bytes.count else {
            throw StoreError.damaged(file: pending.file, line: nil, detail: "the history could not be read again", repairable: false)
        }
        var found: Int64?
        var unreadable = false
        bytes.withUnsafeBufferPointer { buf in
            JSONLines.forEachLine(in: buf) { _, range, _ in
                let line = UnsafeBufferPointer(rebasing: buf[range])
                guard let token = Self.leadingToken(line), let at = Self.leadingTimestamp(line) else {
                    unreadable = true
                    return
                }
                if time.isAtOrAfter(at) { found = token }
            }
        }
        if unreadable { return try checkedHistory().last(where: { time.isAtOrAfter($0.timestamp) })?.token }
        return found ?? snapshotState
    }

    /// Checks that `token` is reachable, naming the range when it is not.
    func checkReachable(_ token: Int64) throws(StoreError) {
        let r = reachableTokens
        guard r.contains(token) else {
            throw .tokenOutOfReach(token: token, reachable: r, oldestRetained: oldestRetainedToken)
        }
    }

    /// The token a point in time names: a token as it is (once checked to be
    /// reachable), a time as the last token committed at or before it.
    public func token(at point: PointInTime) throws -> Int64 {
        switch point {
        case .token(let t):
            try checkReachable(t)
            return t
        case .time(let time):
            guard let t = try token(at: time) else {
                // The state before the oldest retained transaction, where a prune kept its time.
                let boundary = oldestRetainedToken.flatMap { t in historyLog.oldestReachableCommit.map { (token: t - 1, timestamp: $0) } }
                let earliest = boundary ?? history.first.map { (token: $0.token, timestamp: $0.timestamp) }
                throw StoreError.timeOutOfReach(time: time, reachable: reachableTokens, earliest: earliest)
            }
            return t
        }
    }

    /// The store as it was right after `point`, as a separate read-only value
    /// (its state is `.past`): queries, gets and exports on it answer as of
    /// then, and every write on it throws. This store is left as it is.
    ///
    /// ```swift
    /// let then = try store.past(at: .token(41))
    /// let rows = try then.run(Query("is BusinessTrip")).rows
    /// ```
    /// - Throws: `StoreError.tokenOutOfReach` / `.timeOutOfReach` naming what
    ///   retained history reaches; what `Store.open` throws.
    public func past(at point: PointInTime) throws -> Store {
        let token = try token(at: point)
        let past: Store
        if try files.folder.isEmpty || !files.exists() {
            // Nothing was ever written: the past is the empty store.
            past = Store(folder: files.folder, schema: schema, access: .read, options: options)
        } else {
            past = try Store.open(files.folder, schema: schema, access: .read, options: options)
        }
        return try Rewinder(past).rewound(to: token)
    }

    /// Opens the store in `folder` as it was right after `point`: one open
    /// and `past(at:)` in a single step, for a program that wants only the past.
    /// - Throws: what `open` and `past(at:)` throw.
    public static func open(_ folder: String, schema: Schema, asOf point: PointInTime,
                            options: StoreOptions = StoreOptions()) throws -> Store {
        let store = try open(folder, schema: schema, access: .read, options: options)
        do {
            return try Rewinder(store).rewound(to: try store.token(at: point))
        } catch {
            // Rows of a damaged piece of the image read as empty: the past
            // cannot be rebuilt from them, but the JSON is sound.
            let damage = store.imageDamage, image = store.imagePath
            store.close()
            if let damage { throw StoreError.imageDamaged(file: image, detail: damage) }
            throw error
        }
    }

    /// Each insert's envelope right after its transaction (for `--format feed`
    /// and `history --id`), for the transactions in `wanted` (tokens after
    /// `since`), keyed by token and id: one walk back from now. An envelope
    /// recorded before a migration has the names of its time.
    public func insertEnvelopes(after since: Int64, wanted: Set<Int64>,
                                 only id: String? = nil) throws -> [Int64: [String: JSONValue]] {
        if let id, let own = historyLog.indexedLookup(HistoryFilter(since: since, id: id)),
           let migrations = historyLog.indexedLookup(HistoryFilter(since: since, kinds: [.migrate])) {
            // One object's envelopes depend on its own changes and the migrations only.
            return try Rewinder(self).insertEnvelopes(walking: (own + migrations).sorted { $0.token < $1.token }, wanted: wanted) { _, inserted in inserted == id }
        }
        return try Rewinder(self).insertEnvelopes(after: since, wanted: wanted) { _, inserted in id == nil || inserted == id }
    }

    /// The names under which retained history records objects of type
    /// `name` and its subclasses, era by era (each migration starts one): a
    /// type renamed since is found under its former names, a name that only
    /// history knows (an entity removed or renamed) counts too. Nil for a
    /// name that no schema of retained history has.
    /// - Throws: `StoreError.damaged` naming a history line it cannot read.
    public func historyTypeNames(_ name: String) throws -> HistoryTypeNames? {
        let plans = try Rewinder(self).migrationPlans().sorted { $0.key < $1.key }
        // Era k runs under the schema before migration k; the last under the store's own.
        let schemas = plans.map(\.value.from) + [schema]
        guard let start = schemas.indices.reversed().first(where: { schemas[$0].entity(named: name) != nil }) else { return nil }
        var entity = [String?](repeating: nil, count: schemas.count)
        entity[start] = name
        // Back: the entity that migration k-1 carried into this one.
        var k = start
        while k > 0, let current = entity[k] {
            let plan = plans[k - 1].value
            let target = plan.to.entity(named: current)?.id
            entity[k - 1] = plan.mappings.firstIndex { $0 != nil && $0?.entity == target }.map { plan.from.entities[$0].name }
            k -= 1
        }
        // Forward: what migration k carried it into.
        k = start
        while k < plans.count, let current = entity[k] {
            let plan = plans[k].value
            entity[k + 1] = plan.from.entity(named: current).flatMap { plan.mappings[$0.id] }.map { plan.to.entities[$0.entity].name }
            k += 1
        }
        var eras: [HistoryTypeNames.Era] = []
        for (k, e) in entity.enumerated() {
            let names = e.flatMap { schemas[k].deepTypeNames($0) } ?? []
            eras.append(.init(from: k == 0 ? Int64.min : plans[k - 1].key, names: names))
        }
        return HistoryTypeNames(eras: eras)
    }
}
