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

extension StoreLoader {
    /// After the journal is replayed: no live object may still refer to an
    /// object the journal deleted (older versions wrote deletes that left
    /// such references behind). Damage, naming `verify --repair`; a
    /// salvaging open takes the references out and lists them instead.
    func checkReplayedDeletes() throws {
        defer { store.replayedDeletes = [] }
        guard !store.replayedDeletes.isEmpty else { return }
        var found: [(holder: RowID, slot: Int, target: RowID, delete: ReplayedDelete)] = []
        var byRow: [RowID: ReplayedDelete] = [:]
        for d in store.replayedDeletes where store.table.entity(at: d.row) == nil { byRow[d.row] = d }
        // Through an inverse: the deleted object's own lists say who to look at.
        // (In row order: the reference named first is the same at every open.)
        for d in byRow.values.sorted(by: { $0.row < $1.row }) {
            for p in store.schema.entities[d.object.entity].properties {
                guard let inverse = p.relationship?.inverseSlot else { continue }
                for t in d.object.values[p.slot].rows where store.table.entity(at: t) != nil && store.table.value(at: t, slot: inverse).rows.contains(d.row) {
                    found.append((t, inverse, d.row, d))
                }
            }
        }
        // Without an inverse: every holder of such a relationship.
        if store.table.oneWay.isNeeded {
            store.table.forEachEntity { row, entity in
                for slot in store.table.oneWay.slotsByEntity[entity] {
                    for t in store.table.value(at: row, slot: slot).rows { if let d = byRow[t] { found.append((row, slot, t, d)) } }
                }
            }
        }
        guard let first = found.first else { return }
        func describe(_ f: (holder: RowID, slot: Int, target: RowID, delete: ReplayedDelete)) -> (type: String, id: String, property: String) {
            let e = store.schema.entities[store.table.entity(at: f.holder) ?? 0]
            return (e.name, store.table.id(at: f.holder) ?? "?", e.properties[f.slot].name)
        }
        guard store.options.salvageDanglingReferences else {
            let (type, id, property) = describe(first)
            throw StoreError.danglingReferences(file: first.delete.file, line: first.delete.line,
                                                detail: "\(type) '\(id)'.\(property) still holds '\(first.delete.object.id)', which this line deletes")
        }
        for f in found {
            let (type, id, property) = describe(f)
            let before = store.table.value(at: f.holder, slot: f.slot)
            let recorded = referencesJSON(before)
            store.danglingReferences.append(DanglingReference(file: f.delete.file, line: f.delete.line, type: type, id: id,
                                                        property: property, missingID: f.delete.object.id, recorded: recorded))
            switch before {
            case .toMany(let l): store.table.setValue(.toMany(l.filter { $0 != f.target }), row: f.holder, slot: f.slot)
            default: store.table.setValue(.null, row: f.holder, slot: f.slot)
            }
        }
    }

    /// A relationship value as references, naming deleted rows by the id they had.
    private func referencesJSON(_ v: Value) -> JSONValue {
        func ref(_ r: RowID) -> JSONValue {
            let type = store.table.entity(at: r).map { store.schema.entities[$0].name }
                ?? store.replayedDeletes.first { $0.row == r }.map { store.schema.entities[$0.object.entity].name } ?? "?"
            return .object([JSONMember("type", .string(type)), JSONMember("id", .string(store.table.recordedID(r) ?? "?"))])
        }
        switch v {
        case .toOne(let r): return ref(r)
        case .toMany(let l): return .array(l.map(ref))
        default: return .null
        }
    }
}
