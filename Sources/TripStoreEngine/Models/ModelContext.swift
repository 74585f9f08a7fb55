import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// Inserts, fetches, deletes and saves model objects, SwiftData-style: one
/// transaction per `save()`, one instance per object (fetching the same id
/// twice gives the same instance), delete rules applied by the store.
///
/// ```swift
/// let context = ModelContext(container)
/// context.insert(trip)
/// try context.save(author: "alice")
/// let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\.startDate)]))
/// ```
///
/// A context belongs to one isolation domain (not `Sendable`, like its
/// model objects): use it from the actor or thread that made it. To work in
/// the background, give each actor its own context on the shared, `Sendable`
/// container (see `ModelActor`); contexts on one container take turns with
/// the store.
public final class ModelContext {
    /// The container whose store it reads and writes.
    public let container: ModelContainer
    /// The container's store; when it was read again from the JSON since
    /// this context last used it, the rows of what the context read are
    /// looked up again by id first (a row names an object in one open store).
    var store: Store {
        if storeGeneration != container.storeGeneration { takeRowsFromNewStore() }
        return container.store
    }
    /// The `container.storeGeneration` this context's rows belong to.
    var storeGeneration = 0
    var models: ModelSchema { container.models }
    /// One instance per id (weakly held).
    var identity = IdentityMap()
    var inserted: [PersistentModel] = []
    var deleted: [PersistentModel] = []
    /// Stored objects the program wrote a field of since they were read or
    /// saved: a save looks at these only, so its cost follows what changed.
    var changed: [ObjectIdentifier: PersistentModel] = [:]
    /// The slots of each changed object that the program itself wrote. A
    /// relationship that changed only as the inverse of one the program
    /// wrote is left to the store, which keeps pairs in step (and merges a
    /// to-many side two contexts added to, as it does for any save).
    var writtenSlots: [ObjectIdentifier: Set<Int>] = [:]
    /// What the context last read or saved of each stored object: its row,
    /// its values (relationships as rows) and the token they were read at.
    /// A save writes only what differs from this, and conflicts are judged
    /// from its token.
    struct ReadState {
        var row: RowID
        var values: [Value]
        var token: Int64
        /// Properties loaded later than `token` (faults), with the token each was read at.
        var loadedAt: [Int: Int64] = [:]
    }
    var read: [String: ReadState] = [:]
    /// What a model field's write or read means at this moment (see `FieldAccess`).
    var fieldAccess = FieldAccess.program
    /// Set when a field read under `.peeking` met a fault.
    var peekedFault = false
    /// Objects of another context given to `insert` or `delete`: the next
    /// `save()` refuses, naming the first (Core Data raises on such a call).
    var misused: [(type: String, id: String, what: String)] = []
    /// The read-only contexts `fetch(_:asOf:)` made, while their objects
    /// live: a save refuses while one of them holds a change, and a
    /// rollback drops it.
    var pastContexts: [PastContext] = []
    struct PastContext {
        weak var context: ModelContext?
    }

    /// A context with nothing pending; it belongs to the isolation domain that uses it.
    public init(_ container: ModelContainer) {
        self.container = container
        storeGeneration = container.storeGeneration
    }

    /// Adds a new object; it and the new objects it relates to are written
    /// by the next `save()`. Their relationships' inverses are set at once
    /// (appending a new item to `trip.bucketList` makes `item.trip` the trip).
    /// An object that belongs to another context is not taken: the next
    /// `save()` throws `StoreError.modelOfAnotherContext`, naming it.
    public func insert(_ model: PersistentModel) {
        container.lock.lock()
        defer { container.lock.unlock() }
        guard model.modelContext == nil else {
            if model.modelContext !== self { misused.append(("\(type(of: model))", model.persistentModelID, "inserted")) }
            return
        }
        adopt([model])
    }

    /// Marks an object for deletion at the next `save()` (delete rules apply
    /// then). An object inserted since the last save is simply taken back out.
    /// An object of another context is not deleted: the next `save()`
    /// throws `StoreError.modelOfAnotherContext`, naming it.
    public func delete(_ model: PersistentModel) {
        container.lock.lock()
        defer { container.lock.unlock() }
        guard model.modelContext === self else {
            if model.modelContext != nil { misused.append(("\(type(of: model))", model.persistentModelID, "deleted")) }
            return
        }
        if let i = inserted.firstIndex(where: { $0 === model }) {
            inserted.remove(at: i)
            detachFromInverses(model)
            identity[model.persistentModelID] = nil
            changed[ObjectIdentifier(model)] = nil
            writtenSlots[ObjectIdentifier(model)] = nil
            model.isDeleted = true
            model.modelContext = nil
            return
        }
        guard !deleted.contains(where: { $0 === model }) else { return }
        model.isDeleted = true
        deleted.append(model)
    }

    /// The objects this context has in memory now: the ones the program
    /// holds, and those with unsaved changes (Core Data's `registeredObjects`).
    public var registeredModels: [PersistentModel] {
        identity.values
    }

    /// True when there are inserts, deletes or changed attributes or relationships not yet saved.
    /// Changes to objects of the past this context fetched (`fetch(_:asOf:)`)
    /// count: a save refuses them until `rollback()`.
    public var hasChanges: Bool {
        if !inserted.isEmpty || !deleted.isEmpty { return true }
        return changed.values.contains { differs($0) } || pastContexts.contains { $0.context?.hasChanges == true }
    }

    // MARK: - Fetch

    /// Objects of `T` and its subclasses, each as its concrete class. Like
    /// SwiftData's default (`includePendingChanges`), unsaved changes count:
    /// an inserted object that matches is returned, an edited one is tested
    /// on its edited values, and one deleted (or cascaded from a deleted
    /// owner) is not returned.
    /// - Throws: `QueryError` for a query string that is not the query
    ///   language; errors the Foundation predicate throws while it is evaluated;
    ///   `StoreError.unsortable` for a sort key that is not a declared property.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        container.lock.lock()
        defer { container.lock.unlock() }
        try container.checkOpen()
        return try recoveringFromDamage { try fetchOnce(descriptor) }
    }

    private func fetchOnce<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        var (query, exact) = try makeQuery(descriptor)
        let fetching = try propertyNames(descriptor.propertiesToFetch, "propertiesToFetch")
        var out: [T] = []
        if hasChanges {
            let staged = try stagePendingChanges(forSave: false)
            var pendingModels: [RowID: PersistentModel] = [:]
            for m in staged.newModels { if let r = staged.newRows[ObjectIdentifier(m)] { pendingModels[r] = m } }
            let rows: [RowID]
            do {
                rows = try store.run(query, including: staged.tx)
            } catch {
                guard !descriptor.allPredicates.isEmpty else { throw error }
                rows = try store.run(query.scanningEveryObject(), including: staged.tx)
                exact = false
            }
            for row in rows {
                guard let m = (pendingModels[row] ?? materialize(row, fetching: fetching)) as? T else { continue }
                out.append(m)
            }
        } else {
            let result = try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: false)
            if result.scanned { exact = false }
            for row in result.rows {
                guard let m = materialize(row, fetching: fetching) as? T else { continue }
                out.append(m)
            }
        }
        let predicates = descriptor.allPredicates
        if !exact, !predicates.isEmpty {
            out = try out.filter { m in try predicates.allSatisfy { try $0.evaluate(m) } }
            let start = min(out.count, descriptor.fetchOffset ?? 0)
            let end = descriptor.fetchLimit.map { min(out.count, start + $0) } ?? out.count
            out = Array(out[start..<end])
        }
        if let prefetch = try propertyNames(descriptor.relationshipKeyPathsForPrefetching, "relationshipKeyPathsForPrefetching") {
            for m in out { load(m, properties: prefetch) }
        }
        return out
    }

    /// The stored names of a descriptor's key paths; nil for none (everything).
    private func propertyNames<T>(_ keyPaths: [PartialKeyPath<T>], _ what: String) throws -> Set<String>? {
        guard !keyPaths.isEmpty else { return nil }
        return Set(try keyPaths.map { kp in
            guard let name = models.propertyName(kp) else {
                throw StoreError.undeclaredProperty(model: "\(T.self)", keyPath: "\(kp)", use: what)
            }
            return name
        })
    }

    /// How many objects match (the limit and offset apply), pending changes included.
    /// - Throws: as `fetch`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        container.lock.lock()
        defer { container.lock.unlock() }
        try container.checkOpen()
        if hasChanges { return try fetch(descriptor).count }
        let (query, exact) = try makeQuery(descriptor)
        let plain = descriptor.allPredicates.isEmpty && descriptor.fetchLimit == nil && descriptor.fetchOffset == nil
        let result = try recoveringFromDamage { try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: plain) }
        if plain { return result.plan.steps.last?.actual ?? 0 }
        if exact && !result.scanned { return result.rows.count }
        return try fetch(descriptor).count
    }

    /// The plan a fetch would use (of the saved objects; pending ones are tested one by one).
    /// - Throws: as `fetch`.
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> FetchPlan {
        container.lock.lock()
        defer { container.lock.unlock() }
        let (query, exact) = try makeQuery(descriptor)
        let result = try recoveringFromDamage { try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: false) }
        return FetchPlan(query: result.scanned ? "" : query.text, plan: result.plan, evaluatedCandidates: !exact || result.scanned)
    }

    /// The engine query for a descriptor, and whether it is exact (false:
    /// each candidate must also be tested with the Foundation predicate, so
    /// paging is left to the context).
    func makeQuery<T: PersistentModel>(_ d: FetchDescriptor<T>) throws -> (Query, exact: Bool) {
        var expression: QueryExpression = .constant(true)
        var text = d.query ?? ""
        var exact = true
        let predicates = d.allPredicates
        if !predicates.isEmpty {
            let ts = predicates.map { PredicateTranslator(models: models).translate($0.expression) }
            let parts = ts.filter { $0.expression != .constant(true) }
            expression = parts.isEmpty ? .constant(true) : parts.count == 1 ? parts[0].expression : .and(parts.map(\.expression))
            text = parts.map { parts.count > 1 && $0.text.contains("||") ? "(\($0.text))" : $0.text }.joined(separator: " && ")
            exact = ts.allSatisfy(\.exact)
        } else if let q = d.query {
            expression = try QueryParser.parse(q)
        }
        var sort: [SortKey] = []
        for s in d.sortBy {
            guard let kp = s.keyPath, let name = models.propertyPath(kp) else {
                throw StoreError.unsortable(keyPath: s.keyPath.map { "\($0)" } ?? "a key path that is not a declared property")
            }
            sort.append(SortKey(name, descending: s.order == .reverse))
        }
        let query = Query(expression: expression, text: text, from: T.entityName, sort: sort,
                          limit: exact ? d.fetchLimit : nil, offset: exact ? (d.fetchOffset ?? 0) : 0)
        return (query, exact)
    }

    /// Runs a query on the saved objects. A translated predicate the engine
    /// cannot use becomes a scan of the type (`scanned`: the caller then
    /// tests each object).
    func run(_ query: Query, hasPredicate: Bool, countOnly: Bool) throws -> (rows: [RowID], plan: QueryPlan, scanned: Bool) {
        switch attempt(query, countOnly: countOnly) {
        case .success(let r):
            return (r.rows, r.plan, false)
        case .failure(let error):
            guard hasPredicate else { throw error }
            let r = try store.run(query.scanningEveryObject())
            return (r.rows, r.plan, true)
        }
    }

    private func attempt(_ query: Query, countOnly: Bool) -> Result<QueryResult, QueryError> {
        do {
            return .success(try store.run(query, countOnly: countOnly))
        } catch {
            return .failure(error)
        }
    }

    // MARK: - History

    /// Committed transactions after `token`, optionally only changes of these
    /// types (subclasses included) and kinds.
    public func history(since token: Int64? = nil, types: [PersistentModel.Type]? = nil,
                        kinds: Set<Change.Kind>? = nil) -> [HistoryTransaction] {
        container.lock.lock()
        defer { container.lock.unlock() }
        let names = types.map { ts in ts.reduce(into: Set<String>()) { $0.formUnion(models.schema.deepTypeNames($1.entityName) ?? []) } }
        return retained(HistoryFilter(since: token, types: names, kinds: kinds))
    }

    /// One object's timeline: the committed transactions that changed it,
    /// each with only its changes (insert, updates, delete with tombstone),
    /// oldest first; also for an object deleted since. Costs what it
    /// returns at any history size (the snapshot's history index).
    public func history(of model: PersistentModel) -> [HistoryTransaction] {
        history(forID: model.persistentModelID)
    }

    /// `history(of:)` by the object's id, for an object no longer in memory or deleted.
    public func history(forID id: String) -> [HistoryTransaction] {
        container.lock.lock()
        defer { container.lock.unlock() }
        return retained(HistoryFilter(id: Identifier.normalized(id)))
    }

    /// The retained history that passes `filter` (a line that cannot be read is left out, as `store.history` does).
    private func retained(_ filter: HistoryFilter) -> [HistoryTransaction] {
        (try? store.history(matching: filter)) ?? filter.apply(to: store.history)
    }
}
