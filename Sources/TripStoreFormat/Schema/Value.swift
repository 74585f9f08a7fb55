import TripStoreJSON
import TripStoreSystem
/// A row in the object table; stable while a store is open, never written to disk.
public typealias RowID = Int32

/// An attribute or relationship value as the store keeps it in memory.
public enum Value: Sendable, Hashable {
    /// No value (nil).
    case null
    /// Text.
    case string(String)
    /// A whole number.
    case int(Int64)
    /// A finite floating-point number.
    case double(Double)
    /// A Boolean.
    case bool(Bool)
    /// Seconds since 2001-01-01T00:00:00Z (a `Date`'s `timeIntervalSinceReferenceDate`).
    case date(Double)
    case array([Value])
    /// An embedded value type's fields, in declaration order.
    case embedded([Value])
    /// A to-one relationship: the related object's row.
    case toOne(RowID)
    /// A to-many relationship: the related objects' rows, in order.
    case toMany([RowID])

    /// True for `.null` (nil).
    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }

    /// The related rows of a relationship value (empty for nil).
    public var rows: [RowID] {
        switch self {
        case .toOne(let r): return [r]
        case .toMany(let rs): return rs
        default: return []
        }
    }
}

/// Where a record came from, for error messages: "record 500" or "line 500".
public enum RecordLocation: Sendable, Equatable, CustomStringConvertible {
    /// 1-based position in a JSON array.
    case record(Int)
    /// 1-based line of a JSON Lines file.
    case line(Int)

    /// "record 500" or "line 500".
    public var description: String {
        switch self {
        case .record(let n): return "record \(n)"
        case .line(let n): return "line \(n)"
        }
    }
}
