import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A parsed query, before its names are checked against a schema.
package indirect enum QueryExpression: Sendable, Equatable {
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
package struct QueryPath: Sendable, Equatable, CustomStringConvertible {
    package var names: [String]
    package var columns: [Int]

    package init(names: [String], columns: [Int]) {
        self.names = names
        self.columns = columns
    }

    package var description: String { names.map(QueryLexer.quoted).joined(separator: ".") }
}

package enum ComparisonOperator: String, Sendable, Equatable {
    case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    case contains = "~", beginsWith = "^="
}

/// A literal as written; it gets its type from the property it is compared with.
package struct QueryLiteral: Sendable, Equatable {
    package enum Kind: Sendable, Equatable {
        case string(String)
        case number(Double, isInteger: Bool)
        case bool(Bool)
        case date(Double)
        case null
    }

    package var kind: Kind
    package var column: Int
    package var text: String

    package init(kind: Kind, column: Int, text: String) {
        self.kind = kind
        self.column = column
        self.text = text
    }
}
