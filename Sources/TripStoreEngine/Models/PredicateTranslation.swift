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
        default:
            let mirror = Mirror(reflecting: value)
            if mirror.displayStyle == .optional {
                guard let wrapped = mirror.children.first?.value else { return lit(.null, "nil") }
                return literal(wrapped)
            }
            return nil
        }
    }

    func quoted(_ s: String) -> String {
        var w = JSONWriter()
        w.string(s)
        return w.string
    }

    func comparison(_ lhs: Any, _ rhs: Any, _ op: ComparisonOperator, exact: Bool = true) -> Translation? {
        var path: String?
        var lit: (QueryLiteral, String)?
        var flipped = false
        if let k = lhs as? any KeyPathExpression, let n = k.propertyName(self) {
            path = n
            lit = (rhs as? any ValueExpression).flatMap { literal($0.anyValue) }
        } else if let k = rhs as? any KeyPathExpression, let n = k.propertyName(self) {
            path = n
            lit = (lhs as? any ValueExpression).flatMap { literal($0.anyValue) }
            flipped = true
        }
        guard let path, let (literal, text) = lit else { return nil }
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
        let qpath = QueryPath(names: [path], columns: [1])
        return Translation(expression: .comparison(qpath, op, literal), text: "\(path) \(op.rawValue) \(text)", exact: exact)
    }
}

protocol TranslatableExpression {
    func translate(_ t: PredicateTranslator) -> PredicateTranslator.Translation?
}

protocol KeyPathExpression {
    func propertyName(_ t: PredicateTranslator) -> String?
}

protocol ValueExpression {
    var anyValue: Any { get }
}

extension PredicateExpressions.KeyPath: KeyPathExpression {
    func propertyName(_ t: PredicateTranslator) -> String? {
        // Only a key path on the predicate's own variable (or a cast of it) is a stored property.
        guard root is any VariableExpression else { return nil }
        return t.name(keyPath)
    }
}

protocol VariableExpression {}
extension PredicateExpressions.Variable: VariableExpression {}

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
        return .init(expression: .isType(name: name, exact: false, column: 1), text: "is \(name)", exact: true)
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
        return .init(expression: .isType(name: name, exact: false, column: 1), text: "is \(name)", exact: true)
    }
}
