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
    var store: Store { container.store }
    var models: ModelSchema { container.models }
    /// One instance per id.
    private var identity: [String: PersistentModel] = [:]
    private var inserted: [PersistentModel] = []
    private var deleted: [PersistentModel] = []
    /// What the context last read or saved of each stored object: its row,
    /// its values (relationships as rows) and the token they were read at.
    /// A save writes only what differs from this, and conflicts are judged
    /// from its token.
    struct ReadState {
        var row: RowID
        var values: [Value]
        var token: Int64
    }
    private var read: [String: ReadState] = [:]
    /// Instances whose objects another save deleted (found by `refresh`): a
    /// save that still reaches one is a conflict, never an insert.
    private var vanished: [ObjectIdentifier: StoreConflict] = [:]

    /// A context with nothing pending; it belongs to the isolation domain that uses it.
    public init(_ container: ModelContainer) {
        self.container = container
    }

    /// Adds a new object; it (and new objects it relates to) is written by the next `save()`.
    public func insert(_ model: PersistentModel) {
        guard identity[model.persistentModelID] !== model else { return }
        identity[model.persistentModelID] = model
        inserted.append(model)
    }

    /// Marks an object for deletion at the next `save()` (delete rules apply then).
    public func delete(_ model: PersistentModel) {
        if let i = inserted.firstIndex(where: { $0 === model }) {
            inserted.remove(at: i)
            identity[model.persistentModelID] = nil
            return
        }
        deleted.append(model)
    }

    /// True when there are inserts, deletes or changed attributes or relationships not yet saved.
    public var hasChanges: Bool {
        if !inserted.isEmpty || !deleted.isEmpty { return true }
        return identity.values.contains { differs($0) }
    }

    // MARK: - Fetch

    /// Objects of `T` and its subclasses, each as its concrete class. Like
    /// SwiftData's default (`includePendingChanges`), unsaved changes count:
    /// an inserted object that matches is returned, an edited one is tested
    /// on its edited values, and one deleted (or cascaded from a deleted
    /// owner) is not returned.
    /// - Throws: `QueryError` for a query string that is not the query
    ///   language; errors the Foundation predicate throws while it is evaluated;
    ///   `StoreError.usage` for a sort key that is not a declared property.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        container.lock.lock()
        defer { container.lock.unlock() }
        var (query, exact) = try makeQuery(descriptor)
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
                guard let m = (pendingModels[row] ?? materialize(row)) as? T else { continue }
                out.append(m)
            }
        } else {
            let result = try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: false)
            if result.scanned { exact = false }
            for row in result.rows {
                guard let m = materialize(row) as? T else { continue }
                out.append(m)
            }
        }
        let predicates = descriptor.allPredicates
        guard !exact, !predicates.isEmpty else { return out }
        out = try out.filter { m in try predicates.allSatisfy { try $0.evaluate(m) } }
        let start = min(out.count, descriptor.fetchOffset ?? 0)
        let end = descriptor.fetchLimit.map { min(out.count, start + $0) } ?? out.count
        return Array(out[start..<end])
    }

    /// How many objects match (the limit and offset apply), pending changes included.
    /// - Throws: as `fetch`.
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        container.lock.lock()
        defer { container.lock.unlock() }
        if hasChanges { return try fetch(descriptor).count }
        let (query, exact) = try makeQuery(descriptor)
        let plain = descriptor.allPredicates.isEmpty && descriptor.fetchLimit == nil && descriptor.fetchOffset == nil
        let result = try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: plain)
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
        let result = try run(query, hasPredicate: !descriptor.allPredicates.isEmpty, countOnly: false)
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
            guard let kp = s.keyPath, let name = models.propertyName(kp) else {
                throw StoreError.usage("cannot sort by \(s.keyPath.map { "\($0)" } ?? "a key path that is not a declared property")")
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

    // MARK: - Materialising

    /// The instance for a row: the one already known, or a new one of the concrete class.
    func materialize(_ row: RowID) -> PersistentModel? {
        guard let o = store.table.object(at: row) else { return nil }
        if let m = identity[o.id] { return m }
        let m = models.types[o.entity].init()
        m.persistentModelID = o.id
        identity[o.id] = m
        read[o.id] = ReadState(row: row, values: o.values, token: store.lastToken)
        fill(m, from: o, keepingChangesSince: nil)
        return m
    }

    /// Sets an instance's properties from the stored object, materialising
    /// related objects. With `keepingChangesSince`, a property the program
    /// changed since that read keeps the program's value.
    func fill(_ m: PersistentModel, from o: StoredObject, keepingChangesSince before: ReadState?) {
        for (slot, p) in models.properties[o.entity].enumerated() {
            if let before, isChanged(m, slot: slot, p, since: before) { continue }
            switch p.kind {
            case .attribute(_, _, let set):
                _ = set(m, o.values[slot])
            case .relationship(let r, _, _, let set):
                let targets = o.values[slot].rows.compactMap { materialize($0) }
                set(m, r.isToMany ? .many(targets) : .one(targets.first))
            }
        }
    }

    /// The rows a relationship of an instance holds now; nil when it holds an object not yet saved.
    private func rows(of related: ModelProperty.Related) -> [RowID]? {
        var out: [RowID] = []
        switch related {
        case .one(let t):
            guard let t else { return [] }
            guard let r = read[t.persistentModelID]?.row else { return nil }
            out.append(r)
        case .many(let ts):
            for t in ts {
                guard let r = read[t.persistentModelID]?.row else { return nil }
                out.append(r)
            }
        }
        return out
    }

    /// Whether the program changed a property since the context read it.
    private func isChanged(_ m: PersistentModel, slot: Int, _ p: ModelProperty, since state: ReadState) -> Bool {
        switch p.kind {
        case .attribute(_, let get, _):
            return get(m) != state.values[slot]
        case .relationship(_, _, let get, _):
            guard let now = rows(of: get(m)) else { return true }
            return now != state.values[slot].rows
        }
    }

    // MARK: - Save

    /// Writes what the program changed since the context read each object
    /// (inserts, changed attributes and relationships, deletes) as one
    /// transaction; nothing if nothing changed. Properties the program did not
    /// change are not written, so another context's saved changes to them stay.
    ///
    /// - Throws: `StoreError.conflict` when a property this save changes was
    ///   changed by another save after this context read it, or an object it
    ///   changes, deletes or links to was deleted since. Nothing is written and
    ///   the pending changes stay: call `refresh` to take in what others saved
    ///   (pending changes are kept), then `save` again. Also `StoreError.denied`
    ///   for a deny rule, and file-system errors.
    @discardableResult
    public func save(author: String = ProcessInfo.processInfo.environment["USER"] ?? "unknown") throws -> HistoryTransaction? {
        container.lock.lock()
        defer { container.lock.unlock() }
        let staged = try stagePendingChanges(forSave: true)
        let (tx, newRows, newModels) = (staged.tx, staged.newRows, staged.newModels)
        let t = try store.commit(tx, author: author)
        inserted.removeAll()
        for m in deleted {
            identity[m.persistentModelID] = nil
            read[m.persistentModelID] = nil
        }
        deleted.removeAll()
        for m in newModels {
            if let r = newRows[ObjectIdentifier(m)] { read[m.persistentModelID] = ReadState(row: r, values: [], token: 0) }
        }
        reloadAll()
        return t
    }

    /// The context's unsaved work as a transaction over the current store:
    /// new objects (inserted, or reached from a known one), changed
    /// properties, deletes. `forSave` adds the checks a save needs (an object
    /// another save deleted, an id another save inserted).
    private func stagePendingChanges(forSave: Bool) throws -> StagedChanges {
        var tx = store.transaction()
        var newRows: [ObjectIdentifier: RowID] = [:]
        func row(of m: PersistentModel) -> RowID? { read[m.persistentModelID]?.row ?? newRows[ObjectIdentifier(m)] }
        func targets(_ related: ModelProperty.Related) -> [PersistentModel] {
            switch related {
            case .one(let t): return t.map { [$0] } ?? []
            case .many(let ts): return ts
            }
        }
        // New objects: the inserted ones, and new objects that any known one reaches.
        let deletedIDs = Set(deleted.map { ObjectIdentifier($0) })
        var pending = inserted
        for m in identity.values where read[m.persistentModelID] != nil {
            guard let entity = models.entity(of: m) else { continue }
            for p in models.properties[entity.id] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                pending.append(contentsOf: targets(get(m)).filter { read[$0.persistentModelID] == nil })
            }
        }
        var newModels: [PersistentModel] = []
        var seen = Set<ObjectIdentifier>()
        while let m = pending.popLast() {
            guard seen.insert(ObjectIdentifier(m)).inserted, read[m.persistentModelID] == nil else { continue }
            if forSave, let gone = vanished[ObjectIdentifier(m)] { throw StoreError.conflict([gone]) }
            guard let entity = models.entity(of: m) else {
                throw StoreError.usage("\(type(of: m)) is not in the model schema")
            }
            if forSave, store.table.row(for: m.persistentModelID) != nil {
                throw StoreError.conflict([StoreConflict(type: entity.name, id: m.persistentModelID, reason: .inserted,
                                                         token: nil, stagedOn: store.lastToken)])
            }
            newModels.append(m)
            identity[m.persistentModelID] = m
            var values = entity.emptyValues
            for (slot, p) in models.properties[entity.id].enumerated() {
                switch p.kind {
                case .attribute(_, let get, _): values[slot] = get(m)
                case .relationship(_, _, let get, _): pending.append(contentsOf: targets(get(m)))
                }
            }
            newRows[ObjectIdentifier(m)] = tx.insert(StoredObject(entity: entity.id, id: m.persistentModelID, values: values))
        }
        // Relationships of new objects: linked both ways, in the order the program gave.
        for m in newModels {
            guard let entity = models.entity(of: m), let r = newRows[ObjectIdentifier(m)] else { continue }
            for (slot, p) in models.properties[entity.id].enumerated() {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                for t in targets(get(m)) {
                    guard let tr = row(of: t) else { continue }
                    if let state = read[t.persistentModelID] { tx.assumeRead(tr, at: state.token) }
                    tx.link(r, slot: slot, to: tr)
                }
            }
        }
        // Every object the context read, at the token it read it: the store
        // refuses to change any of them (even as the other side of a pair)
        // where another save changed the same property since.
        for state in read.values { tx.assumeRead(state.row, at: state.token) }
        // Known objects: only the properties the program changed since it read them.
        for (id, state) in read.sorted(by: { $0.value.row < $1.value.row }) {
            guard let m = identity[id], !deletedIDs.contains(ObjectIdentifier(m)), let entity = models.entity(of: m) else { continue }
            for (slot, p) in models.properties[entity.id].enumerated() where isChanged(m, slot: slot, p, since: state) {
                tx.assumeRead(state.row, at: state.token)
                switch p.kind {
                case .attribute(_, let get, _):
                    tx.setAttribute(state.row, slot: slot, to: get(m))
                case .relationship(_, _, let get, _):
                    let related = targets(get(m))
                    for t in related { if let s = read[t.persistentModelID] { tx.assumeRead(s.row, at: s.token) } }
                    try tx.setRelationship(state.row, slot: slot, to: related.compactMap { row(of: $0) }, deletingDropped: false)
                }
            }
        }
        for m in deleted {
            guard let state = read[m.persistentModelID] else { continue }
            tx.assumeRead(state.row, at: state.token)
            try tx.delete(state.row)
        }
        return StagedChanges(tx: tx, newRows: newRows, newModels: newModels)
    }

    struct StagedChanges {
        var tx: TransactionBuilder
        var newRows: [ObjectIdentifier: RowID]
        var newModels: [PersistentModel]
    }

    /// Forgets unsaved inserts, deletes and changes: every known object reads as stored.
    public func rollback() {
        container.lock.lock()
        defer { container.lock.unlock() }
        for m in inserted { identity[m.persistentModelID] = nil }
        inserted.removeAll()
        deleted.removeAll()
        reloadAll()
    }

    /// Takes in what other contexts and saves changed since this context read
    /// the object: properties the program has not changed here get the stored
    /// values; pending changes stay, and the next `save` writes them over what
    /// the others saved (the way to settle a conflict). An object deleted by
    /// another save is forgotten, with its pending changes.
    public func refresh(_ model: PersistentModel) {
        container.lock.lock()
        defer { container.lock.unlock() }
        let id = model.persistentModelID
        guard let state = read[id], identity[id] === model else { return }
        guard let o = store.table.object(at: state.row), o.id == id else {
            forget(model)
            return
        }
        // Related objects deleted elsewhere leave the relationships, pending or not.
        if let entity = models.entity(of: model) {
            for p in models.properties[entity.id] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                let related: [PersistentModel]
                switch get(model) {
                case .one(let t): related = t.map { [$0] } ?? []
                case .many(let ts): related = ts
                }
                for t in related where isDeletedInStore(t) { forget(t) }
            }
        }
        fill(model, from: o, keepingChangesSince: state)
        read[id] = ReadState(row: state.row, values: o.values, token: store.lastToken)
    }

    /// `refresh` for every object the context knows.
    public func refreshAll() {
        container.lock.lock()
        defer { container.lock.unlock() }
        for m in Array(identity.values) { refresh(m) }
    }

    private func isDeletedInStore(_ m: PersistentModel) -> Bool {
        guard let state = read[m.persistentModelID], identity[m.persistentModelID] === m else { return false }
        return store.table.recordedID(state.row) != m.persistentModelID || store.table.entity(at: state.row) == nil
    }

    /// Drops an object another save deleted: from the identity map, from
    /// every relationship of the objects this context knows, and from pending deletes.
    private func forget(_ m: PersistentModel) {
        let id = m.persistentModelID
        if let state = read[id] {
            vanished[ObjectIdentifier(m)] = StoreConflict(type: models.entity(of: m)?.name ?? "\(type(of: m))", id: id,
                                                          reason: .deleted, token: nil, stagedOn: state.token)
        }
        identity[id] = nil
        read[id] = nil
        deleted.removeAll { $0 === m }
        for other in identity.values {
            guard let entity = models.entity(of: other) else { continue }
            for p in models.properties[entity.id] {
                guard case .relationship(_, _, let get, let set) = p.kind else { continue }
                switch get(other) {
                case .one(let t) where t === m: set(other, .one(nil))
                case .many(let ts) where ts.contains(where: { $0 === m }): set(other, .many(ts.filter { $0 !== m }))
                default: break
                }
            }
        }
    }

    /// Reads every known object back from the store, dropping pending changes
    /// (after a save, they are what the store holds, with inverses set).
    private func reloadAll() {
        for (id, m) in identity {
            guard let row = read[id]?.row ?? store.table.row(for: id), let o = store.table.object(at: row), o.id == id else {
                identity[id] = nil
                read[id] = nil
                continue
            }
            read[id] = ReadState(row: row, values: o.values, token: store.lastToken)
            fill(m, from: o, keepingChangesSince: nil)
        }
    }

    private func differs(_ m: PersistentModel) -> Bool {
        guard let state = read[m.persistentModelID], let entity = models.entity(of: m) else { return true }
        for (slot, p) in models.properties[entity.id].enumerated() where isChanged(m, slot: slot, p, since: state) {
            return true
        }
        return false
    }

    // MARK: - History

    /// Committed transactions after `token`, optionally only changes of these
    /// types (subclasses included) and kinds.
    public func history(since token: Int64? = nil, types: [PersistentModel.Type]? = nil,
                        kinds: Set<Change.Kind>? = nil) -> [HistoryTransaction] {
        container.lock.lock()
        defer { container.lock.unlock() }
        let names = types.map { ts in ts.reduce(into: Set<String>()) { $0.formUnion(models.schema.deepTypeNames($1.entityName) ?? []) } }
        return HistoryFilter(since: token, types: names, kinds: kinds).apply(to: store.history)
    }
}
