import Foundation
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// A naive evaluator of the query language over exported envelopes: a plain
/// scan with the query language's semantics, written independently of the engine, so the
/// differential test can compare the two.
struct ReferenceEvaluator {
    let schema: Schema
    /// Every object as its envelope (relationships as references), by id.
    let objects: [String: JSONValue]

    init(schema: Schema, exportJSONLines: [UInt8]) throws {
        self.schema = schema
        var byID: [String: JSONValue] = [:]
        for line in String(decoding: exportJSONLines, as: UTF8.self).split(separator: "\n") {
            let v = try JSONReader.parse(String(line))
            if case .string(let id)? = v["id"] { byID[id] = v }
        }
        objects = byID
    }

    func ids(from root: String, _ e: QueryExpression) -> Set<String> {
        let closure = Set(schema.entity(named: root)!.closure.map { schema.entities[$0].name })
        var out = Set<String>()
        for (id, o) in objects {
            guard case .string(let t)? = o["type"], closure.contains(t) else { continue }
            if eval(e, o) { out.insert(id) }
        }
        return out
    }

    enum Found { case missing, value(JSONValue) }

    func lookup(_ names: ArraySlice<String>, _ o: JSONValue) -> Found {
        guard let data = o["data"], case .object(let members) = data else { return .missing }
        guard let m = members.first(where: { $0.key == names.first! }) else { return .missing }
        return follow(names.dropFirst(), m.value)
    }

    func follow(_ rest: ArraySlice<String>, _ v: JSONValue) -> Found {
        guard let next = rest.first else { return .value(v) }
        switch v {
        case .null: return .value(.null)
        case .object:
            if case .string(let id)? = v["id"], v["data"] == nil, let target = objects[id] {
                return lookup(rest, target)
            }
            guard case .object(let fields) = v, let f = fields.first(where: { $0.key == next }) else { return .missing }
            return follow(rest.dropFirst(), f.value)
        default: return .missing
        }
    }

    func eval(_ e: QueryExpression, _ o: JSONValue) -> Bool {
        switch e {
        case .constant(let b): return b
        case .and(let xs): return xs.allSatisfy { eval($0, o) }
        case .or(let xs): return xs.contains { eval($0, o) }
        case .not(let x): return !eval(x, o)
        case .isType(let name, let exact, _):
            guard case .string(let t)? = o["type"] else { return false }
            if exact { return t == name }
            return schema.entity(named: name)!.closure.map { schema.entities[$0].name }.contains(t)
        case .comparison(let path, let op, let lit):
            guard case .value(let v) = lookup(path.names[...], o) else { return false }
            return compare(v, op, lit)
        case .inList(let path, let items):
            guard case .value(let v) = lookup(path.names[...], o) else { return false }
            return items.contains { compare(v, .equal, $0) }
        case .count(let path, let op, let lit):
            guard case .value(.array(let items)) = lookup(path.names[...], o) else { return false }
            return compare(.int(Int64(items.count)), op, lit)
        case .quantified(let all, let inner):
            guard case .comparison(let path, let op, let lit) = inner else { return false }
            guard case .value(.array(let items)) = lookup(path.names.prefix(1), o) else {
                if case .value(.null) = lookup(path.names.prefix(1), o) { return all }
                return false
            }
            let results = items.map { item -> Bool in
                if path.names.count == 1 { return compare(item, op, lit) }
                guard case .value(let v) = follow(path.names.dropFirst(), item) else { return false }
                return compare(v, op, lit)
            }
            return all ? results.allSatisfy { $0 } : results.contains(true)
        }
    }

    func fold(_ s: String) -> String {
        s.folding(options: [.caseInsensitive, .diacriticInsensitive], locale: nil).lowercased()
    }

    func compare(_ v: JSONValue, _ op: ComparisonOperator, _ lit: QueryLiteral) -> Bool {
        if case .null = lit.kind {
            let isNil = v == .null
            return op == .equal ? isNil : op == .notEqual ? !isNil : false
        }
        if v == .null { return op == .notEqual }
        func order<T: Comparable>(_ a: T, _ b: T) -> Bool {
            switch op {
            case .equal: return a == b
            case .notEqual: return a != b
            case .less: return a < b
            case .lessOrEqual: return a <= b
            case .greater: return a > b
            case .greaterOrEqual: return a >= b
            default: return false
            }
        }
        switch (v, lit.kind) {
        case (.string(let s), .date(let d)):
            return order(ISODate.parse(s)!, d)
        case (.string(let s), .string(let l)):
            switch op {
            case .contains: return l.isEmpty || fold(s).contains(fold(l))
            case .beginsWith: return fold(s).hasPrefix(fold(l))
            case .equal: return s == l
            case .notEqual: return s != l
            // Text orders by its Unicode scalars after NFC (the README's rule; not Swift's `<`,
            // which is not consistent for text mixing composed and decomposed characters).
            default: return order(NFCScalars(s), NFCScalars(l))
            }
        case (.int(let i), .number(let d, _)): return order(Double(i), d)
        case (.double(let x), .number(let d, _)): return order(x, d)
        case (.bool(let b), .bool(let l)): return op == .equal ? b == l : op == .notEqual ? b != l : false
        default: return op == .notEqual
        }
    }
}

/// A string as the query language orders it: the values of its Unicode
/// scalars after NFC normalisation, compared one by one.
struct NFCScalars: Comparable {
    let values: [UInt32]

    init(_ s: String) {
        values = s.precomposedStringWithCanonicalMapping.unicodeScalars.map(\.value)
    }

    static func < (a: NFCScalars, b: NFCScalars) -> Bool {
        a.values.lexicographicallyPrecedes(b.values)
    }
}
