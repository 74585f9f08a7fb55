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
public final class ModelContext {
    public let container: ModelContainer
    var store: Store { container.store }
    var models: ModelSchema { container.models }
    /// One instance per id.
    private var identity: [String: PersistentModel] = [:]
    private var inserted: [PersistentModel] = []
    private var deleted: [PersistentModel] = []

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

    /// True when there are inserts, deletes or changed properties not yet saved.
    public var hasChanges: Bool {
        if !inserted.isEmpty || !deleted.isEmpty { return true }
        return identity.values.contains { (try? differs($0)) ?? false }
    }

    // MARK: - Fetch

    /// Objects of `T` and its subclasses, each as its concrete class.
    public func fetch<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> [T] {
        let (rows, plan) = try run(descriptor, countOnly: false)
        var out: [T] = []
        for row in rows {
            guard let m = materialize(row) as? T else { continue }
            out.append(m)
        }
        guard plan.evaluatedCandidates, let predicate = descriptor.predicate else { return out }
        out = try out.filter { try predicate.evaluate($0) }
        let start = min(out.count, descriptor.fetchOffset ?? 0)
        let end = descriptor.fetchLimit.map { min(out.count, start + $0) } ?? out.count
        return Array(out[start..<end])
    }

    /// How many objects match (the limit and offset apply).
    public func fetchCount<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> Int {
        if descriptor.predicate != nil || descriptor.fetchLimit != nil || descriptor.fetchOffset != nil {
            let (rows, plan) = try run(descriptor, countOnly: false)
            if !plan.evaluatedCandidates { return rows.count }
            return try fetch(descriptor).count
        }
        let (_, plan) = try run(descriptor, countOnly: true)
        return plan.plan.steps.last?.actual ?? 0
    }

    /// The plan a fetch would use.
    public func explain<T: PersistentModel>(_ descriptor: FetchDescriptor<T>) throws -> FetchPlan {
        try run(descriptor, countOnly: false).1
    }

    func run<T: PersistentModel>(_ d: FetchDescriptor<T>, countOnly: Bool) throws -> ([RowID], FetchPlan) {
        var expression: QueryExpression = .constant(true)
        var text = d.query ?? ""
        var exact = true
        if let predicate = d.predicate {
            let t = PredicateTranslator(models: models).translate(predicate.expression)
            (expression, text, exact) = (t.expression, t.text, t.exact)
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
        var query = Query(expression: expression, text: text, from: T.entityName, sort: sort,
                          limit: exact ? d.fetchLimit : nil, offset: exact ? (d.fetchOffset ?? 0) : 0)
        var result: QueryResult
        switch attempt(query, countOnly: countOnly && exact) {
        case .success(let r):
            result = r
        case .failure(let error):
            guard d.predicate != nil else { throw error }
            // A translation the engine cannot use: scan the type and test each object.
            query.predicate = .constant(true)
            query.text = ""
            (exact, text) = (false, "")
            result = try store.run(query)
        }
        return (result.rows, FetchPlan(query: text, plan: result.plan, evaluatedCandidates: !exact))
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
        fill(m, from: o)
        return m
    }

    /// Sets an instance's properties from the stored object, materialising related objects.
    func fill(_ m: PersistentModel, from o: StoredObject) {
        for (slot, p) in models.properties[o.entity].enumerated() {
            switch p.kind {
            case .attribute(_, _, let set):
                _ = set(m, o.values[slot])
            case .relationship(let r, _, _, let set):
                let targets = o.values[slot].rows.compactMap { materialize($0) }
                set(m, r.isToMany ? .many(targets) : .one(targets.first))
            }
        }
    }

    // MARK: - Save

    /// Writes every insert, change and delete as one transaction; nothing if nothing changed.
    @discardableResult
    public func save(author: String = ProcessInfo.processInfo.environment["USER"] ?? "unknown") throws -> HistoryTransaction? {
        var tx = store.transaction()
        var rows: [ObjectIdentifier: RowID] = [:]
        // New objects: the inserted ones and new objects that any known object reaches.
        var pending = inserted
        for m in identity.values where store.table.row(for: m.persistentModelID) != nil {
            guard let entity = models.entity(of: m) else { continue }
            for p in models.properties[entity.id] {
                guard case .relationship(_, _, let get, _) = p.kind else { continue }
                switch get(m) {
                case .one(let t): if let t, store.table.row(for: t.persistentModelID) == nil { pending.append(t) }
                case .many(let ts): pending.append(contentsOf: ts.filter { store.table.row(for: $0.persistentModelID) == nil })
                }
            }
        }
        var newModels: [PersistentModel] = []
        var seen = Set<ObjectIdentifier>()
        while let m = pending.popLast() {
            guard seen.insert(ObjectIdentifier(m)).inserted else { continue }
            if let known = store.table.row(for: m.persistentModelID) {
                rows[ObjectIdentifier(m)] = known
                continue
            }
            guard let entity = models.entity(of: m) else {
                throw StoreError.usage("\(type(of: m)) is not in the model schema")
            }
            newModels.append(m)
            identity[m.persistentModelID] = m
            var values = entity.emptyValues
            for (slot, p) in models.properties[entity.id].enumerated() {
                switch p.kind {
                case .attribute(_, let get, _): values[slot] = get(m)
                case .relationship(_, _, let get, _):
                    switch get(m) {
                    case .one(let t): if let t { pending.append(t) }
                    case .many(let ts): pending.append(contentsOf: ts)
                    }
                }
            }
            rows[ObjectIdentifier(m)] = tx.insert(StoredObject(entity: entity.id, id: m.persistentModelID, values: values))
        }
        for m in identity.values where rows[ObjectIdentifier(m)] == nil {
            if let r = store.table.row(for: m.persistentModelID) { rows[ObjectIdentifier(m)] = r }
        }
        // Changed attributes and relationships (only the sides the program changed).
        for m in Array(identity.values) {
            guard let row = rows[ObjectIdentifier(m)], let entity = models.entity(of: m) else { continue }
            let before = store.table.object(at: row)
            for (slot, p) in models.properties[entity.id].enumerated() {
                switch p.kind {
                case .attribute(_, let get, _):
                    let v = get(m)
                    if before == nil || before!.values[slot] != v { tx.setAttribute(row, slot: slot, to: v) }
                case .relationship(_, _, let get, _):
                    var targets: [RowID] = []
                    switch get(m) {
                    case .one(let t): if let t, let r = rows[ObjectIdentifier(t)] { targets = [r] }
                    case .many(let ts): targets = ts.compactMap { rows[ObjectIdentifier($0)] }
                    }
                    let current = before?.values[slot].rows ?? []
                    if before == nil {
                        for t in targets { tx.link(row, slot: slot, to: t) }
                    } else if current != targets {
                        try tx.setRelationship(row, slot: slot, to: targets)
                    }
                }
            }
        }
        for m in deleted {
            if let row = store.table.row(for: m.persistentModelID) { try tx.delete(row) }
        }
        let t = try store.commit(tx, author: author)
        inserted.removeAll()
        for m in deleted { identity[m.persistentModelID] = nil }
        deleted.removeAll()
        refreshAll()
        return t
    }

    /// Forgets unsaved inserts and deletes and puts every known object back as stored.
    public func rollback() {
        for m in inserted { identity[m.persistentModelID] = nil }
        inserted.removeAll()
        deleted.removeAll()
        refreshAll()
    }

    /// Reads every known object back from the store (inverses set by the store show up).
    private func refreshAll() {
        for (id, m) in identity {
            guard let row = store.table.row(for: id), let o = store.table.object(at: row) else {
                identity[id] = nil
                continue
            }
            fill(m, from: o)
        }
    }

    private func differs(_ m: PersistentModel) throws -> Bool {
        guard let row = store.table.row(for: m.persistentModelID), let o = store.table.object(at: row) else { return true }
        for (slot, p) in models.properties[o.entity].enumerated() {
            if case .attribute(_, let get, _) = p.kind, get(m) != o.values[slot] { return true }
        }
        return false
    }

    // MARK: - History

    /// Committed transactions after `token`, optionally only changes of these
    /// types (subclasses included) and kinds.
    public func history(since token: Int64? = nil, types: [PersistentModel.Type]? = nil,
                        kinds: Set<Change.Kind>? = nil) -> [HistoryTransaction] {
        let names = types.map { ts in ts.reduce(into: Set<String>()) { $0.formUnion(models.schema.deepTypeNames($1.entityName) ?? []) } }
        return HistoryFilter(since: token, types: names, kinds: kinds).apply(to: store.history)
    }
}
