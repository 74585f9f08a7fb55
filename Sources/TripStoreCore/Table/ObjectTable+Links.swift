import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

extension ObjectTable {
    /// Sets a relationship slot and, for a snapshot, the derived side of each target.
    func setLinks(_ rows: [RowID], row: RowID, slot: Int, deriveInverses: Bool) {
        guard let e = entity(at: row), let rel = schema.entities[e].properties[slot].relationship else { return }
        setValue(rel.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null), row: row, slot: slot)
        guard deriveInverses, let inverse = rel.inverseSlot else { return }
        for t in rows {
            guard let target = entity(at: t),
                  let back = schema.entities[target].properties[inverse].relationship, !back.isStoredSide else { continue }
            if back.isToMany {
                appendReference(row, to: t, slot: inverse)
            } else {
                setValue(.toOne(row), row: t, slot: inverse)
            }
        }
    }

    /// Sets relationship slots from references by id, as a journal line records
    /// them (both sides are in the line, so nothing is derived).
    func resolveLinks(_ pending: [(RowID, [PendingLink])], file: String) throws {
        for (row, links) in pending {
            for link in links {
                var rows: [RowID] = []
                rows.reserveCapacity(link.targets.count)
                for t in link.targets {
                    guard let r = self.row(for: t.id) else {
                        throw StoreError.danglingReferences(file: file, line: nil, detail: "a reference points at missing id '\(t.id)'")
                    }
                    if let type = t.type, let e = entity(at: r), schema.entities[e].name != type {
                        throw StoreError.damaged(file: file, line: nil, detail: "a reference says '\(t.id)' is a \(type), but it is a \(schema.entities[e].name)",
                                                 repairable: false)
                    }
                    rows.append(r)
                }
                setLinks(rows, row: row, slot: link.slot, deriveInverses: false)
            }
        }
    }
}
