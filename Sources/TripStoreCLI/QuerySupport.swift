import TripStoreEngine

/// Until the query engine lands: a type filter only.
enum QuerySupport {
    static func matchingRows(_ store: Store, from typeName: String, predicate: String) throws -> [RowID] {
        guard let e = store.schema.entity(named: typeName) else {
            throw CLIError("unknown type '\(typeName)'" + NameSuggestion.hint(for: typeName, in: store.schema.entities.map(\.name)))
        }
        let closure = Set(e.closure)
        return store.table.liveRows.filter { closure.contains(store.table.object(at: $0)!.entity) }
    }
}
