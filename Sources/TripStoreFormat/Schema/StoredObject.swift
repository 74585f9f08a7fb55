import TripStoreJSON
import TripStoreSystem
/// An object as the store keeps it: its concrete entity, its id, and its
/// values laid out by the entity's property slots.
public struct StoredObject: Sendable, Equatable {
    /// The concrete entity: an index into `Schema.entities`.
    public var entity: Int
    /// The persistent identifier.
    public var id: String
    /// One value per property slot of the entity (relationships as rows).
    public var values: [Value]

    /// An object from its parts.
    public init(entity: Int, id: String, values: [Value]) {
        self.entity = entity
        self.id = id
        self.values = values
    }
}

/// Anything that can say which object a row holds: the table, or a
/// transaction that sees its own uncommitted changes.
package protocol ObjectLookup {
    func object(at row: RowID) -> StoredObject?
    /// The id of the object at a row (without decoding its values where the lookup can).
    func id(at row: RowID) -> String?
    /// The concrete entity and id at a row, for a reference (without decoding values where the lookup can).
    func reference(at row: RowID) -> (entity: Int, id: String)?
}

extension ObjectLookup {
    package func id(at row: RowID) -> String? { object(at: row)?.id }
    package func reference(at row: RowID) -> (entity: Int, id: String)? { object(at: row).map { ($0.entity, $0.id) } }
}
