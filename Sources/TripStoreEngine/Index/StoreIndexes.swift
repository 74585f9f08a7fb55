/// The in-memory indexes of a store (filled in by the query engine).
public final class StoreIndexes {
    public let schema: Schema

    init(schema: Schema) {
        self.schema = schema
    }

    public var descriptions: [String] { [] }
    func rebuild(from table: ObjectTable) {}
    func add(_ row: RowID, _ o: StoredObject) {}
    func remove(_ row: RowID, _ o: StoredObject) {}
    func checkInvariants(_ table: ObjectTable) -> [String] { [] }
}
