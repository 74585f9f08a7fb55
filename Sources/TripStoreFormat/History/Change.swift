import TripStoreJSON
import TripStoreSystem
/// One changed attribute or relationship of an update, with both values.
/// Relationship values are references `{"type", "id"}` or arrays of them.
public struct ValueChange: Sendable, Equatable {
    public var name: String
    public var old: JSONValue
    public var new: JSONValue

    public init(name: String, old: JSONValue, new: JSONValue) {
        self.name = name
        self.old = old
        self.new = new
    }
}

/// One change of a transaction: an insert, an update or a delete.
public struct Change: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case insert, update, delete
    }

    public var kind: Kind
    /// The concrete type of the object.
    public var type: String
    public var id: String
    /// For an update: each changed attribute or relationship.
    public var values: [ValueChange]
    /// For a delete: the values of the attributes marked preserve-on-deletion.
    public var tombstone: [JSONMember]

    public init(kind: Kind, type: String, id: String, values: [ValueChange] = [], tombstone: [JSONMember] = []) {
        self.kind = kind
        self.type = type
        self.id = id
        self.values = values
        self.tombstone = tombstone
    }

    /// A tombstone value by attribute name.
    public func preservedValue(_ name: String) -> JSONValue? {
        tombstone.first { $0.key == name }?.value
    }
}

/// A committed transaction as history keeps it.
public struct HistoryTransaction: Sendable, Equatable {
    /// Increases by one with every commit, across restarts and compactions.
    public var token: Int64
    /// Commit time, seconds since 1970 UTC.
    public var timestamp: Double
    public var author: String
    public var changes: [Change]

    public init(token: Int64, timestamp: Double, author: String, changes: [Change]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}
