import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension TransactionBuilder {
    /// What would be wrong with the store if this transaction were applied:
    /// references to missing objects or of the wrong type, and pairs whose
    /// two sides disagree. Only what the transaction touches is checked, so
    /// the cost follows the transaction's size, not the store's.
    func integrityProblems(limit: Int = 20) -> [String] {
        var problems: [String] = []
        var bigLists: [Int64: Set<RowID>] = [:]
        func holds(_ row: RowID, _ slot: Int, _ target: RowID) -> Bool {
            switch value(at: row, slot: slot) {
            case .toOne(let t): return t == target
            case .toMany(let l) where l.count <= 16: return l.contains(target)
            case .toMany(let l):
                let key = Int64(row) << 16 | Int64(slot)
                if let s = bigLists[key] { return s.contains(target) }
                let s = Set(l)
                bigLists[key] = s
                return s.contains(target)
            default: return false
            }
        }
        func name(_ row: RowID, _ slot: Int) -> String {
            guard let e = entity(at: row) ?? table.entity(at: row) else { return "an object" }
            let entity = schema.entities[e]
            return "\(entity.name) '\(recordedID(row))'.\(entity.properties[slot].name)"
        }
        // Per entity, what to check in each slot (plain values, so walking them
        // copies no strings); and which entity may stand for which.
        let plans: [[SlotCheck]] = schema.entities.map { e in e.properties.map(SlotCheck.init) }
        let kinds: [[Bool]] = schema.entities.map { e in schema.entities.map { schema.isKind(e.id, of: $0.id) } }
        func hasDuplicates(_ l: [RowID]) -> Bool {
            if l.count <= 16 {
                for i in l.indices.dropFirst() where l[..<i].contains(l[i]) { return true }
                return false
            }
            return Set(l).count != l.count
        }
        func checkLive(_ row: RowID, _ o: StoredObject) {
            let isNew = Int(row) >= base
            for check in plans[o.entity] {
                let slot = check.slot
                guard check.isRelationship else {
                    // Attributes: every one of a new object, the ones set on an existing one.
                    guard isNew || explicitSlots.contains(Int64(row) << 16 | Int64(slot)) else { continue }
                    if !check.fits(o.values[slot]), let a = schema.entities[o.entity].properties[slot].attribute,
                       !o.values[slot].fits(a.type, optional: a.isOptional) {
                        problems.append("\(name(row, slot)) would hold a value that is not \(a.isOptional ? "nil or " : "")\(ValueDecoding.expectation(a.type))")
                    }
                    continue
                }
                let rel = (isToMany: check.isToMany, destination: check.destination, inverseSlot: check.inverse)
                let now: [RowID]
                switch (o.values[slot], rel.isToMany) {
                case (.null, false): now = []
                case (.toOne(let t), false): now = [t]
                case (.toMany(let l), true):
                    now = l
                    if hasDuplicates(l) { problems.append("\(name(row, slot)) would hold the same object twice") }
                default:
                    problems.append("\(name(row, slot)) would hold something other than \(rel.isToMany ? "a list of references" : "a reference or nil")")
                    continue
                }
                for t in now {
                    guard let te = entity(at: t) else {
                        problems.append("\(name(row, slot)) would hold '\(recordedID(t))', which does not exist")
                        continue
                    }
                    if !kinds[te][rel.destination] {
                        problems.append("\(name(row, slot)) would hold a \(schema.entities[te].name), not a \(schema.entities[rel.destination].name)")
                    } else if let inv = rel.inverseSlot, !holds(t, inv, row) {
                        problems.append("\(name(row, slot)) would hold '\(recordedID(t))', whose \(schema.entities[te].properties[inv].name) would not hold it back")
                    }
                }
                // A reference this transaction dropped must be gone from the other side too.
                guard Int(row) < base, let inv = rel.inverseSlot else { continue }
                for t in table.value(at: row, slot: slot).rows where !now.contains(t) && entity(at: t) != nil && holds(t, inv, row) {
                    problems.append("\(name(t, inv)) would still hold '\(recordedID(row))', which no longer holds it back")
                }
            }
        }
        for m in missingTargets where entity(at: m.row) != nil && entity(at: m.target) == nil {
            problems.append("\(name(m.row, m.slot)) would hold '\(recordedID(m.target))', which does not exist")
        }
        for (i, o) in newObjects.enumerated() where problems.count < limit {
            let row = RowID(base + i)
            if let o, !deleted.contains(row) { checkLive(row, o) }
        }
        for row in changedOrder where problems.count < limit && !deleted.contains(row) {
            if let o = changed[row] { checkLive(row, o) }
        }
        for row in deletedOrder where Int(row) < base && problems.count < limit {
            guard let e = table.entity(at: row) else { continue }
            for p in schema.entities[e].properties {
                guard let inv = p.relationship?.inverseSlot else { continue }
                for t in table.value(at: row, slot: p.slot).rows where entity(at: t) != nil && holds(t, inv, row) {
                    problems.append("\(name(t, inv)) would still hold '\(recordedID(row))', which is deleted")
                }
            }
            for r in table.oneWay.referrers(of: row, in: table) + (addedOneWay[row] ?? [])
            where entity(at: r.row) != nil && holds(r.row, Int(r.slot), row) {
                problems.append("\(name(r.row, Int(r.slot))) would still hold '\(recordedID(row))', which is deleted")
            }
        }
        return Array(problems.prefix(limit))
    }

    /// The id a row has or had (also for deleted rows), for messages.
    func recordedID(_ row: RowID) -> String {
        if Int(row) >= base {
            let i = Int(row) - base
            return i < newObjects.count ? newObjects[i]?.id ?? "?" : "?"
        }
        return table.recordedID(row) ?? "?"
    }
}

/// What the integrity check looks at in one slot, as plain values.
private struct SlotCheck {
    var slot: Int
    var isRelationship = false
    var isToMany = false
    var destination = 0
    var inverse: Int?
    /// For a scalar attribute: its type (0 string, 1 int, 2 double, 3 bool, 4 date) and optionality; -1 otherwise.
    var scalar = -1
    var optional = false

    init(_ p: Property) {
        slot = p.slot
        if let r = p.relationship {
            isRelationship = true
            isToMany = r.isToMany
            destination = r.destination
            inverse = r.inverseSlot
        } else if let a = p.attribute {
            optional = a.isOptional
            switch a.type {
            case .string: scalar = 0
            case .int: scalar = 1
            case .double: scalar = 2
            case .bool: scalar = 3
            case .date: scalar = 4
            default: scalar = -1
            }
        }
    }

    /// True when a scalar attribute's value surely fits; false means "look closer".
    @inline(__always) func fits(_ v: Value) -> Bool {
        switch (scalar, v) {
        case (_, .null): return optional
        case (2, .double(let d)): return d.isFinite
        case (4, .date(let d)): return ISODate.isWritable(d)
        case (0, .string), (1, .int), (2, .int), (3, .bool): return true
        default: return false
        }
    }
}
