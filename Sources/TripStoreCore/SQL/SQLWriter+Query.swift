import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// `query --sql`: a query of the query language as one `SELECT` over the tables the feed
/// fills, returning the ids `--format ids` prints, in the same order (or
/// the count). The query is compiled against the schema first, so it
/// fails as `run` fails; then each construct becomes SQL with the same
/// semantics: a property the object's type lacks makes its comparison
/// false (its key is absent from `data`, so the value is SQL NULL and every
/// test is `COALESCE`d to false), nil is JSON `null`, and `~`/`^=` fold both
/// sides with `fold()`.
extension SQLWriter {
    /// The `SELECT` for `query` (`count`: `SELECT count(*)`, limit and offset aside, as `--count` does).
    /// - Throws: `QueryError` as `run` throws it.
    public func sql(for query: Query, count: Bool, in sql: SQLSchema) throws(QueryError) -> String {
        let from = try store.root(of: query)
        let compiler = QueryCompiler(schema: store.schema, indexes: nil, query: query.text, scope: from.closure)
        let predicate = try compiler.compile(query.predicate)
        var translator = SQLPredicate(schema: store.schema, sql: sql)
        var conditions = ["o.types @> \(SQLText.textArray([from.name]))"]
        let condition = translator.boolean(predicate, object: "o")
        if condition != "TRUE" { conditions.append(condition) }
        let whereClause = " WHERE " + conditions.joined(separator: "\n  AND ")
        if count { return "SELECT count(*) FROM \(sql.objects) o" + whereClause + ";\n" }
        var order: [String] = []
        for key in try compiler.sortKeys(query.sort, from: from.closure) {
            let v = translator.value(key.access, object: "o").expression
            // nil (or a property the type lacks) first ascending, last descending.
            let isNil = "(\(v) IS NULL OR \(v) = 'null'::jsonb)"
            order.append(isNil + (key.descending ? " ASC" : " DESC"))
            order.append(translator.sortable(v, key.type) + (key.descending ? " DESC" : " ASC"))
        }
        order.append("o.id COLLATE \"C\" ASC")
        var s = "SELECT o.id FROM \(sql.objects) o" + whereClause + "\nORDER BY " + order.joined(separator: ", ")
        if let limit = query.limit { s += "\nLIMIT \(limit)" }
        if query.offset > 0 { s += "\nOFFSET \(query.offset)" }
        return s + ";\n"
    }
}

/// Turns a compiled predicate into a SQL condition over `objects` rows.
struct SQLPredicate {
    let schema: Schema
    let sql: SQLSchema
    /// Aliases for the related rows of subqueries.
    private var next = 0

    init(schema: Schema, sql: SQLSchema) {
        self.schema = schema
        self.sql = sql
    }

    mutating func alias() -> String {
        next += 1
        return "r\(next)"
    }

    /// A condition that is never NULL.
    mutating func boolean(_ p: CompiledPredicate, object o: String) -> String {
        switch p {
        case .constant(let b): return b ? "TRUE" : "FALSE"
        case .isType(_, _, let exact, let name):
            return exact ? "\(o).type = \(SQLText.literal(name))" : "\(o).types @> \(SQLText.textArray([name]))"
        case .compare(let access, let test):
            let v = value(access, object: o)
            return "COALESCE(\(self.test(v.expression, test, v.type)), FALSE)"
        case .anyOf(let access, let tests):
            guard !tests.isEmpty else { return "FALSE" }  // `in []`
            let v = value(access, object: o)
            return "COALESCE(" + tests.map { "(" + test(v.expression, $0, v.type) + ")" }.joined(separator: " OR ") + ", FALSE)"
        case .count(let access, let op, let n):
            let v = value(access, object: o).expression
            return "COALESCE(jsonb_typeof(\(v)) = 'array' AND jsonb_array_length(\(v)) \(Self.sqlOperator(op)) \(n), FALSE)"
        case .quantified(let all, let collection, let element):
            let v = value(collection, object: o).expression
            let e = alias()
            let elements = "jsonb_array_elements(CASE WHEN jsonb_typeof(\(v)) = 'array' THEN \(v) ELSE '[]'::jsonb END) \(e)(v)"
            let inner: String
            let from: String
            switch element {
            case .value(let tests):
                let type = Self.elementType(value(collection, object: o).type)
                inner = tests.isEmpty ? "FALSE" : "COALESCE(" + tests.map { "(" + test("\(e).v", $0, type) + ")" }.joined(separator: " OR ") + ", FALSE)"
                from = elements
            case .object(let path, let tests):
                let t = alias()
                let pv = value(path, object: t)
                inner = tests.isEmpty ? "FALSE" : "COALESCE(" + tests.map { "(" + test(pv.expression, $0, pv.type) + ")" }.joined(separator: " OR ") + ", FALSE)"
                from = elements + " JOIN \(sql.objects) \(t) ON \(t).id = \(e).v->>'id'"
            }
            // Missing: false; nil: `all` is true and `any` false, as over an empty collection.
            return all ? "(\(v) IS NOT NULL AND NOT EXISTS (SELECT 1 FROM \(from) WHERE NOT \(inner)))"
                       : "(\(v) IS NOT NULL AND EXISTS (SELECT 1 FROM \(from) WHERE \(inner)))"
        case .and(let ps):
            guard !ps.isEmpty else { return "TRUE" }
            return "(" + ps.map { boolean($0, object: o) }.joined(separator: " AND ") + ")"
        case .or(let ps):
            guard !ps.isEmpty else { return "FALSE" }
            return "(" + ps.map { boolean($0, object: o) }.joined(separator: " OR ") + ")"
        case .not(let p):
            return "NOT " + boolean(p, object: o)
        }
    }

    /// The `jsonb` at the end of a path from the row `o`: SQL NULL where the
    /// object (or a related one) lacks the property, `null` for nil.
    mutating func value(_ access: PropertyAccess, object o: String) -> (expression: String, type: ValueType?) {
        var v = "\(o).data"
        var type: ValueType?
        var first = true
        for step in access.steps {
            switch step {
            case .property(let slots):
                guard let e = slots.firstIndex(where: { $0 >= 0 }) else { return ("NULL::jsonb", nil) }
                let p = schema.entities[e].properties[Int(slots[e])]
                let key = SQLText.literal(p.name)
                if first {
                    v = "\(o).data->\(key)"
                } else {
                    let t = alias()
                    v = "(CASE WHEN \(v) = 'null'::jsonb THEN 'null'::jsonb ELSE (SELECT \(t).data FROM \(sql.objects) \(t) WHERE \(t).id = \(v)->>'id')->\(key) END)"
                }
                type = p.attribute?.type
            case .field(let i):
                guard case .embedded(let e)? = type, i < e.fields.count else { return ("NULL::jsonb", nil) }
                v = "(CASE WHEN \(v) = 'null'::jsonb THEN 'null'::jsonb ELSE \(v)->\(SQLText.literal(e.fields[i].name)) END)"
                type = e.fields[i].type
            }
            first = false
        }
        return (v, type)
    }

    /// One comparison of a `jsonb` value with a typed literal (NULL where the property is missing).
    func test(_ v: String, _ t: ValueTest, _ type: ValueType?) -> String {
        let isNil = "\(v) = 'null'::jsonb"
        let text = "(\(v) #>> '{}')"
        if case .null = t.literal {
            switch t.op {
            case .equal: return isNil
            case .notEqual: return "\(v) <> 'null'::jsonb"
            default: return "FALSE AND \(v) IS NOT NULL"
            }
        }
        // A nil value is only ever `!=` a value.
        func guarded(_ comparison: String) -> String {
            t.op == .notEqual ? "(\(isNil) OR \(comparison))" : "(\(v) <> 'null'::jsonb AND \(comparison))"
        }
        switch t.literal {
        case .null:
            return "FALSE"
        case .string(let s, _):
            let lit = SQLText.literal(s)
            switch t.op {
            case .contains: return guarded("strpos(\(sql.qualified).fold(\(text)), \(sql.qualified).fold(\(lit))) > 0")
            case .beginsWith: return guarded("starts_with(\(sql.qualified).fold(\(text)), \(sql.qualified).fold(\(lit)))")
            default:
                // As Swift compares: Unicode scalars after NFC normalisation.
                return guarded("jsonb_typeof(\(v)) = 'string' AND normalize(\(text), NFC) COLLATE \"C\" \(Self.sqlOperator(t.op)) "
                               + "\(SQLText.literal(CanonicalText.nfc(s))) COLLATE \"C\"")
            }
        case .integer(let i):
            return number(v, text, t.op, String(i), type, guarded)
        case .number(let d):
            return number(v, text, t.op, Self.decimal(d), type, guarded, seconds: d)
        case .bool(let b):
            switch t.op {
            case .equal: return "\(v) = '\(b)'::jsonb"
            case .notEqual: return "\(v) <> '\(b)'::jsonb"
            default: return "FALSE AND \(v) IS NOT NULL"
            }
        }
    }

    private func number(_ v: String, _ text: String, _ op: ComparisonOperator, _ literal: String, _ type: ValueType?,
                        _ guarded: (String) -> String, seconds: Double? = nil) -> String {
        if case .contains = op { return "FALSE AND \(v) IS NOT NULL" }
        if case .beginsWith = op { return "FALSE AND \(v) IS NOT NULL" }
        if case .date? = type, let seconds {
            // Both sides as the store writes dates, read by the same function: exact.
            return guarded("jsonb_typeof(\(v)) = 'string' AND \(sql.qualified).instant(\(text)) \(Self.sqlOperator(op)) "
                           + "\(sql.qualified).instant(\(SQLText.literal(ISODate.format(seconds))))")
        }
        return guarded("jsonb_typeof(\(v)) = 'number' AND \(text)::numeric \(Self.sqlOperator(op)) \(literal)::numeric")
    }

    /// What ORDER BY sorts a value of this type by.
    func sortable(_ v: String, _ type: ValueType) -> String {
        switch type {
        case .int, .double: return "(\(v) #>> '{}')::numeric"
        case .date: return "\(sql.qualified).instant(\(v) #>> '{}')"
        default: return "normalize(\(v) #>> '{}', NFC) COLLATE \"C\""
        }
    }

    static func elementType(_ t: ValueType?) -> ValueType? {
        if case .array(let inner)? = t { return inner }
        return t
    }

    static func sqlOperator(_ op: ComparisonOperator) -> String {
        switch op {
        case .equal: return "="
        case .notEqual: return "<>"
        case .less: return "<"
        case .lessOrEqual: return "<="
        case .greater: return ">"
        case .greaterOrEqual: return ">="
        case .contains, .beginsWith: return "="
        }
    }

    /// A Double as exact decimal text PostgreSQL's numeric reads.
    static func decimal(_ d: Double) -> String {
        if d == d.rounded(), abs(d) < 1e18 { return String(Int64(d)) }
        return "\(d)"
    }
}
