import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A token of the query language with the column where it starts.
struct QueryToken: Equatable {
    enum Kind: Equatable {
        case identifier(String)
        case keyword(String)
        case string(String)
        case number(Double, isInteger: Bool)
        case date(Double, text: String)
        case op(String)
        case end
    }

    var kind: Kind
    var column: Int
    /// How the token was written, for messages.
    var text: String
}

/// Splits a query into tokens.
struct QueryLexer {
    static let keywords: Set<String> = ["is", "exactly", "and", "or", "not", "in", "any", "all", "count", "nil", "true", "false"]

    /// A property or type name as a query writes it: as it is, or quoted
    /// with backticks where it is a keyword or not a plain word
    /// (`` `count` ``, `` `first name` ``).
    static func quoted(_ name: String) -> String {
        isPlainName(name) ? name : "`" + name + "`"
    }

    /// Whether a name reads as a name without quotes (a plan labels every
    /// query with it: no allocation for the usual ASCII name).
    static func isPlainName(_ name: String) -> Bool {
        var first = true
        for s in name.unicodeScalars {
            let v = s.value
            let letter = (v | 0x20) &- 0x61 < 26 || v == 0x5F || (v >= 0x80 && s.properties.isAlphabetic)
            guard letter || (!first && v &- 0x30 < 10) else { return false }
            first = false
        }
        return !first && !keywords.contains(name)
    }
    static let operators = ["==", "!=", "<=", ">=", "&&", "||", "^=", "<", ">", "~", "!", "(", ")", "[", "]", ",", "."]

    let query: String
    let scalars: [Unicode.Scalar]
    var i = 0

    init(_ query: String) {
        self.query = query
        self.scalars = Array(query.unicodeScalars)
    }

    func error(_ message: String, at index: Int) -> QueryError {
        QueryError(message, column: index + 1, query: query)
    }

    static func tokenize(_ query: String) throws(QueryError) -> [QueryToken] {
        var lexer = QueryLexer(query)
        var out: [QueryToken] = []
        while true {
            let t = try lexer.next()
            out.append(t)
            if t.kind == .end { return out }
        }
    }

    func peek(_ k: Int = 0) -> Unicode.Scalar? { i + k < scalars.count ? scalars[i + k] : nil }

    func isDigit(_ s: Unicode.Scalar?) -> Bool { s.map { ("0"..."9").contains($0) } ?? false }

    mutating func next() throws(QueryError) -> QueryToken {
        while let c = peek(), c == " " || c == "\t" || c == "\n" || c == "\r" { i += 1 }
        let start = i
        guard let c = peek() else { return QueryToken(kind: .end, column: i + 1, text: "the end of the query") }
        func text() -> String {
            // Scalar by scalar: the generic initializer from a slice is resolved at run time, on a cold process's clock.
            var view = String.UnicodeScalarView()
            for scalar in scalars[start..<i] { view.append(scalar) }
            return String(view)
        }
        if c == "\"" || c == "'" { return try string(quote: c) }
        if isDigit(c) || ((c == "-" || c == "+") && (isDigit(peek(1)) || (peek(1) == "." && isDigit(peek(2))))) {
            if looksLikeDate() { return try date() }
            return try number()
        }
        if c == "`" {
            // A quoted name: any property or type name, a keyword among them.
            i += 1
            while let d = peek(), d != "`" { i += 1 }
            guard peek() == "`" else { throw error("a name quoted with ` needs its closing `", at: start) }
            i += 1
            let name = String(String.UnicodeScalarView(scalars[(start + 1)..<(i - 1)]))
            guard !name.isEmpty else { throw error("a quoted name cannot be empty", at: start) }
            return QueryToken(kind: .identifier(name), column: start + 1, text: text())
        }
        if c == "_" || c.properties.isAlphabetic {
            while let d = peek(), d == "_" || d.properties.isAlphabetic || isDigit(d) { i += 1 }
            let word = text()
            return QueryToken(kind: QueryLexer.keywords.contains(word) ? .keyword(word) : .identifier(word), column: start + 1, text: word)
        }
        for op in QueryLexer.operators {
            let o = Array(op.unicodeScalars)
            if i + o.count <= scalars.count && Array(scalars[i..<(i + o.count)]) == o {
                i += o.count
                return QueryToken(kind: .op(op), column: start + 1, text: op)
            }
        }
        if c == "=" { throw error("'=' is not an operator; use '==' to compare", at: i) }
        if c == "&" || c == "|" { throw error("'\(c)' is not an operator; use '\(c)\(c)'", at: i) }
        throw error("unexpected character '\(c)'", at: i)
    }

    func looksLikeDate() -> Bool {
        var k = i
        var digits = 0
        while k < scalars.count, isDigit(scalars[k]) { digits += 1; k += 1 }
        return digits == 4 && k < scalars.count && scalars[k] == "-" && isDigit(k + 1 < scalars.count ? scalars[k + 1] : nil)
    }

    mutating func date() throws(QueryError) -> QueryToken {
        let start = i
        while let c = peek(), isDigit(c) || c == "-" || c == ":" || c == "T" || c == "Z" || c == "." || c == "+" { i += 1 }
        let text = String(String.UnicodeScalarView(scalars[start..<i]))
        guard let d = ISODate.parse(text) else {
            throw error("'\(text)' is not a date; write 2026-06-01 or 2026-06-01T09:00:00Z", at: start)
        }
        return QueryToken(kind: .date(d, text: text), column: start + 1, text: text)
    }

    mutating func number() throws(QueryError) -> QueryToken {
        let start = i
        if peek() == "-" || peek() == "+" { i += 1 }
        var isInteger = true
        while isDigit(peek()) { i += 1 }
        if peek() == ".", isDigit(peek(1)) {
            isInteger = false
            i += 1
            while isDigit(peek()) { i += 1 }
        }
        if peek() == "e" || peek() == "E" {
            var k = i + 1
            if k < scalars.count, scalars[k] == "+" || scalars[k] == "-" { k += 1 }
            if k < scalars.count, isDigit(scalars[k]) {
                isInteger = false
                i = k
                while isDigit(peek()) { i += 1 }
            }
        }
        let text = String(String.UnicodeScalarView(scalars[start..<i]))
        guard let v = Double(text.hasPrefix("+") ? String(text.dropFirst()) : text) else {
            throw error("'\(text)' is not a number", at: start)
        }
        return QueryToken(kind: .number(v, isInteger: isInteger), column: start + 1, text: text)
    }

    mutating func string(quote: Unicode.Scalar) throws(QueryError) -> QueryToken {
        let start = i
        i += 1
        var out = String.UnicodeScalarView()
        while true {
            guard let c = peek() else { throw error("unterminated string; add a closing \(quote)", at: start) }
            i += 1
            if c == quote { break }
            if c != "\\" {
                out.append(c)
                continue
            }
            guard let e = peek() else { throw error("unterminated escape in string", at: i - 1) }
            i += 1
            switch e {
            case "\"": out.append("\"")
            case "'": out.append("'")
            case "\\": out.append("\\")
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "u":
                let escape = i - 2
                guard let v = hex4(at: i) else { throw error("\\u needs four hex digits of a valid character", at: escape) }
                i += 4
                if let s = Unicode.Scalar(v) {
                    out.append(s)
                    continue
                }
                // A character beyond U+FFFF is written as JSON writes it: a
                // high surrogate escape followed by a low one.
                guard v < 0xDC00, i + 6 <= scalars.count, scalars[i] == "\\", scalars[i + 1] == "u",
                      let low = hex4(at: i + 2), (0xDC00...0xDFFF).contains(low),
                      let s = Unicode.Scalar(0x10000 + ((v - 0xD800) << 10) + (low - 0xDC00)) else {
                    throw error("\\u\(String(v, radix: 16, uppercase: true)) is half of a surrogate pair; write the pair (\\uD83D\\uDE00) or the character itself",
                                at: escape)
                }
                i += 6
                out.append(s)
            default:
                throw error("unknown escape '\\\(e)' in string (use \\\", \\\\, \\n, \\t or \\uXXXX)", at: i - 2)
            }
        }
        let text = String(String.UnicodeScalarView(scalars[start..<i]))
        return QueryToken(kind: .string(String(out)), column: start + 1, text: text)
    }

    /// The value of the four hex digits at `at` (nil unless all four are hex digits).
    private func hex4(at: Int) -> UInt32? {
        guard at + 4 <= scalars.count else { return nil }
        var v: UInt32 = 0
        for c in scalars[at..<(at + 4)] {
            guard let d = c.properties.isASCIIHexDigit ? UInt32(String(c), radix: 16) : nil else { return nil }
            v = v << 4 | d
        }
        return v
    }
}
