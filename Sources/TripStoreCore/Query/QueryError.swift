import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A query that cannot be read or does not fit the schema, with the column
/// (1-based, in characters) of the first character that could not be used.
public struct QueryError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What could not be read.
    public var message: String
    /// The 1-based column where it stands.
    public var column: Int
    /// The query text.
    public var query: String

    /// An error at a column of a query.
    public init(_ message: String, column: Int, query: String) {
        self.message = message
        self.column = column
        self.query = query
    }

    /// "expected a value after '~' at column 32".
    public var description: String { "\(message) at column \(column)" }

    /// The query and a caret under the column, for people; empty when the
    /// text is empty (a caret under nothing points at nothing).
    public var caretDisplay: String {
        guard !query.isEmpty else { return "" }
        return "  " + query + "\n  " + String(repeating: " ", count: max(0, column - 1)) + "^"
    }
}
