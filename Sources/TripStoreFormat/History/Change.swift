import TripStoreJSON
import TripStoreSystem
/// One changed attribute or relationship of an update, with both values.
/// Relationship values are references `{"type", "id"}` or arrays of them.
public struct ValueChange: Sendable, Equatable {
    /// The attribute or relationship.
    public var name: String
    /// Its value before the transaction (JSON, as exported).
    public var old: JSONValue
    /// Its value after the transaction.
    public var new: JSONValue

    /// A change of `name` from `old` to `new`.
    public init(name: String, old: JSONValue, new: JSONValue) {
        self.name = name
        self.old = old
        self.new = new
    }
}

/// One change of a transaction: an insert, an update or a delete.
public struct Change: Sendable, Equatable {
    /// What happened to the object.
    public enum Kind: String, Sendable, CaseIterable {
        /// Inserted, updated (with old and new values), or deleted (with a
        /// tombstone); `redact`: the object's values were removed from history;
        /// `migrate`: the store moved to another schema (no type or id; see `migration`).
        case insert, update, delete, redact, migrate
    }

    /// Insert, update or delete.
    public var kind: Kind
    /// The concrete type of the object.
    public var type: String
    /// The object's id.
    public var id: String
    /// For an update: each changed attribute or relationship.
    public var values: [ValueChange]
    /// For a delete: the values of the attributes marked preserve-on-deletion.
    public var tombstone: [JSONMember]
    /// For a delete, as stored history keeps it: every attribute and
    /// relationship of the object just before it went (its envelope's `data`),
    /// for time travel and the change feed. nil in history written before
    /// these were kept; after `history redact`, only the preserved values.
    /// The audit views (`history`, `jsonl`) do not print it.
    public var deletedValues: [JSONMember]?
    /// Set on a change whose values `history redact` removed (all but the
    /// preserved ones and references): it can no longer be replayed.
    public var redacted = false
    /// For a `migrate` change: the schemas and the plan.
    public var migration: MigrationRecord? {
        get { migrationBox?.record }
        set { migrationBox = newValue.map(MigrationBox.init) }
    }
    /// Boxed: history holds a change per object of a bulk import, and the
    /// record inline would double the size of every one of them.
    private var migrationBox: MigrationBox?

    /// A change of one object.
    public init(kind: Kind, type: String, id: String, values: [ValueChange] = [], tombstone: [JSONMember] = [],
                deletedValues: [JSONMember]? = nil) {
        self.kind = kind
        self.type = type
        self.id = id
        self.values = values
        self.tombstone = tombstone
        self.deletedValues = deletedValues
    }

    /// A tombstone value by attribute name.
    public func preservedValue(_ name: String) -> JSONValue? {
        tombstone.first { $0.key == name }?.value
    }
}

/// What a `migrate` change records (docs/cli.md, migrate): the fingerprints and plan
/// the audit views print, the new schema the change feed carries, and, in
/// stored history, the old schema and the old values the migration did not
/// carry over, so that time travel can go back across it.
public struct MigrationRecord: Sendable, Equatable {
    /// The fingerprint of the schema before.
    public var from: String
    /// The fingerprint of the schema after.
    public var to: String
    /// The plan, one line per change.
    public var steps: [String]
    /// The schema after, as a schema file's object (`{"fingerprint", "version", "entities"}`).
    public var schema: JSONValue
    /// The schema before, in the same form (nil where only a feed line was read).
    public var previous: JSONValue?
    /// Per object id (in id order), values under the schema before that the
    /// schema after does not hold: removed attributes and relationships, a
    /// nil that became a default, an integer a `Double` cannot hold exactly.
    public var oldValues: [JSONMember]

    /// A migration's record.
    public init(from: String, to: String, steps: [String], schema: JSONValue, previous: JSONValue?, oldValues: [JSONMember]) {
        self.from = from
        self.to = to
        self.steps = steps
        self.schema = schema
        self.previous = previous
        self.oldValues = oldValues
    }
}

/// A committed transaction as history keeps it.
public struct HistoryTransaction: Sendable, Equatable {
    /// Increases by one with every commit, across restarts and compactions.
    public var token: Int64
    /// Commit time, seconds since 2001-01-01T00:00:00Z (as `Date.timeIntervalSinceReferenceDate`).
    public var timestamp: Double
    /// Who committed it (`--author`, `$USER`, or a context's save author).
    public var author: String
    /// Inserts, then updates, then deletes.
    public var changes: [Change]

    /// A transaction as history keeps it.
    public init(token: Int64, timestamp: Double, author: String, changes: [Change]) {
        self.token = token
        self.timestamp = timestamp
        self.author = author
        self.changes = changes
    }
}

/// A migration record behind a reference (see `Change.migration`).
final class MigrationBox: Sendable, Equatable {
    let record: MigrationRecord
    init(_ record: MigrationRecord) { self.record = record }
    static func == (a: MigrationBox, b: MigrationBox) -> Bool { a.record == b.record }
}
