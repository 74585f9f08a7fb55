import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

extension Store {
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
