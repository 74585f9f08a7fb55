import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// Runs a query: the indexes pick the candidates, the predicate checks them.
    ///
    /// ```swift
    /// let result = try store.run(try Query("is PersonalTrip && reason == \"family\""))
    /// for row in result.rows { print(store.id(at: row) ?? "") }
    /// ```
    /// - Throws: `QueryError` (with the column) for an unknown type or
    ///   property, a comparison the property's type cannot make, or an enum value
    ///   that is no case.
    public func run(_ query: Query, countOnly: Bool = false) throws(QueryError) -> QueryResult {
        let from = try root(of: query)
        let compiler = QueryCompiler(schema: schema, indexes: query.useIndexes ? indexes : nil, query: query.text, scope: from.closure)
        let predicate = try compiler.compile(query.predicate)
        let sort = try compiler.sortKeys(query.sort, from: from.closure).map { ($0.access, $0.descending) }
        var planner = QueryPlanner(store: self, scope: from.closure, predicate: predicate, schema: schema)
        planner.useTypeIndex = query.useIndexes
        return planner.run(sort: sort, limit: query.limit, offset: query.offset, countOnly: countOnly)
    }

    /// Runs a query as if `tx` were committed: the rows it inserts or
    /// changes are tested on their pending values, rows it deletes are left
    /// out, and the whole result is sorted, then paged. This is what a
    /// `ModelContext` fetch sees (SwiftData's `includePendingChanges`).
    ///
    /// - Throws: `QueryError`, as `run(_:)`.
    package func run(_ query: Query, including tx: TransactionBuilder) throws(QueryError) -> [RowID] {
        guard tx.table === table else { return try run(query).rows }
        var unpaged = query
        unpaged.limit = nil
        unpaged.offset = 0
        let stored = try run(unpaged).rows
        let pending = Set(tx.changedOrder).union((0..<tx.newObjects.count).map { RowID(tx.base + $0) })

        let fromName = query.from ?? schema.roots[0].name
        guard let from = schema.entity(named: fromName) else { return [] }
        let compiler = QueryCompiler(schema: schema, indexes: nil, query: query.text, scope: from.closure)
        let predicate = try compiler.compile(query.predicate)
        var inScope = [Bool](repeating: false, count: schema.entities.count)
        for e in from.closure { inScope[e] = true }
        var rows: [RowID]
        if !tx.isEmpty && Self.readsRelatedObjects(query.predicate) {
            // A pending change to a related object can change whether an
            // unchanged one matches (`trip.name` of an item): test them all.
            rows = table.liveRows.filter { r in
                guard !pending.contains(r), !tx.deleted.contains(r), let e = table.entity(at: r), inScope[e] else { return false }
                return predicate.matches(r, tx)
            }
        } else {
            rows = stored.filter { !pending.contains($0) && !tx.deleted.contains($0) }
        }
        for r in pending.sorted() {
            guard let e = tx.entity(at: r), inScope[e], predicate.matches(r, tx) else { continue }
            rows.append(r)
        }
        var keys: [(PropertyAccess, Bool)] = []
        for key in query.sort {
            let names = key.path.split(separator: ".").map(String.init)
            let path = QueryPath(names: names, columns: Array(repeating: 1, count: names.count))
            keys.append((try compiler.resolve(path, from: from.closure).0, key.descending))
        }
        let ids = rows.map { tx.object(at: $0)?.id ?? "" }
        // The order `run` gives: nil first ascending and last descending, ties by id.
        let order = QueryPlanner.order(rows, by: keys, in: tx) { ObjectTable.byteLess(ids[$0], ids[$1]) }
        let start = min(order.count, query.offset)
        let end = query.limit.map { min(order.count, start + $0) } ?? order.count
        return order[start..<end].map { rows[$0] }
    }

    /// Whether a predicate reads through a relationship (a path of more than
    /// one part, `any` / `all`, `count`).
    static func readsRelatedObjects(_ e: QueryExpression) -> Bool {
        switch e {
        case .isType, .constant: return false
        case .comparison(let p, _, _), .inList(let p, _): return p.names.count > 1
        case .quantified, .count: return true
        case .and(let es), .or(let es): return es.contains(where: readsRelatedObjects)
        case .not(let x): return readsRelatedObjects(x)
        }
    }
}

extension Store {
    /// The type a query is over: `--from`, else the schema's first root.
    func root(of query: Query) throws(QueryError) -> Entity {
        let fromName = query.from ?? schema.roots[0].name
        guard let from = schema.entity(named: fromName) else {
            // Point at the type's name, not into the predicate, which is not where the mistake is.
            throw QueryError("unknown type '\(fromName)' to query from" + NameSuggestion.hint(for: fromName, in: schema.entities.map(\.name)),
                             column: 1, query: fromName)
        }
        return from
    }
}

extension QueryCompiler {
    /// Sort keys resolved against the `--from` closure: attributes only, not
    /// arrays or embedded values; errors name the key and point into it.
    func sortKeys(_ keys: [SortKey], from scope: [Int]) throws(QueryError) -> [(access: PropertyAccess, descending: Bool, type: ValueType)] {
        var out: [(access: PropertyAccess, descending: Bool, type: ValueType)] = []
        for key in keys {
            let names = key.path.split(separator: ".").map(String.init)
            let path = QueryPath(names: names, columns: Array(repeating: 1, count: names.count))
            let access: PropertyAccess, leaf: Leaf
            do {
                (access, leaf) = try resolve(path, from: scope)
            } catch {
                // Name the sort key, and point into it rather than into the predicate.
                throw QueryError("sort key '\(key.path)': \(error.message)", column: 1, query: key.path)
            }
            guard case .attribute(let t) = leaf else {
                throw QueryError("cannot sort by '\(key.path)': it is a relationship", column: 1, query: key.path)
            }
            switch t {
            case .array, .embedded: throw QueryError("cannot sort by '\(key.path)': it is a \(t.displayName)", column: 1, query: key.path)
            default: out.append((access, key.descending, t))
            }
        }
        return out
    }
}
