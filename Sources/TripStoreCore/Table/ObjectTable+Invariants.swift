import TripStoreFormat
import TripStoreSystem

extension ObjectTable {
    /// The references that break the table's invariants: to a row with no
    /// live object, to an object of the wrong type, or one side of a pair
    /// without the other. A snapshot runs it before it is written, so it
    /// reads every row on every core, straight from the records; `lists` is
    /// the table's lists laid flat, if the caller has made them already. At
    /// most `limit` are described, the first in row order.
    func referenceProblems(limit: Int = 20, lists flat: FlatLists? = nil) -> [String] {
        // Reading a row of an image checks it, which changes the table: the
        // workers may only read, so every piece is checked first. A table
        // whose image fails its checks is read here, one row at a time.
        guard checkEverything() else {
            var rows: [RowID] = []
            rows.reserveCapacity(count)
            forEachEntity { row, _ in rows.append(row) }
            return referenceProblems(of: rows, limit: limit)
        }
        let lists = flat ?? FlatLists(self.lists)
        let view = readView, schema = self.schema
        let found = withExtendedLifetime(lists) {
            Parallel.mapPieces(rowCount, parallelFrom: 1 << 15) { [listView = lists.view] in
                let rules = ReferenceRules(schema.privateCopy())
                return { range in rules.findings(in: range, table: view, lists: listView, limit: limit) }
            }
        }
        var problems: [String] = []
        for f in found.joined() {
            guard problems.count < limit else { break }
            problems.append(describe(f))
        }
        return problems
    }

    /// The same, for the references held by these rows (deleted rows are
    /// skipped), read through the table on this thread: a commit's few rows.
    func referenceProblems<S: Sequence<RowID>>(of rows: S, limit: Int = 20) -> [String] {
        let rules = referenceRules
        var problems: [String] = []
        for row in rows {
            guard problems.count < limit else { break }
            for f in rules.findings(of: row, table: self, lists: { self.lists[$0] }) {
                problems.append(describe(f))
            }
        }
        return Array(problems.prefix(limit))
    }

    private func describe(_ f: ReferenceRules.Finding) -> String {
        let e = schema.entities[entity(at: f.row) ?? 0]
        let name = "\(e.name) '\(id(at: f.row) ?? "?")'.\(e.properties[f.slot].name)"
        switch f.kind {
        case .twice:
            return "\(name) holds the same object twice"
        case .missing:
            return "\(name) points at a missing object ('\(recordedID(f.target) ?? "?")')"
        case .wrongType(let te):
            return "\(name) points at a \(schema.entities[te].name)"
        case .notHeldBack(let te, let inverse):
            return "\(name) holds '\(id(at: f.target) ?? "?")', whose \(schema.entities[te].properties[inverse].name) does not hold it back"
        }
    }
}

/// What a reference must satisfy, per entity: its relationship slots, the
/// types each may point at, and the inverse slot that must point back.
struct ReferenceRules: Sendable {
    struct Finding: Sendable {
        enum Kind: Sendable { case twice, missing, wrongType(Int), notHeldBack(Int, inverse: Int) }
        var row: RowID
        var slot: Int
        var target: RowID
        var kind: Kind
    }

    struct Rule {
        var slot: Int
        var destination: Int
        var inverse: Int?
    }

    let rules: [[Rule]]
    /// `kinds[destination * entityCount + entity]`: whether an entity is a kind of the destination.
    let kinds: [Bool]
    let entityCount: Int

    init(_ schema: Schema) {
        rules = schema.entities.map { e in
            e.properties.compactMap { p in p.relationship.map { Rule(slot: p.slot, destination: $0.destination, inverse: $0.inverseSlot) } }
                .sorted { $0.slot < $1.slot }
        }
        entityCount = schema.entities.count
        var kinds = [Bool](repeating: false, count: entityCount * entityCount)
        for d in 0..<entityCount {
            for e in 0..<entityCount { kinds[d * entityCount + e] = schema.isKind(e, of: d) }
        }
        self.kinds = kinds
    }

    /// The findings of the rows in `range`, in row order, stopping once
    /// `limit` are found (no later piece can need more than that either).
    /// The targets are all over the table: a row's record is loaded 16 rows
    /// ahead, its targets' columns 8 ahead and their records 4 ahead, as
    /// the snapshot's encoders do.
    func findings(in range: Range<Int>, table: ObjectTable.ReadView, lists: FlatLists.View, limit: Int) -> [Finding] {
        var out: [Finding] = []
        let capacity = 32
        var ring = [RowID](repeating: 0, count: 8 * capacity), counts = [Int](repeating: 0, count: 8)
        for i in range {
            guard out.count < limit else { break }
            if i + 16 < range.upperBound { table.prefetch(RowID(i + 16)) }
            if i + 8 < range.upperBound {
                let k = (i + 8) & 7
                counts[k] = 0
                forEachTarget(of: RowID(i + 8), table: table, lists: lists) { t in
                    table.prefetchColumns(t)
                    if counts[k] < capacity {
                        ring[k * capacity + counts[k]] = t
                        counts[k] += 1
                    }
                }
            }
            if i + 4 < range.upperBound && i + 4 >= range.lowerBound + 8 {
                let k = (i + 4) & 7
                for n in 0..<counts[k] { table.prefetch(ring[k * capacity + n]) }
            }
            out.append(contentsOf: findings(of: RowID(i), table: table, lists: { lists[$0] }))
        }
        return out
    }

    /// Calls `body` with every row a row's relationships point at.
    private func forEachTarget(of row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, _ body: (RowID) -> Void) {
        forEachRelationship(of: row, table: table) { _, p in
            switch p.load(as: UInt8.self) {
            case RecordTag.toOne: body(Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self)))
            case RecordTag.toMany: for t in lists[Int(Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self)))] { body(t) }
            default: break
            }
        }
    }

    /// Calls `body` with each relationship rule of a row's entity and where its slot's value starts in the row's record.
    private func forEachRelationship<T: ReferenceReading>(of row: RowID, table: T, _ body: (Rule, UnsafeRawPointer) -> Void) {
        guard let entity = table.entity(at: row), entity < rules.count, !rules[entity].isEmpty else { return }
        var p = RecordReader.firstSlot(table.record(row)), at = 0
        for rule in rules[entity] {
            while at < rule.slot {
                p = RecordReader.skip(p)
                at += 1
            }
            body(rule, p)
        }
    }

    /// One row's findings: per relationship slot, a duplicate first, then
    /// each target that is missing, of the wrong type, or does not point back.
    fileprivate func findings<T: ReferenceReading>(of row: RowID, table: T, lists: (Int) -> some Collection<RowID>) -> [Finding] {
        var out: [Finding] = []
        forEachRelationship(of: row, table: table) { rule, p in
            switch p.load(as: UInt8.self) {
            case RecordTag.toOne:
                let t = Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self))
                check(row, rule, t, table, lists, &out)
            case RecordTag.toMany:
                let targets = lists(Int(Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self))))
                if targets.count > 1, hasDuplicate(targets) {
                    out.append(Finding(row: row, slot: rule.slot, target: -1, kind: .twice))
                }
                for t in targets { check(row, rule, t, table, lists, &out) }
            default:
                break
            }
        }
        return out
    }

    private func hasDuplicate(_ targets: some Collection<RowID>) -> Bool {
        guard targets.count <= 16 else { return Set(targets).count != targets.count }
        var seen: [RowID] = []
        seen.reserveCapacity(16)
        for t in targets {
            if seen.contains(t) { return true }
            seen.append(t)
        }
        return false
    }

    private func check<T: ReferenceReading>(_ row: RowID, _ rule: Rule, _ t: RowID, _ table: T,
                                            _ lists: (Int) -> some Collection<RowID>, _ out: inout [Finding]) {
        guard let te = table.entity(at: t) else {
            out.append(Finding(row: row, slot: rule.slot, target: t, kind: .missing))
            return
        }
        guard kinds[rule.destination * entityCount + te] else {
            out.append(Finding(row: row, slot: rule.slot, target: t, kind: .wrongType(te)))
            return
        }
        guard let inverse = rule.inverse else { return }
        let back = RecordReader.slot(table.record(t), inverse)
        let holds: Bool
        switch back.load(as: UInt8.self) {
        case RecordTag.toOne: holds = Int32(littleEndian: (back + 1).loadUnaligned(as: Int32.self)) == row
        case RecordTag.toMany: holds = lists(Int(Int32(littleEndian: (back + 1).loadUnaligned(as: Int32.self)))).contains(row)
        default: holds = false
        }
        if !holds { out.append(Finding(row: row, slot: rule.slot, target: t, kind: .notHeldBack(te, inverse: inverse))) }
    }
}

/// The two ways the rules read a table: the table itself, on its own
/// thread, and its read view, on a worker's.
fileprivate protocol ReferenceReading {
    func entity(at row: RowID) -> Int?
    func record(_ row: RowID) -> UnsafeRawPointer
}

extension ObjectTable: ReferenceReading {}
extension ObjectTable.ReadView: ReferenceReading {}
