import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// Turns a Foundation `Predicate` into the engine's query where it can, so
/// indexes are used. A part it cannot translate becomes "true" (a superset),
/// and the result is then marked inexact: the caller evaluates the Foundation
/// predicate on each candidate. `String.contains` is case-sensitive, so it
/// becomes the folded `~` (which narrows by the text index) and stays inexact.
struct PredicateTranslator {
    let models: ModelSchema
    /// The closure variable whose key paths are properties (nil: the predicate's own, or a cast of it).
    var scope: PredicateExpressions.VariableID? = nil

    struct Translation {
        var expression: QueryExpression
        var text: String
        var exact: Bool

        static let all = Translation(expression: .constant(true), text: "", exact: false)
    }

    func translate(_ expression: Any) -> Translation {
        (expression as? any TranslatableExpression)?.translate(self) ?? .all
    }

    /// A property name for a key path on the predicate's variable (or a cast of it).
    func name(_ keyPath: AnyKeyPath) -> String? { models.propertyName(keyPath) }

    func entityName(_ type: Any.Type) -> String? {
        (type as? PersistentModel.Type).map { $0.entityName }
    }

    /// A Swift value as a query literal, with its text.
    func literal(_ value: Any) -> (QueryLiteral, String)? {
        func lit(_ kind: QueryLiteral.Kind, _ text: String) -> (QueryLiteral, String) {
            (QueryLiteral(kind: kind, column: 1, text: text), text)
        }
        switch value {
        case let s as String: return lit(.string(s), quoted(s))
        case let b as Bool: return lit(.bool(b), String(b))
        case let i as Int: return lit(.number(Double(i), isInteger: true), String(i))
        case let d as Double: return lit(.number(d, isInteger: false), String(d))
        case let d as Date:
            let t = d.timeIntervalSinceReferenceDate
            return lit(.date(t), ISODate.format(t))
        case let e as any RawRepresentable:
            guard let raw = e.rawValue as? String else { return nil }
            return lit(.string(raw), quoted(raw))
        case let m as any ModelValue:
            // UUID, URL, Decimal and other values stored as text: equal
            // exactly when their stored text is (see `comparison` for order).
            guard case .string(let s) = m.storedValue else { return nil }
            return lit(.string(s), quoted(s))
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return lit(.null, "nil") }
                return literal(wrapped)
            }
            return nil
        }
    }

    /// The value an optional holds (itself when it is not one).
    func unwrapped(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional, let wrapped = mirror.children.first?.value else { return value }
        return unwrapped(wrapped)
    }

    func quoted(_ s: String) -> String {
        var w = JSONWriter()
        w.string(s)
        return w.string
    }

    /// Whether a key path on this variable names a stored property here:
    /// inside a `contains { … }` closure only the closure's own variable does.
    func accepts(_ variable: PredicateExpressions.VariableID) -> Bool { scope.map { $0 == variable } ?? true }

    /// A translator for the body of a closure over a relationship's elements.
    func inside(_ variable: PredicateExpressions.VariableID) -> PredicateTranslator {
        PredicateTranslator(models: models, scope: variable)
    }

    /// What one side of a comparison reads: a property path or a count.
    enum Operand {
        case path([String])
        case count([String])
    }

    func operand(_ x: Any) -> Operand? {
        if let c = x as? any CountExpression, let p = c.countedPath(self) { return .count(p) }
        if let p = x as? any PathExpression, let names = p.path(self) { return .path(names) }
        return nil
    }

    func comparison(_ lhs: Any, _ rhs: Any, _ op: ComparisonOperator, exact: Bool = true) -> Translation? {
        var side: Operand?
        var lit: (QueryLiteral, String)?
        var flipped = false
        if let o = operand(lhs) {
            side = o
            lit = (rhs as? any ValueExpression).flatMap { literal($0.anyValue) }
        } else if let o = operand(rhs) {
            side = o
            lit = (lhs as? any ValueExpression).flatMap { literal($0.anyValue) }
            flipped = true
        }
        guard let side, let (literal, text) = lit else { return nil }
        // A Decimal's text does not order as the number does: only equality translates.
        if op != .equal && op != .notEqual, let v = ((flipped ? lhs : rhs) as? any ValueExpression)?.anyValue,
           unwrapped(v) is Decimal {
            return nil
        }
        var op = op
        if flipped {
            switch op {
            case .less: op = .greater
            case .lessOrEqual: op = .greaterOrEqual
            case .greater: op = .less
            case .greaterOrEqual: op = .lessOrEqual
            default: break
            }
        }
        switch side {
        case .path(let names):
            // Through a nil to-one, Foundation's `!=` is true where the engine's nil is not: leave it to the predicate.
            if names.count > 1 && op == .notEqual { return nil }
            let qpath = QueryPath(names: names, columns: names.map { _ in 1 })
            return Translation(expression: .comparison(qpath, op, literal), text: "\(qpath) \(op.rawValue) \(text)", exact: exact)
        case .count(let names):
            guard case .number(let n, true) = literal.kind, n >= 0, [.equal, .notEqual, .less, .lessOrEqual, .greater, .greaterOrEqual].contains(op) else { return nil }
            let qpath = QueryPath(names: names, columns: names.map { _ in 1 })
            return Translation(expression: .count(qpath, op, literal), text: "count(\(qpath)) \(op.rawValue) \(text)", exact: exact)
        }
    }

    /// `rel.contains { $0.title == "x" }` as `any rel.title == "x"` (and
    /// `allSatisfy` as `all`): the closure must be one comparison on its element.
    func quantified(all: Bool, over sequence: Any, variable: PredicateExpressions.VariableID, body: Any) -> Translation? {
        guard let s = sequence as? any PathExpression, let rel = s.path(self), rel.count == 1 else { return nil }
        let inner = inside(variable).translate(body)
        guard inner.exact else { return nil }
        var condition = inner.expression
        // `!$0.isCompleted` is `isCompleted == false`.
        if case .not(.comparison(let p, .equal, var lit)) = condition, case .bool(let b) = lit.kind {
            lit.kind = .bool(!b)
            lit.text = String(!b)
            condition = .comparison(p, .equal, lit)
        }
        guard case .comparison(let path, let op, let lit) = condition else { return nil }
        let qpath = QueryPath(names: rel + path.names, columns: (rel + path.names).map { _ in 1 })
        return Translation(expression: .quantified(all: all, .comparison(qpath, op, lit)),
                           text: "\(all ? "all" : "any") \(qpath) \(op.rawValue) \(lit.text)", exact: true)
    }
}

protocol TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation?
}

/// A property path on the predicate's variable: `$0.name`, or through
/// to-one relationships, `$0.livingAccommodation?.name`.
protocol PathExpression {
    func path(_ t: PredicateTranslator) -> [String]?
}

/// `$0.bucketList.count`.
protocol CountExpression {
    func countedPath(_ t: PredicateTranslator) -> [String]?
}

/// A stored collection (a to-many relationship, an array attribute): the
/// key paths of its `count` and `isEmpty`, to recognise them (a key path's
/// description does not name a computed property).
protocol CountedCollection {
    static var countKeyPath: AnyKeyPath { get }
    static var isEmptyKeyPath: AnyKeyPath { get }
}

extension Array: CountedCollection {
    static var countKeyPath: AnyKeyPath { \Self.count }
    static var isEmptyKeyPath: AnyKeyPath { \Self.isEmpty }
}

protocol ValueExpression {
    var anyValue: Any { get }
}

extension PredicateExpressions.KeyPath: PathExpression, CountExpression, TranslatableExpression {
    func path(_ t: PredicateTranslator) -> [String]? {
        // Only a key path on the predicate's own variable (or a cast of it) is a stored property.
        guard let v = root as? any VariableExpression, t.accepts(v.variableKey), let name = t.name(keyPath) else { return nil }
        return [name]
    }

    /// A collection's `count` (or `isEmpty`, as a count of 0) on a stored relationship or array.
    func countedPath(_ t: PredicateTranslator) -> [String]? {
        guard let a = Root.Output.self as? any CountedCollection.Type, a.countKeyPath == keyPath,
              let r = root as? any PathExpression else { return nil }
        return r.path(t)
    }

    /// `$0.bucketList.isEmpty` is `count(bucketList) == 0`; a Bool attribute alone is `== true`.
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        if let a = Root.Output.self as? any CountedCollection.Type, a.isEmptyKeyPath == keyPath,
           let r = root as? any PathExpression, let names = r.path(t) {
            let qpath = QueryPath(names: names, columns: names.map { _ in 1 })
            let zero = QueryLiteral(kind: .number(0, isInteger: true), column: 1, text: "0")
            return .init(expression: .count(qpath, .equal, zero), text: "count(\(qpath)) == 0", exact: true)
        }
        guard Output.self == Bool.self, let names = path(t) else { return nil }
        let yes = QueryLiteral(kind: .bool(true), column: 1, text: "true")
        return .init(expression: .comparison(QueryPath(names: names, columns: names.map { _ in 1 }), .equal, yes),
                     text: "\(names.map(Query.quoted).joined(separator: ".")) == true", exact: true)
    }
}

protocol VariableExpression {
    var variableKey: PredicateExpressions.VariableID { get }
}

extension PredicateExpressions.Variable: VariableExpression {
    var variableKey: PredicateExpressions.VariableID { key }
}

extension PredicateExpressions.SequenceContainsWhere: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        t.quantified(all: false, over: sequence, variable: variable.key, body: test)
    }
}

extension PredicateExpressions.SequenceAllSatisfy: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        t.quantified(all: true, over: sequence, variable: variable.key, body: test)
    }
}

extension PredicateExpressions.Value: ValueExpression {
    var anyValue: Any { value }
}

extension PredicateExpressions.Conjunction: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        let a = t.translate(lhs), b = t.translate(rhs)
        let parts = [a, b].filter { !$0.text.isEmpty }
        if parts.isEmpty { return .all }
        if parts.count == 1 { return .init(expression: parts[0].expression, text: parts[0].text, exact: a.exact && b.exact) }
        return .init(expression: .and([a.expression, b.expression]), text: "(\(a.text) && \(b.text))", exact: a.exact && b.exact)
    }
}

extension PredicateExpressions.Disjunction: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        let a = t.translate(lhs), b = t.translate(rhs)
        guard !a.text.isEmpty, !b.text.isEmpty else { return .all }
        return .init(expression: .or([a.expression, b.expression]), text: "(\(a.text) || \(b.text))", exact: a.exact && b.exact)
    }
}

extension PredicateExpressions.Negation: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        let w = t.translate(wrapped)
        guard w.exact, !w.text.isEmpty else { return .all }
        return .init(expression: .not(w.expression), text: "!\(w.text)", exact: true)
    }
}

extension PredicateExpressions.TypeCheck: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        guard input is any VariableExpression, let name = t.entityName(Desired.self) else { return nil }
        return .init(expression: .isType(name: name, exact: false, column: 1), text: "is \(Query.quoted(name))", exact: true)
    }
}

extension PredicateExpressions.Equal: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? { t.comparison(lhs, rhs, .equal) }
}

extension PredicateExpressions.NotEqual: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? { t.comparison(lhs, rhs, .notEqual) }
}

extension PredicateExpressions.Comparison: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        let op: ComparisonOperator
        switch self.op {
        case .lessThan: op = .less
        case .lessThanOrEqual: op = .lessOrEqual
        case .greaterThan: op = .greater
        case .greaterThanOrEqual: op = .greaterOrEqual
        @unknown default: return nil
        }
        return t.comparison(lhs, rhs, op)
    }
}

extension PredicateExpressions.CollectionContainsCollection: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        // Case-sensitive in Foundation: narrow with the folded `~`, then check exactly.
        t.comparison(base, other, .contains, exact: false)
    }
}

/// `if let p = $0 as? Sub { body } else { false }` is `is Sub && body`; an
/// `else if let q = $0 as? Other { … }` chain continues with `!is Sub && …`,
/// and `else { true }` with `!is Sub`.
extension PredicateExpressions.NilCoalesce: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        guard let flat = lhs as? any CastFlatMap, let typeTest = flat.typeTest(t), let branch = flat.translateCast(t) else { return nil }
        let otherwise: PredicateTranslator.Translation
        if let v = rhs as? any ValueExpression, let b = v.anyValue as? Bool {
            if !b { return branch }
            otherwise = .all
        } else {
            otherwise = t.translate(rhs)
        }
        let notType: QueryExpression = .not(typeTest.expression)
        if otherwise.text.isEmpty {
            return .init(expression: .or([branch.expression, notType]), text: "(\(branch.text) || !\(typeTest.text))",
                         exact: branch.exact && otherwise.exact)
        }
        return .init(expression: .or([branch.expression, .and([notType, otherwise.expression])]),
                     text: "(\(branch.text) || (!\(typeTest.text) && \(otherwise.text)))", exact: branch.exact && otherwise.exact)
    }
}

protocol CastFlatMap {
    func translateCast(_ t: PredicateTranslator) -> PredicateTranslator.Translation?
    func typeTest(_ t: PredicateTranslator) -> PredicateTranslator.Translation?
}

/// `$0.livingAccommodation?.name`: the wrapped key path is a to-one, the transform a key path on its object.
extension PredicateExpressions.OptionalFlatMap: PathExpression {
    func path(_ t: PredicateTranslator) -> [String]? {
        guard let head = (wrapped as? any PathExpression)?.path(t),
              let tail = (transform as? any PathExpression)?.path(t.inside(variable.key)) else { return nil }
        return head + tail
    }
}

extension PredicateExpressions.OptionalFlatMap: CastFlatMap {
    func typeTest(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        (wrapped as? any TranslatableExpression)?.translate(t)
    }

    func translateCast(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        guard let cast = wrapped as? any TranslatableExpression, let typeTest = cast.translate(t) else { return nil }
        let body = t.translate(transform)
        guard !body.text.isEmpty else { return .init(expression: typeTest.expression, text: typeTest.text, exact: false) }
        return .init(expression: .and([typeTest.expression, body.expression]), text: "(\(typeTest.text) && \(body.text))",
                     exact: body.exact)
    }
}

extension PredicateExpressions.ConditionalCast: TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation? {
        guard input is any VariableExpression, let name = t.entityName(Desired.self) else { return nil }
        return .init(expression: .isType(name: name, exact: false, column: 1), text: "is \(Query.quoted(name))", exact: true)
    }
}
