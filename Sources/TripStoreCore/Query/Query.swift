import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A sort key: a property name, ascending unless `descending`.
public struct SortKey: Sendable, Equatable {
    /// A property path (`startDate`, `livingAccommodation.name`).
    public var path: String
    /// Largest first.
    public var descending: Bool

    /// A sort key.
    public init(_ path: String, descending: Bool = false) {
        self.path = path
        self.descending = descending
    }

    /// Reads `startDate,-name` (a leading `-` sorts descending).
    public static func parseList(_ text: String) -> [SortKey] {
        text.split(separator: ",", omittingEmptySubsequences: false).map { part in
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
    /// The type queried, subclasses included (nil: the schema's first root).
    public var from: String?
    package var predicate: QueryExpression
    /// The predicate as written, for messages and explain.
    public var text: String
    /// Sort keys; ties are broken by id.
    public var sort: [SortKey]
    /// At most this many results.
    public var limit: Int?
    /// Results skipped before the first returned.
    public var offset: Int
    /// False makes the planner scan and sort without indexes (the benchmark's baseline).
    public var useIndexes = true

    /// A query from its text.
    ///
    /// - Throws: `QueryError` (with the column) for text that is not the query language.
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
    /// The matching objects' rows, in result order (`Store.object(at:)` reads one).
    public var rows: [RowID]
    /// Matches before offset and limit; nil when a sorted walk stopped early.
    public var total: Int?
    /// How the query was answered.
    public var plan: QueryPlan
}

/// How a query was answered; `--explain` prints it and tests assert on it.
public struct QueryPlan: Sendable, CustomStringConvertible {
    /// One step: an index probe, an intersection, a scan, a sort.
    public struct Step: Sendable, Equatable {
        /// What the step does ("type index", "hash index", "scan").
        public var operation: String
        /// On what (the index, the term).
        public var detail: String
        /// Rows expected before running.
        public var estimated: Int?
        /// Rows it produced.
        public var actual: Int?
    }

    /// The steps, in order.
    public var steps: [Step] = []

    /// The operations in order, e.g. ["text index", "filter", "sort"].
    public var operations: [String] { steps.map(\.operation) }

    /// The plan as `--explain` prints it.
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

extension Query {
    /// Every object of the type, in the same order, unpaged: for a predicate
    /// the engine cannot evaluate, whose caller tests each object itself.
    package func scanningEveryObject() -> Query {
        var q = self
        q.predicate = .constant(true)
        q.text = ""
        q.limit = nil
        q.offset = 0
        return q
    }
}

extension Query {
    /// A property or type name as a predicate writes it: as it is, or quoted
    /// with backticks where it is a keyword or not a plain word.
    ///
    /// ```swift
    /// Query.quoted("count")        // `count`
    /// Query.quoted("destination")  // destination
    /// ```
    public static func quoted(_ name: String) -> String { QueryLexer.quoted(name) }
}
