import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A sort key: a property name, ascending unless `descending`.
public struct SortKey: Sendable, Equatable {
    public var path: String
    public var descending: Bool

    public init(_ path: String, descending: Bool = false) {
        self.path = path
        self.descending = descending
    }

    /// Reads `startDate,-name` (a leading `-` sorts descending).
    public static func parseList(_ text: String) -> [SortKey] {
        text.split(separator: ",").map { part in
            let s = String(part).trimmed(" ")
            return s.hasPrefix("-") ? SortKey(String(s.dropFirst()), descending: true) : SortKey(s.hasPrefix("+") ? String(s.dropFirst()) : s)
        }
    }
}

/// A fetch: a root type (subclasses included), a predicate, sorting, paging.
///
/// ```swift
/// let q = try Query(#"is BusinessTrip && destination ~ "Rome""#, from: "Trip", sort: [SortKey("startDate")], limit: 10)
/// let result = try store.run(q)
/// ```
public struct Query: Sendable {
    public var from: String?
    package var predicate: QueryExpression
    /// The predicate as written, for messages and explain.
    public var text: String
    public var sort: [SortKey]
    public var limit: Int?
    public var offset: Int
    /// False makes the planner scan and sort without indexes (the benchmark's baseline).
    public var useIndexes = true

    public init(_ predicate: String = "", from: String? = nil, sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0) throws(QueryError) {
        self.predicate = try QueryParser.parse(predicate)
        self.text = predicate
        self.from = from
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }

    /// A query from an already-built expression (for translated Foundation predicates).
    package init(expression: QueryExpression, text: String, from: String? = nil, sort: [SortKey] = [], limit: Int? = nil, offset: Int = 0) {
        self.predicate = expression
        self.text = text
        self.from = from
        self.sort = sort
        self.limit = limit
        self.offset = offset
    }
}

/// What a query found: rows in order, how many matched in all (when known), and the plan.
public struct QueryResult: Sendable {
    public var rows: [RowID]
    /// Matches before offset and limit; nil when a sorted walk stopped early.
    public var total: Int?
    public var plan: QueryPlan
}

/// How a query was answered; `--explain` prints it and tests assert on it.
public struct QueryPlan: Sendable, CustomStringConvertible {
    public struct Step: Sendable, Equatable {
        public var operation: String
        public var detail: String
        public var estimated: Int?
        public var actual: Int?
    }

    public var steps: [Step] = []

    /// The operations in order, e.g. ["text index", "filter", "sort"].
    public var operations: [String] { steps.map(\.operation) }

    public var description: String {
        let width = steps.map(\.operation.count).max() ?? 0
        return steps.map { s in
            var line = s.operation.padding(width) + "  " + s.detail
            var counts: [String] = []
            if let e = s.estimated { counts.append("estimated \(e)") }
            if let a = s.actual { counts.append("actual \(a)") }
            if !counts.isEmpty { line += "  (" + counts.joined(separator: ", ") + ")" }
            return line
        }.joined(separator: "\n")
    }
}

extension String {
    /// The string padded with spaces to `width` characters (for aligned columns).
    package func padding(_ width: Int) -> String {
        count >= width ? self : self + String(repeating: " ", count: width - count)
    }
}
