import TripStoreFormat

extension ObjectTable {
    /// The references that break the table's invariants: to a row with no
    /// live object, to an object of the wrong type, or one side of a pair
    /// without the other. Reads one slot at a time, so a snapshot can afford
    /// to run it before it is written. At most `limit` are described.
    func referenceProblems(limit: Int = 20) -> [String] {
        var rows: [RowID] = []
        rows.reserveCapacity(count)
        forEachEntity { row, _ in rows.append(row) }
        return referenceProblems(of: rows, limit: limit)
    }

    /// The same, for the references held by these rows (deleted rows are skipped).
    func referenceProblems<S: Sequence<RowID>>(of rows: S, limit: Int = 20) -> [String] {
        var problems: [String] = []
        var relationshipSlots: [[(slot: Int, rel: Relationship)]] = schema.entities.map { e in
            e.properties.compactMap { p in p.relationship.map { (p.slot, $0) } }
        }
        defer { relationshipSlots = [] }
        func holds(_ row: RowID, _ slot: Int, _ target: RowID) -> Bool {
            switch value(at: row, slot: slot) {
            case .toOne(let t): return t == target
            case .toMany(let l): return l.contains(target)
            default: return false
            }
        }
        func name(_ row: RowID, _ slot: Int) -> String {
            let e = schema.entities[entity(at: row) ?? 0]
            return "\(e.name) '\(id(at: row) ?? "?")'.\(e.properties[slot].name)"
        }
        for row in rows {
            guard problems.count < limit else { break }
            guard let entity = entity(at: row) else { continue }
            for (slot, rel) in relationshipSlots[entity] {
                let targets = value(at: row, slot: slot).rows
                if targets.count > 1, targets.count <= 16
                    ? targets.indices.dropFirst().contains(where: { targets[..<$0].contains(targets[$0]) })
                    : Set(targets).count != targets.count {
                    problems.append("\(name(row, slot)) holds the same object twice")
                }
                for t in targets {
                    guard let te = self.entity(at: t) else {
                        problems.append("\(name(row, slot)) points at a missing object ('\(recordedID(t) ?? "?")')")
                        continue
                    }
                    if !schema.isKind(te, of: rel.destination) {
                        problems.append("\(name(row, slot)) points at a \(schema.entities[te].name)")
                    } else if let inv = rel.inverseSlot, !holds(t, inv, row) {
                        problems.append("\(name(row, slot)) holds '\(id(at: t) ?? "?")', whose \(schema.entities[te].properties[inv].name) does not hold it back")
                    }
                }
            }
        }
        return Array(problems.prefix(limit))
    }
}
