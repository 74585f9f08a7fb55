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
        var rows = stored.filter { !pending.contains($0) && !tx.deleted.contains($0) }

        let fromName = query.from ?? schema.roots[0].name
        guard let from = schema.entity(named: fromName) else { return [] }
        let compiler = QueryCompiler(schema: schema, indexes: nil, query: query.text, scope: from.closure)
        let predicate = try compiler.compile(query.predicate)
        var inScope = [Bool](repeating: false, count: schema.entities.count)
        for e in from.closure { inScope[e] = true }
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
        let values: [[IndexKey?]] = rows.map { r in
            keys.map { k in
                if case .value(let v) = k.0.resolve(r, tx) { return IndexKey(v) }
                return nil
            }
        }
        // The order `run` gives: nil first ascending and last descending, ties by id.
        var order = Array(rows.indices)
        order.sort { a, b in
            for (i, k) in keys.enumerated() {
                let x = values[a][i], y = values[b][i]
                if x == y { continue }
                let less: Bool
                switch (x, y) {
                case (nil, _): less = true
                case (_, nil): less = false
                case (let x?, let y?): less = x < y
                }
                return k.1 ? !less : less
            }
            return ObjectTable.byteLess(ids[a], ids[b])
        }
        let start = min(order.count, query.offset)
        let end = query.limit.map { min(order.count, start + $0) } ?? order.count
        return order[start..<end].map { rows[$0] }
    }
}
