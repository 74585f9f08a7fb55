import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Resolves a parsed query against a schema: types, property paths (a
/// property some subclasses lack is false on the others), and literals read
/// in the property's type. Errors name the column and suggest close names.
struct QueryCompiler {
    let schema: Schema
    let indexes: StoreIndexes?
    let query: String
    /// The `--from` entity's closure: the objects the query looks at.
    let scope: [Int]

    func error(_ message: String, _ column: Int) -> QueryError {
        QueryError(message, column: column, query: query)
    }

    func compile(_ e: QueryExpression) throws(QueryError) -> CompiledPredicate {
        switch e {
        case .constant(let b): return .constant(b)
        case .and(let xs):
            var out: [CompiledPredicate] = []
            for x in xs { out.append(try compile(x)) }
            return .and(out)
        case .or(let xs):
            var out: [CompiledPredicate] = []
            for x in xs { out.append(try compile(x)) }
            return .or(out)
        case .not(let x): return .not(try compile(x))
        case .isType(let name, let exact, let column):
            guard let entity = schema.entity(named: name) else {
                throw error("unknown type '\(name)'" + NameSuggestion.hint(for: name, in: scope.map { schema.entities[$0].name }), column)
            }
            let root = schema.entities[scope[0]]
            guard scope.contains(entity.id) else {
                throw error("'\(name)' is not a \(root.name); 'is' takes \(root.name) or one of its subclasses", column)
            }
            var mask = Array(repeating: false, count: schema.entities.count)
            let members = exact ? [entity.id] : entity.closure
            for m in members { mask[m] = true }
            return .isType(mask: mask, entities: members, exact: exact, name: name)
        case .comparison(let path, let op, let literal):
            let (access, leaf) = try resolve(path, from: scope)
            return .compare(access, try test(op, literal, leaf: leaf, path: path))
        case .inList(let path, let items):
            let (access, leaf) = try resolve(path, from: scope)
            var tests: [ValueTest] = []
            for item in items { tests.append(try test(.equal, item, leaf: leaf, path: path)) }
            return .anyOf(access, tests)
        case .count(let path, let op, let literal):
            let (access, leaf) = try resolve(path, from: scope)
            guard leaf.isCollection else {
                throw error("count(…) needs a to-many relationship or an array; '\(path)' is \(leaf.description)", path.columns[0])
            }
            guard case .number(let n, _) = literal.kind else { throw error("count(…) compares with a number", literal.column) }
            guard n.isFinite else { throw error("a number outside the range of a Double", literal.column) }
            // A count is an Int: past its range, every comparison answers as with its bound.
            return .count(access, op, n >= 9.2e18 ? .max : n <= -9.2e18 ? .min : Int(n))
        case .quantified(let all, let inner):
            switch inner {
            case .comparison(let path, let op, let literal):
                return try quantified(all: all, path: path, tests: [(op, literal)])
            case .inList(let path, let items):
                // An element matches when it equals one of the items.
                return try quantified(all: all, path: path, tests: items.map { (.equal, $0) })
            default:
                throw error("any/all take a comparison", 1)
            }
        }
    }

    func quantified(all: Bool, path: QueryPath, tests: [(ComparisonOperator, QueryLiteral)]) throws(QueryError) -> CompiledPredicate {
        // The collection is the first to-many relationship or array on the path.
        var entities = scope
        for k in 0..<path.names.count {
            let prefix = QueryPath(names: Array(path.names[...k]), columns: Array(path.columns[...k]))
            let (access, leaf) = try resolve(prefix, from: entities)
            switch leaf {
            case .relationship(let dest, true):
                let rest = QueryPath(names: Array(path.names[(k + 1)...]), columns: Array(path.columns[(k + 1)...]))
                guard !rest.names.isEmpty else {
                    throw error("any/all need a property of the related objects, like '\(path).name'", path.columns[k])
                }
                let (inner, innerLeaf) = try resolve(rest, from: schema.entities[dest].closure)
                var ts: [ValueTest] = []
                for (op, lit) in tests { ts.append(try test(op, lit, leaf: innerLeaf, path: rest)) }
                return .quantified(all: all, collection: access, element: .object(inner, ts))
            case .attribute(.array(let inner)):
                guard k == path.names.count - 1 else {
                    throw error("'\(prefix)' is an array of \(inner.displayName) values; they have no properties", path.columns[k + 1])
                }
                var ts: [ValueTest] = []
                for (op, lit) in tests { ts.append(try test(op, lit, leaf: .attribute(inner), path: path)) }
                return .quantified(all: all, collection: access, element: .value(ts))
            case .relationship(let dest, false):
                entities = schema.entities[dest].closure
            default:
                if k == path.names.count - 1 {
                    throw error("any/all need a to-many relationship or an array; '\(path)' is \(leaf.description)", path.columns[0])
                }
            }
        }
        throw error("any/all need a to-many relationship or an array in '\(path)'", path.columns[0])
    }

    /// What a path ends at.
    enum Leaf {
        case attribute(ValueType)
        case relationship(destination: Int, toMany: Bool)

        var isCollection: Bool {
            switch self {
            case .relationship(_, let many): return many
            case .attribute(.array): return true
            default: return false
            }
        }

        var description: String {
            switch self {
            case .attribute(let t): return t.withArticle
            case .relationship(_, true): return "a to-many relationship"
            case .relationship: return "a to-one relationship"
            }
        }
    }

    /// Resolves a path starting at `entities` (an entity set: a closure).
    func resolve(_ path: QueryPath, from entities: [Int]) throws(QueryError) -> (PropertyAccess, Leaf) {
        var steps: [PathStep] = []
        var current = entities
        var embedded: EmbeddedDescription?
        var leaf: Leaf = .attribute(.string)
        var index: ValueIndex?
        for (k, name) in path.names.enumerated() {
            let column = path.columns[k]
            if let e = embedded {
                guard let i = e.fields.firstIndex(where: { $0.name == name }) else {
                    throw error("\(e.name) has no field '\(name)'" + NameSuggestion.hint(for: name, in: e.fields.map(\.name)), column)
                }
                steps.append(.field(i))
                leaf = .attribute(e.fields[i].type)
                embedded = nil
                if case .embedded(let inner) = e.fields[i].type { embedded = inner }
                continue
            }
            if current.isEmpty {
                throw error("'\(path.names[k - 1])' is \(leaf.description); it has no property '\(name)'", column)
            }
            var slots = Array(repeating: Int32(-1), count: schema.entities.count)
            var found: Property?
            for e in current {
                if let p = schema.entities[e].property(named: name) {
                    slots[e] = Int32(p.slot)
                    if found == nil { found = p }
                }
            }
            guard let p = found else {
                let names = Set(current.flatMap { schema.entities[$0].properties.map(\.name) })
                let owner = schema.entities[current[0]].name
                throw error("\(owner) and its subclasses have no property '\(name)'" + NameSuggestion.hint(for: name, in: names.sorted()), column)
            }
            steps.append(.property(slots))
            if k == 0 && path.names.count == 1, let indexes {
                index = indexes.index(entity: p.declaringEntity, slot: p.slot)
            }
            switch p.kind {
            case .attribute(let a):
                leaf = .attribute(a.type)
                current = []
                if case .embedded(let e) = a.type { embedded = e }
            case .relationship(let r):
                leaf = .relationship(destination: r.destination, toMany: r.isToMany)
                current = r.isToMany ? [] : schema.entities[r.destination].closure
                if r.isToMany && k < path.names.count - 1 {
                    throw error("'\(name)' is a to-many relationship; use 'any \(path)' or 'all \(path)'", path.columns[0])
                }
            }
        }
        return (PropertyAccess(steps: steps, text: path.description, index: index), leaf)
    }

    /// Reads a literal in the type of the value it is compared with.
    func test(_ op: ComparisonOperator, _ lit: QueryLiteral, leaf: Leaf, path: QueryPath) throws(QueryError) -> ValueTest {
        let column = lit.column
        if case .null = lit.kind {
            guard op == .equal || op == .notEqual else {
                throw error("only == and != compare with nil", column)
            }
            if leaf.isCollection {
                throw error("'\(path)' is \(leaf.description) and is never nil; use count(\(path)) == 0", path.columns[0])
            }
            return ValueTest(op: op, literal: .null, text: lit.text)
        }
        switch leaf {
        case .relationship(_, false):
            throw error("'\(path)' is a to-one relationship; compare it with nil, or compare one of its properties ('\(path).name')", path.columns[0])
        case .relationship(_, true), .attribute(.array):
            throw error("'\(path)' is \(leaf.description); use any, all or count(…)", path.columns[0])
        case .attribute(.embedded(let e)):
            throw error("'\(path)' is a \(e.name); compare it with nil or compare one of its fields (\(e.fields.map { "\(path).\($0.name)" }.joined(separator: ", ")))", path.columns[0])
        case .attribute(let type):
            let isText = op == .contains || op == .beginsWith
            switch type {
            case .string, .enumeration:
                guard case .string(let s) = lit.kind else {
                    throw error("'\(path)' is \(type.withArticle); compare it with text in quotes, found \(lit.text)", column)
                }
                // Ordering compares raw values as strings and takes any string (as the query language says).
                let isOrdering = op == .less || op == .lessOrEqual || op == .greater || op == .greaterOrEqual
                if case .enumeration(let e) = type, !isText, !isOrdering, !e.cases.contains(s) {
                    throw error("'\(s)' is not a \(e.name); expected one of " + e.cases.map { "\"\($0)\"" }.joined(separator: ", "), column)
                }
                return ValueTest(op: op, literal: .string(s, folded: isText ? TextFolding.fold(s) : s), text: lit.text)
            case .int, .double:
                guard !isText else { throw error("'\(op.rawValue)' works on text; '\(path)' is \(type.withArticle)", column) }
                guard case .number(let d, _) = lit.kind else {
                    throw error("'\(path)' is \(type.withArticle); compare it with a number, found \(lit.text)", column)
                }
                guard d.isFinite else { throw error("\(lit.text) is outside the range of a Double", lit.column) }
                // An Int attribute compares with the exact value written (the text keeps every digit).
                if case .int = type, let place = IntegerLiteral(lit.text) {
                    return Self.integerTest(op, place, text: lit.text)
                }
                return ValueTest(op: op, literal: .number(d), text: lit.text)
            case .date:
                guard !isText else { throw error("'\(op.rawValue)' works on text; '\(path)' is a Date", column) }
                switch lit.kind {
                case .date(let d): return ValueTest(op: op, literal: .number(d), text: lit.text)
                case .string(let s):
                    guard let d = ISODate.parse(s) else {
                        throw error("'\(s)' is not a date; write 2026-06-01 or 2026-06-01T09:00:00Z", column)
                    }
                    return ValueTest(op: op, literal: .number(d), text: lit.text)
                default:
                    throw error("'\(path)' is a Date; compare it with a date like 2026-06-01, found \(lit.text)", column)
                }
            case .bool:
                guard op == .equal || op == .notEqual else { throw error("a Bool compares only with == and !=", column) }
                guard case .bool(let b) = lit.kind else {
                    throw error("'\(path)' is a Bool; compare it with true or false, found \(lit.text)", column)
                }
                return ValueTest(op: op, literal: .bool(b), text: lit.text)
            case .array, .embedded:
                throw error("'\(path)' cannot be compared", column)
            }
        }
    }
}

extension QueryCompiler {
    /// `op` against a literal where `place` says, as the equivalent test
    /// against a whole number an `Int` holds: between two whole numbers,
    /// `< x` is `<= floor`, `> x` is `> floor`; beyond the range, every
    /// value is on one side. Equality with a value no `Int` holds is tested
    /// against 0.5, which no `Int` equals (nil stays nil: `!=` holds, `==` does not).
    static func integerTest(_ op: ComparisonOperator, _ place: IntegerLiteral, text: String) -> ValueTest {
        let unequal = ValueTest.Literal.number(0.5)
        switch (place, op) {
        case (.exact(let i), _): return ValueTest(op: op, literal: .integer(i), text: text)
        case (_, .equal), (_, .notEqual): return ValueTest(op: op, literal: unequal, text: text)
        case (.between(let floor), .less), (.between(let floor), .lessOrEqual):
            return ValueTest(op: .lessOrEqual, literal: .integer(floor), text: text)
        case (.between(let floor), _): return ValueTest(op: .greater, literal: .integer(floor), text: text)
        case (.above, .less), (.above, .lessOrEqual): return ValueTest(op: .lessOrEqual, literal: .integer(.max), text: text)
        case (.above, _): return ValueTest(op: .greater, literal: .integer(.max), text: text)
        case (.below, .greater), (.below, .greaterOrEqual): return ValueTest(op: .greaterOrEqual, literal: .integer(.min), text: text)
        case (.below, _): return ValueTest(op: .less, literal: .integer(.min), text: text)
        }
    }
}
