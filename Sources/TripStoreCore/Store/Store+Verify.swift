import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// True when the journal ends with a torn (incomplete) line.
    public var hasTornTail: Bool { tornTail != nil }

    /// True when the store has a snapshot file.
    public var hasSnapshotFile: Bool { hasSnapshot }

    /// Checks that every reference points at a live object of the right type
    /// and that both sides of every relationship agree. Empty when sound.
    public func checkInvariants() -> [String] {
        var problems: [String] = []
        for row in table.liveRows {
            let o = table.object(at: row)!
            let entity = schema.entities[o.entity]
            for p in entity.properties {
                guard let r = p.relationship else { continue }
                for t in o.values[p.slot].rows {
                    guard let target = table.object(at: t) else {
                        problems.append("\(entity.name) '\(o.id)'.\(p.name) points at a missing object")
                        continue
                    }
                    if !schema.isKind(target.entity, of: r.destination) {
                        problems.append("\(entity.name) '\(o.id)'.\(p.name) points at a \(schema.entities[target.entity].name)")
                    }
                    if let inv = r.inverseSlot, !target.values[inv].rows.contains(row) {
                        problems.append("\(entity.name) '\(o.id)'.\(p.name) holds '\(target.id)', whose inverse does not hold it back")
                    }
                }
            }
            if problems.count > 100 { break }
        }
        problems.append(contentsOf: indexes.checkInvariants(table))
        _ = history.count  // reads the snapshot's history lines, noting any that cannot be read
        problems.append(contentsOf: historyProblems)
        let tokens = history.map(\.token)
        if tokens != tokens.sorted() || Set(tokens).count != tokens.count {
            problems.append("history tokens are not strictly increasing")
        }
        return problems
    }
}
