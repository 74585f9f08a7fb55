import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A predicate with every name resolved against a schema: ready to test objects.
indirect enum CompiledPredicate {
    case constant(Bool)
    /// True for objects whose concrete entity is set in the mask.
    case isType(mask: [Bool], entities: [Int], exact: Bool, name: String)
    case compare(PropertyAccess, ValueTest)
    /// `in [...]`: any of the tests.
    case anyOf(PropertyAccess, [ValueTest])
    /// `any`/`all` over a to-many relationship or an array attribute.
    case quantified(all: Bool, collection: PropertyAccess, element: ElementTest)
    case count(PropertyAccess, ComparisonOperator, Int)
    case and([CompiledPredicate])
    case or([CompiledPredicate])
    case not(CompiledPredicate)
}

/// What `any`/`all` test on each element.
enum ElementTest {
    /// Elements are related objects: follow `path` from each, then test.
    case object(PropertyAccess, [ValueTest])
    /// Elements are array values: test each.
    case value([ValueTest])
}

/// One step of a path: a property of an object (slot per concrete entity,
/// -1 where the entity lacks it) or a field of an embedded value.
enum PathStep {
    case property([Int32])
    case field(Int)
}

/// How to reach a value from an object, and where an index may help.
struct PropertyAccess {
    var steps: [PathStep]
    var text: String
    /// The index over the first step, when the path is one indexed attribute.
    var index: ValueIndex?
}

/// A comparison of a value with a literal, already in the value's type.
struct ValueTest {
    enum Literal {
        case null
        case string(String, folded: String)
        /// An `Int` attribute's literal when it is a whole number an `Int` holds.
        case integer(Int64)
        case number(Double)
        case bool(Bool)
    }

    var op: ComparisonOperator
    var literal: Literal
    var text: String

    /// The literal as an index key, for index lookups.
    var key: IndexKey? {
        switch literal {
        case .null: return nil
        case .string(let s, _): return .string(s)
        case .integer(let i): return .integer(i)
        case .number(let d): return .number(d)
        case .bool(let b): return .bool(b)
        }
    }
}

/// The result of following a path: the entity lacks the property, or a value.
enum Resolved {
    case missing
    case value(Value)
}

/// Where a predicate reads objects from: the store's table, or a
/// transaction's view of it with its pending changes.
protocol RowValues {
    func entity(at row: RowID) -> Int?
    func value(at row: RowID, slot: Int) -> Value
}

extension ObjectTable: RowValues {}
extension TransactionBuilder: RowValues {}

extension PropertyAccess {
    /// The value at the end of the path from a live row; each step decodes
    /// one slot of a record, never a whole object.
    func resolve<Source: RowValues>(_ row: RowID, _ table: Source) -> Resolved {
        var row = row
        var value = Value.null
        var k = 0
        while k < steps.count {
            switch steps[k] {
            case .property(let slots):
                guard let entity = table.entity(at: row) else { return .value(.null) }
                let s = slots[entity]
                if s < 0 { return .missing }
                value = table.value(at: row, slot: Int(s))
            case .field(let i):
                guard case .embedded(let fields) = value else { return .value(.null) }
                value = fields[i]
            }
            k += 1
            if k < steps.count, case .property = steps[k] {
                // The next step reads a related object.
                guard case .toOne(let r) = value, table.entity(at: r) != nil else { return .value(.null) }
                row = r
            }
        }
        return .value(value)
    }
}

extension ValueTest {
    /// Swift's optional semantics: `== nil` is true for nil, `!=` is true
    /// against nil, ordering and text tests with nil are false.
    func test(_ v: Value) -> Bool {
        let isNil: Bool
        switch v {
        case .null: isNil = true
        default: isNil = false
        }
        if case .null = literal {
            switch op {
            case .equal: return isNil
            case .notEqual: return !isNil
            default: return false
            }
        }
        if isNil { return op == .notEqual }
        switch (v, literal) {
        case (.string(let s), .string(let l, let folded)):
            switch op {
            case .equal: return s == l
            case .notEqual: return s != l
            // In the order indexes keep (`IndexKey.textPrecedes`), so that a scan and an index agree.
            case .less: return IndexKey.textPrecedes(s, l)
            case .lessOrEqual: return !IndexKey.textPrecedes(l, s)
            case .greater: return IndexKey.textPrecedes(l, s)
            case .greaterOrEqual: return !IndexKey.textPrecedes(s, l)
            case .contains: return TextFolding.contains(TextFolding.fold(s), folded)
            case .beginsWith: return TextFolding.hasPrefix(TextFolding.fold(s), folded)
            }
        case (.int(let i), .integer(let l)): return compare(i == l ? 0 : i < l ? -1 : 1)
        case (.int(let i), .number(let l)): return compare(ExactNumbers.compare(i, l))
        case (.double(let d), .integer(let l)): return compare(d, Double(l))
        case (.double(let d), .number(let l)): return compare(d, l)
        case (.date(let d), .number(let l)): return compare(d, l)
        case (.bool(let b), .bool(let l)):
            switch op {
            case .equal: return b == l
            case .notEqual: return b != l
            default: return false
            }
        case (.toOne, _), (.toMany, _), (.embedded, _): return op == .notEqual
        default: return op == .notEqual
        }
    }

    /// `op` applied to an exact comparison's sign.
    func compare(_ sign: Int) -> Bool {
        switch op {
        case .equal: return sign == 0
        case .notEqual: return sign != 0
        case .less: return sign < 0
        case .lessOrEqual: return sign <= 0
        case .greater: return sign > 0
        case .greaterOrEqual: return sign >= 0
        case .contains, .beginsWith: return false
        }
    }

    func compare(_ a: Double, _ b: Double) -> Bool {
        switch op {
        case .equal: return a == b
        case .notEqual: return a != b
        case .less: return a < b
        case .lessOrEqual: return a <= b
        case .greater: return a > b
        case .greaterOrEqual: return a >= b
        case .contains, .beginsWith: return false
        }
    }
}

extension CompiledPredicate {
    /// Whether the live object at `row` satisfies the predicate.
    func matches<Source: RowValues>(_ o: RowID, _ table: Source) -> Bool {
        switch self {
        case .constant(let b): return b
        case .isType(let mask, _, _, _): return table.entity(at: o).map { mask[$0] } ?? false
        case .compare(let access, let test):
            guard case .value(let v) = access.resolve(o, table) else { return false }
            return test.test(v)
        case .anyOf(let access, let tests):
            guard case .value(let v) = access.resolve(o, table) else { return false }
            return tests.contains { $0.test(v) }
        case .quantified(let all, let collection, let element):
            guard case .value(let v) = collection.resolve(o, table) else { return false }
            switch (v, element) {
            case (.toMany(let rows), .object(let path, let tests)):
                for r in rows {
                    guard table.entity(at: r) != nil else { continue }
                    var ok = false
                    if case .value(let cv) = path.resolve(r, table) { ok = tests.contains { $0.test(cv) } }
                    if all && !ok { return false }
                    if !all && ok { return true }
                }
                return all
            case (.array(let items), .value(let tests)):
                for item in items {
                    let ok = tests.contains { $0.test(item) }
                    if all && !ok { return false }
                    if !all && ok { return true }
                }
                return all
            case (.null, _):
                return all
            default:
                return false
            }
        case .count(let access, let op, let n):
            guard case .value(let v) = access.resolve(o, table) else { return false }
            let c: Int
            switch v {
            case .toMany(let rows): c = rows.count
            case .array(let items): c = items.count
            default: return false
            }
            return ValueTest(op: op, literal: .number(Double(n)), text: "").compare(Double(c), Double(n))
        case .and(let ps):
            for p in ps where !p.matches(o, table) { return false }
            return true
        case .or(let ps):
            for p in ps where p.matches(o, table) { return true }
            return false
        case .not(let p):
            return !p.matches(o, table)
        }
    }
}
