import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// An object a journal line deleted while the store opened: its last values,
/// and the line, for messages.
struct ReplayedDelete {
    var row: RowID
    var object: StoredObject
    var file: String
    var line: Int
}

extension Store {
    /// After the journal is replayed: no live object may still refer to an
    /// object the journal deleted (older versions wrote deletes that left
    /// such references behind). Damage, naming `verify --repair`; a
    /// salvaging open takes the references out and lists them instead.
    func checkReplayedDeletes() throws {
        defer { replayedDeletes = [] }
        guard !replayedDeletes.isEmpty else { return }
        var found: [(holder: RowID, slot: Int, target: RowID, delete: ReplayedDelete)] = []
        var byRow: [RowID: ReplayedDelete] = [:]
        for d in replayedDeletes where table.entity(at: d.row) == nil { byRow[d.row] = d }
        // Through an inverse: the deleted object's own lists say who to look at.
        for d in byRow.values {
            for p in schema.entities[d.object.entity].properties {
                guard let inverse = p.relationship?.inverseSlot else { continue }
                for t in d.object.values[p.slot].rows where table.entity(at: t) != nil && table.value(at: t, slot: inverse).rows.contains(d.row) {
                    found.append((t, inverse, d.row, d))
                }
            }
        }
        // Without an inverse: every holder of such a relationship.
        if table.oneWay.isNeeded {
            table.forEachEntity { row, entity in
                for slot in table.oneWay.slotsByEntity[entity] {
                    for t in table.value(at: row, slot: slot).rows { if let d = byRow[t] { found.append((row, slot, t, d)) } }
                }
            }
        }
        guard let first = found.first else { return }
        func describe(_ f: (holder: RowID, slot: Int, target: RowID, delete: ReplayedDelete)) -> (type: String, id: String, property: String) {
            let e = schema.entities[table.entity(at: f.holder) ?? 0]
            return (e.name, table.id(at: f.holder) ?? "?", e.properties[f.slot].name)
        }
        guard options.salvageDanglingReferences else {
            let (type, id, property) = describe(first)
            throw StoreError.danglingReferences(file: first.delete.file, line: first.delete.line,
                                                detail: "\(type) '\(id)'.\(property) still holds '\(first.delete.object.id)', which this line deletes")
        }
        for f in found {
            let (type, id, property) = describe(f)
            let before = table.value(at: f.holder, slot: f.slot)
            let recorded = referencesJSON(before)
            danglingReferences.append(DanglingReference(file: f.delete.file, line: f.delete.line, type: type, id: id,
                                                        property: property, missingID: f.delete.object.id, recorded: recorded))
            switch before {
            case .toMany(let l): table.setValue(.toMany(l.filter { $0 != f.target }), row: f.holder, slot: f.slot)
            default: table.setValue(.null, row: f.holder, slot: f.slot)
            }
        }
    }

    /// A relationship value as references, naming deleted rows by the id they had.
    private func referencesJSON(_ v: Value) -> JSONValue {
        func ref(_ r: RowID) -> JSONValue {
            let type = table.entity(at: r).map { schema.entities[$0].name }
                ?? replayedDeletes.first { $0.row == r }.map { schema.entities[$0.object.entity].name } ?? "?"
            return .object([JSONMember("type", .string(type)), JSONMember("id", .string(table.recordedID(r) ?? "?"))])
        }
        switch v {
        case .toOne(let r): return ref(r)
        case .toMany(let l): return .array(l.map(ref))
        default: return .null
        }
    }
}
