import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A parsed query, before its names are checked against a schema.
public indirect enum QueryExpression: Sendable, Equatable {
    /// `is T` (deep) or `is exactly T` (shallow).
    case isType(name: String, exact: Bool, column: Int)
    /// `path op literal`.
    case comparison(QueryPath, ComparisonOperator, QueryLiteral)
    /// `path in [literals]`.
    case inList(QueryPath, [QueryLiteral])
    /// `any path op literal` / `all path op literal`; the path's first part is the collection.
    case quantified(all: Bool, QueryExpression)
    /// `count(path) op number`.
    case count(QueryPath, ComparisonOperator, QueryLiteral)
    case and([QueryExpression])
    case or([QueryExpression])
    case not(QueryExpression)
    case constant(Bool)
}

/// A dotted property path (`livingAccommodation.name`), with each part's column.
public struct QueryPath: Sendable, Equatable, CustomStringConvertible {
    public var names: [String]
    public var columns: [Int]

    package init(names: [String], columns: [Int]) {
        self.names = names
        self.columns = columns
    }

    public var description: String { names.joined(separator: ".") }
}

public enum ComparisonOperator: String, Sendable, Equatable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case contains = "~", beginsWith = "^="
}

/// A literal as written; it gets its type from the property it is compared with.
public struct QueryLiteral: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case string(String)
        case number(Double, isInteger: Bool)
        case bool(Bool)
        case date(Double)
        case null
    }

    public var kind: Kind
    public var column: Int
    public var text: String

    package init(kind: Kind, column: Int, text: String) {
        self.kind = kind
        self.column = column
        self.text = text
    }
}
