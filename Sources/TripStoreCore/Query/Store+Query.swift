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
