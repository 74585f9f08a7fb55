import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Parses the query language (README.md, docs/cli.md) into a `QueryExpression`.
///
/// ```
/// try QueryParser.parse(#"is BusinessTrip && destination ~ "Rome""#)
/// ```
package struct QueryParser {
    let query: String
    let tokens: [QueryToken]
    var p = 0
    /// Open `(`, `!` and `not`: the parser recurses once for each, so a
    /// hostile query could otherwise run it out of stack.
    var depth = 0
    /// 256 levels are accepted; the 257th opener is the error.
    static let maximumDepth = 256

    mutating func open(_ t: QueryToken) throws(QueryError) {
        depth += 1
        if depth > Self.maximumDepth {
            throw error("nesting deeper than \(Self.maximumDepth) levels of '(', '!' or 'not'", t)
        }
    }

    /// Parses a predicate; an empty one matches everything.
    package static func parse(_ query: String) throws(QueryError) -> QueryExpression {
        var parser = QueryParser(query: query, tokens: try QueryLexer.tokenize(query))
        if parser.tokens[0].kind == .end { return .constant(true) }
        let e = try parser.orExpression()
        let t = parser.tokens[parser.p]
        guard t.kind == .end else {
            throw QueryError("expected '&&', '||' or the end of the query, found \(describe(t))", column: t.column, query: query)
        }
        return e
    }

    static func describe(_ t: QueryToken) -> String {
        if case .end = t.kind { return "the end of the query" }
        return "'\(t.text)'"
    }

    var current: QueryToken { tokens[p] }

    func error(_ message: String, _ t: QueryToken? = nil) -> QueryError {
        QueryError(message, column: (t ?? current).column, query: query)
    }

    mutating func take(op: String) -> Bool {
        if current.kind == .op(op) { p += 1; return true }
        return false
    }

    mutating func take(keyword: String) -> Bool {
        if current.kind == .keyword(keyword) { p += 1; return true }
        return false
    }

    mutating func orExpression() throws(QueryError) -> QueryExpression {
        var parts = [try andExpression()]
        while take(op: "||") || take(keyword: "or") { parts.append(try andExpression()) }
        return parts.count == 1 ? parts[0] : .or(parts)
    }

    mutating func andExpression() throws(QueryError) -> QueryExpression {
        var parts = [try unary()]
        while take(op: "&&") || take(keyword: "and") { parts.append(try unary()) }
        return parts.count == 1 ? parts[0] : .and(parts)
    }

    mutating func unary() throws(QueryError) -> QueryExpression {
        let t = current
        if take(op: "!") || take(keyword: "not") {
            try open(t)
            defer { depth -= 1 }
            return .not(try unary())
        }
        return try primary()
    }

    mutating func primary() throws(QueryError) -> QueryExpression {
        let t = current
        switch t.kind {
        case .op("("):
            p += 1
            try open(t)
            defer { depth -= 1 }
            let e = try orExpression()
            guard take(op: ")") else { throw error("expected ')' to close the '(' at column \(t.column), found \(Self.describe(current))") }
            return e
        case .keyword("is"):
            p += 1
            let exact = take(keyword: "exactly")
            guard case .identifier(let name) = current.kind else {
                throw error("expected a type name after 'is', found \(Self.describe(current))")
            }
            let column = current.column
            p += 1
            return .isType(name: name, exact: exact, column: column)
        case .keyword("any"), .keyword("all"):
            p += 1
            let path = try self.path(after: t.text)
            return .quantified(all: t.kind == .keyword("all"), try comparison(path))
        case .keyword("count"):
            p += 1
            guard take(op: "(") else { throw error("expected '(' after 'count'") }
            let path = try self.path(after: "count(")
            guard take(op: ")") else { throw error("expected ')' after the path in count(…)") }
            let opToken = current
            guard case .op(let o) = opToken.kind, let op = ComparisonOperator(rawValue: o), op != .contains, op != .beginsWith else {
                throw error("expected a comparison (==, !=, <, <=, >, >=) after count(…), found \(Self.describe(opToken))")
            }
            p += 1
            let lit = try literal(after: o)
            guard case .number(_, true) = lit.kind else {
                throw QueryError("count(…) compares with a whole number, found '\(lit.text)'", column: lit.column, query: query)
            }
            return .count(path, op, lit)
        case .keyword("true"): p += 1; return .constant(true)
        case .keyword("false"): p += 1; return .constant(false)
        case .identifier:
            return try comparison(try path(after: nil))
        case .end:
            throw error("expected a condition but the query ended")
        default:
            throw error("expected a condition (a property, 'is', 'any', 'all', 'count', '!' or '('), found \(Self.describe(t))")
        }
    }

    mutating func path(after: String?) throws(QueryError) -> QueryPath {
        guard case .identifier(let first) = current.kind else {
            throw error("expected a property name\(after.map { " after '\($0)'" } ?? ""), found \(Self.describe(current))")
        }
        var path = QueryPath(names: [first], columns: [current.column])
        p += 1
        while take(op: ".") {
            guard case .identifier(let n) = current.kind else {
                throw error("expected a property name after '.', found \(Self.describe(current))")
            }
            path.names.append(n)
            path.columns.append(current.column)
            p += 1
        }
        return path
    }

    mutating func comparison(_ path: QueryPath) throws(QueryError) -> QueryExpression {
        let t = current
        if take(keyword: "in") {
            guard take(op: "[") else { throw error("expected '[' after 'in'") }
            var items: [QueryLiteral] = []
            while !take(op: "]") {
                items.append(try literal(after: items.isEmpty ? "[" : ","))
                if take(op: "]") { break }
                guard take(op: ",") else { throw error("expected ',' or ']' in the list, found \(Self.describe(current))") }
            }
            return .inList(path, items)
        }
        guard case .op(let o) = t.kind, let op = ComparisonOperator(rawValue: o) else {
            throw error("expected an operator (==, !=, <, <=, >, >=, ~, ^= or in) after '\(path)', found \(Self.describe(t))")
        }
        p += 1
        return .comparison(path, op, try literal(after: o))
    }

    mutating func literal(after: String) throws(QueryError) -> QueryLiteral {
        let t = current
        let kind: QueryLiteral.Kind
        switch t.kind {
        case .string(let s): kind = .string(s)
        case .number(let v, let isInteger): kind = .number(v, isInteger: isInteger)
        case .date(let d, _): kind = .date(d)
        case .keyword("true"): kind = .bool(true)
        case .keyword("false"): kind = .bool(false)
        case .keyword("nil"): kind = .null
        default:
            throw error("expected a value after '\(after)'" + (t.kind == .end ? "" : ", found \(Self.describe(t))")
                        + (isIdentifier(t) ? " (put text in quotes: \"\(t.text)\")" : ""))
        }
        p += 1
        return QueryLiteral(kind: kind, column: t.column, text: t.text)
    }

    func isIdentifier(_ t: QueryToken) -> Bool {
        if case .identifier = t.kind { return true }
        return false
    }
}
