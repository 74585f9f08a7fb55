import TripStoreEngine

/// Rows of a type that match a predicate, for commands that select objects.
enum QuerySupport {
    static func matchingRows(_ store: Store, from typeName: String, predicate: String) throws -> [RowID] {
        do {
            return try store.run(try Query(predicate, from: typeName)).rows
        } catch {
            throw CLIError(error.description + "\n" + error.caretDisplay)
        }
    }
}
