import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// One way to find candidate rows for a conjunct, with its cost known up front.
struct AccessPath {
    var operation: String
    var detail: String
    var estimate: Int
    /// True when every candidate satisfies the conjunct (no need to test it again).
    var exact: Bool
    /// Entities the candidates may belong to (to know whether a scope check is needed).
    var entities: Set<Int>
    var rows: () -> [RowID]
}

/// Chooses the most selective index for a predicate and runs the query:
/// the driver's candidates are tested against the remaining conjuncts, and a
/// sort on an indexed key with a limit walks that index and stops early.
struct QueryPlanner {
    let store: Store
    let scope: [Int]
    let predicate: CompiledPredicate
    let schema: Schema
    /// False: answer `is T` by testing each object instead of the type index.
    var useTypeIndex = true

    var indexes: StoreIndexes { store.indexes }
    var table: ObjectTable { store.table }

    func conjuncts() -> [CompiledPredicate] {
        if case .and(let ps) = predicate { return ps.flatMap { p -> [CompiledPredicate] in
            if case .and(let inner) = p { return inner }
            return [p]
        } }
        if case .constant(true) = predicate { return [] }
        return [predicate]
    }

    func typeAccess(_ entities: [Int], label: String) -> AccessPath {
        let members = entities.filter { scope.contains($0) }
        // The table's live counts: a plan (or a count) reads no type rows.
        let count = members.reduce(0) { $0 + table.countByEntity[$1] }
        return AccessPath(operation: "type index", detail: label, estimate: count, exact: true, entities: Set(members)) {
            if members.count == 1 { return indexes.rows(of: members[0]) }
            var out: [RowID] = []
            out.reserveCapacity(count)
            for m in members { out.append(contentsOf: indexes.rows(of: m)) }
            return out
        }
    }

    func access(_ p: CompiledPredicate) -> AccessPath? {
        switch p {
        case .isType(_, let entities, let exact, let name):
            guard useTypeIndex else { return nil }
            return typeAccess(entities, label: "is \(exact ? "exactly " : "")\(QueryLexer.quoted(name))")
        case .compare(let a, let test):
            guard let idx = a.index else { return nil }
            return indexAccess(idx, tests: [test], path: a.text)
        case .anyOf(let a, let tests):
            guard let idx = a.index, tests.allSatisfy({ $0.op == .equal }) else { return nil }
            return indexAccess(idx, tests: tests, path: a.text)
        case .or(let ps):
            var parts: [AccessPath] = []
            for q in ps {
                guard let a = access(q) else { return nil }
                parts.append(a)
            }
            return AccessPath(operation: "union", detail: parts.map { "\($0.operation) \($0.detail)" }.joined(separator: " | "),
                              estimate: parts.reduce(0) { $0 + $1.estimate }, exact: parts.allSatisfy(\.exact),
                              entities: parts.reduce(into: Set<Int>()) { $0.formUnion($1.entities) }) {
                var seen = Set<RowID>()
                var out: [RowID] = []
                for part in parts { for r in part.rows() where seen.insert(r).inserted { out.append(r) } }
                return out
            }
        default:
            return nil
        }
    }

    func indexAccess(_ idx: ValueIndex, tests: [ValueTest], path: String) -> AccessPath? {
        var keys: [IndexKey] = []
        var includeNull = false
        var operation = "hash index"
        for test in tests {
            switch (test.op, test.literal) {
            case (.equal, .null): includeNull = true
            case (.equal, _): if let k = test.key { keys.append(k) }
            case (.less, _), (.lessOrEqual, _), (.greater, _), (.greaterOrEqual, _):
                guard let k = test.key, tests.count == 1 else { return nil }
                let bounds = test.op == .greater || test.op == .greaterOrEqual
                    ? KeyBounds(lower: k, lowerInclusive: test.op == .greaterOrEqual)
                    : KeyBounds(upper: k, upperInclusive: test.op == .lessOrEqual)
                let estimate = idx.count(bounds)
                let label = "\(schema.entities[idx.entity].name).\(idx.name) \(test.op.rawValue) \(test.text) (\(idx.distinctCount(bounds)) of \(idx.distinctKeys) values)"
                return AccessPath(operation: "range index", detail: label, estimate: estimate, exact: true,
                                  entities: Set(schema.entities[idx.entity].closure)) {
                    idx.rows(bounds)
                }
            case (.contains, .string(_, let folded)):
                operation = "text index"
                keys.append(contentsOf: idx.textMatches(folded, prefix: false))
            case (.beginsWith, .string(_, let folded)):
                operation = "text index"
                keys.append(contentsOf: idx.textMatches(folded, prefix: true))
            default:
                return nil
            }
        }
        // `in ["a", "a"]` (or values equal once normalised) names one key once.
        var seenKeys = Set<IndexKey>()
        keys = keys.filter { seenKeys.insert($0).inserted }
        let estimate = keys.reduce(includeNull ? idx.rowsWithoutValue.count : 0) { $0 + idx.rows($1).count }
        let label = "\(schema.entities[idx.entity].name).\(idx.name) " + tests.map { "\($0.op.rawValue) \($0.text)" }.joined(separator: ", ")
            + " (\(keys.count + (includeNull ? 1 : 0)) of \(idx.distinctKeys) values)"
        return AccessPath(operation: operation, detail: label, estimate: estimate, exact: true,
                          entities: Set(schema.entities[idx.entity].closure)) {
            var out: [RowID] = []
            out.reserveCapacity(estimate)
            if includeNull { out.append(contentsOf: idx.rowsWithoutValue) }
            for k in keys { out.append(contentsOf: idx.rows(k)) }
            return out
        }
    }

    /// Runs the query. With `countOnly`, skips sorting and materialising where it can.
    /// How many index answers besides the driver's are intersected as bitsets.
    static let maximumBitsets = 8

    func run(sort: [(PropertyAccess, Bool)], limit: Int?, offset: Int, countOnly: Bool) -> QueryResult {
        var plan = QueryPlan()
        let parts = conjuncts()
        let options = parts.enumerated().compactMap { i, p in access(p).map { (i, $0) } }
        let scopeName = schema.entities[scope[0]].name
        var driver: AccessPath
        // Which conjuncts are still to be tested row by row (a flag each:
        // a query of many conjuncts is planned in time linear in them).
        var isResidual = Array(repeating: true, count: parts.count)
        let best = options.min(by: { $0.1.estimate < $1.1.estimate })
        if let best {
            driver = best.1
            if best.1.exact { isResidual[best.0] = false }
        } else {
            driver = typeAccess(scope, label: "scan of \(scopeName)" + (scope.count > 1 ? " and its subclasses" : ""))
            driver.operation = "scan"
        }
        // Other conjuncts that an index answers exactly are intersected as bitsets.
        var bitsets: [RowBitset] = []
        var bitsetLabels: [String] = []
        if let best, best.1.exact, best.1.estimate > 0, options.count > 1 {
            // A bitset costs a bit per row of the table: the few most selective
            // are worth it; further conjuncts are tested on the rows left.
            var intersected = options.filter { $0.0 != best.0 && $0.1.exact && $0.1.operation != "union" }
            if intersected.count > QueryPlanner.maximumBitsets {
                intersected = Array(intersected.sorted { $0.1.estimate < $1.1.estimate }.prefix(QueryPlanner.maximumBitsets))
                intersected.sort { $0.0 < $1.0 }
            }
            for (i, option) in intersected {
                bitsets.append(RowBitset(option.rows(), capacity: table.rowCount))
                bitsetLabels.append("\(option.operation) \(option.detail)")
                isResidual[i] = false
            }
        }
        var residual: [CompiledPredicate] = []
        for i in parts.indices where isResidual[i] { residual.append(parts[i]) }
        let scopeSet = Set(scope)
        let needsScope = !driver.entities.isSubset(of: scopeSet)
        var mask = Array(repeating: false, count: schema.entities.count)
        for e in scope { mask[e] = true }
        if needsScope { residual.insert(.isType(mask: mask, entities: scope, exact: false, name: scopeName), at: 0) }
        let check = CompiledPredicate.and(residual)

        // A sort on an indexed key with a small limit walks the index in order.
        if let limit, !countOnly, let first = sort.first, let idx = first.0.index,
           driver.estimate > 4 * (limit + offset), sortIndexCovers(idx) {
            plan.steps.append(.init(operation: "sort index", detail: "\(schema.entities[idx.entity].name).\(idx.name) \(first.1 ? "descending" : "ascending"), testing each row: " + describe(parts), estimated: nil, actual: nil))
            let (rows, examined) = walk(idx, descending: first.1, rest: Array(sort.dropFirst()), check: .and(parts), mask: mask, need: limit + offset)
            plan.steps[0].actual = examined
            let page = Array(rows.dropFirst(offset).prefix(limit))
            plan.steps.append(.init(operation: "result", detail: "\(page.count) rows", estimated: nil, actual: page.count))
            return QueryResult(rows: page, total: nil, plan: plan)
        }

        plan.steps.append(.init(operation: driver.operation, detail: driver.detail, estimated: driver.estimate, actual: nil))
        if countOnly && residual.isEmpty && bitsets.isEmpty && driver.operation != "union" {
            plan.steps[0].actual = driver.estimate
            plan.steps.append(.init(operation: "count", detail: "\(driver.estimate) rows", estimated: nil, actual: driver.estimate))
            return QueryResult(rows: [], total: driver.estimate, plan: plan)
        }
        var candidates = driver.rows()
        plan.steps[0].actual = candidates.count
        if !bitsets.isEmpty {
            candidates = candidates.filter { r in bitsets.allSatisfy { $0.contains(r) } }
            plan.steps.append(.init(operation: "intersect", detail: bitsetLabels.joined(separator: " & "), estimated: nil, actual: candidates.count))
        }
        var matched: [RowID] = []
        if residual.isEmpty {
            matched = candidates
        } else {
            matched.reserveCapacity(min(candidates.count, 1 << 16))
            for r in candidates {
                if table.entity(at: r) != nil, check.matches(r, table) { matched.append(r) }
            }
            plan.steps.append(.init(operation: "filter", detail: describe(residual), estimated: nil, actual: matched.count))
        }
        let total = matched.count
        if countOnly {
            plan.steps.append(.init(operation: "count", detail: "\(total) rows", estimated: nil, actual: total))
            return QueryResult(rows: [], total: total, plan: plan)
        }
        sortRows(&matched, by: sort, need: limit.map { $0 + offset })
        plan.steps.append(.init(operation: "sort", detail: sort.isEmpty ? "by id" : "by " + sort.map { ($0.1 ? "-" : "") + $0.0.text }.joined(separator: ", ") + ", then id", estimated: nil, actual: nil))
        let page = Array(matched.dropFirst(offset).prefix(limit ?? Int.max))
        plan.steps.append(.init(operation: "result", detail: "\(page.count) rows", estimated: nil, actual: page.count))
        return QueryResult(rows: page, total: total, plan: plan)
    }

    /// Every scope entity that has the sort property reaches it through this index.
    func sortIndexCovers(_ idx: ValueIndex) -> Bool {
        scope.allSatisfy { e in
            guard let p = schema.entities[e].property(named: idx.name) else { return true }
            return p.declaringEntity == idx.entity
        }
    }

    func walk(_ idx: ValueIndex, descending: Bool, rest: [(PropertyAccess, Bool)], check: CompiledPredicate,
              mask: [Bool], need: Int) -> ([RowID], Int) {
        var out: [RowID] = []
        var examined = 0
        func take(_ rows: [RowID]) {
            var group: [RowID] = []
            for r in rows {
                examined += 1
                guard let e = table.entity(at: r), mask[e], check.matches(r, table) else { continue }
                group.append(r)
            }
            if group.count > 1 { sortRows(&group, by: rest, need: nil) }
            out.append(contentsOf: group)
        }
        // nil (or a type without the property) sorts first ascending, last descending.
        let nilGroup: () -> [RowID] = {
            var rows = idx.rowsWithoutValue
            for e in scope where schema.entities[e].property(named: idx.name) == nil { rows.append(contentsOf: indexes.rows(of: e)) }
            return rows
        }
        if !descending { take(nilGroup()) }
        if out.count < need {
            idx.forEachValue(descending: descending) { rows in
                take(rows)
                return out.count < need
            }
        }
        if descending && out.count < need { take(nilGroup()) }
        return (out, examined)
    }

    /// Sorts by the keys, nil first ascending and last descending, ties by id ascending.
    func sortRows(_ rows: inout [RowID], by keys: [(PropertyAccess, Bool)], need: Int?) {
        // Rows loaded from a snapshot are in id order already.
        let ordered = table.idOrderedRows
        let rowsAreIDOrdered = rows.allSatisfy { Int($0) < ordered }
        if keys.isEmpty && rowsAreIDOrdered {
            rows.sort()
            return
        }
        let ids = rowsAreIDOrdered ? [] : rows.map { table.id(at: $0) ?? "" }
        func idLess(_ a: Int, _ b: Int) -> Bool {
            rowsAreIDOrdered ? rows[a] < rows[b] : ObjectTable.byteLess(ids[a], ids[b])
        }
        if keys.isEmpty {
            var order = Array(rows.indices)
            order.sort(by: idLess)
            rows = order.map { rows[$0] }
            return
        }
        rows = QueryPlanner.order(rows, by: keys, in: table, idLess: idLess).map { rows[$0] }
    }

    /// The positions of `rows` in sorted order: by the keys' values, nil
    /// first ascending and last descending, ties by `idLess`.
    static func order<Source: RowValues>(_ rows: [RowID], by keys: [(PropertyAccess, Bool)], in source: Source,
                                         idLess: (Int, Int) -> Bool) -> [Int] {
        let values: [[IndexKey?]] = rows.map { r in
            keys.map { k in
                if case .value(let v) = k.0.resolve(r, source) { return IndexKey(v) }
                return nil
            }
        }
        // Text in its normal form, made once per row rather than per comparison (see `IndexKey.textPrecedes`).
        let texts: [[[UInt8]?]] = values.map { row in
            row.map { key in
                guard case .string(let s)? = key else { return nil }
                return IndexKey.normalizedText(s)
            }
        }
        var order = Array(rows.indices)
        order.sort { a, b in
            for (i, k) in keys.enumerated() {
                let x = values[a][i], y = values[b][i]
                if x == y { continue }
                let less: Bool
                switch (x, y) {
                case (nil, _): less = true
                case (_, nil): less = false
                case (let x?, let y?):
                    if let tx = texts[a][i], let ty = texts[b][i] { less = tx.lexicographicallyPrecedes(ty) } else { less = x < y }
                }
                return k.1 ? !less : less
            }
            return idLess(a, b)
        }
        return order
    }

    func describe(_ ps: [CompiledPredicate]) -> String {
        ps.map(describe).joined(separator: " && ")
    }

    func describe(_ p: CompiledPredicate) -> String {
        switch p {
        case .constant(let b): return "\(b)"
        case .isType(_, _, let exact, let name): return "is \(exact ? "exactly " : "")\(QueryLexer.quoted(name))"
        case .compare(let a, let t): return "\(a.text) \(t.op.rawValue) \(t.text)"
        case .anyOf(let a, let ts): return "\(a.text) in [\(ts.map(\.text).joined(separator: ", "))]"
        case .quantified(let all, let c, _): return "\(all ? "all" : "any") \(c.text) …"
        case .count(let a, let op, let n): return "count(\(a.text)) \(op.rawValue) \(n)"
        case .and(let ps): return "(" + describe(ps) + ")"
        case .or(let ps): return "(" + ps.map(describe).joined(separator: " || ") + ")"
        case .not(let p): return "!" + describe(p)
        }
    }
}
