import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A reference held in a relationship slot: which row holds it, in which slot.
package struct Referrer: Hashable, Sendable {
    package var row: RowID
    package var slot: Int32

    package init(row: RowID, slot: Int) {
        self.row = row
        self.slot = Int32(slot)
    }
}

/// Who refers to each object through a relationship that declares no inverse.
///
/// A relationship with an inverse finds its referrers through the inverse
/// side; one without has nothing on the target that says who points at it, so
/// deleting the target would leave the reference dangling. This index is the
/// missing side: built from the table the first time a delete needs it, then
/// kept current by every commit. A schema whose relationships all have
/// inverses (the trips) never builds it.
final class OneWayReferences {
    /// Per entity, its relationship slots that have no inverse.
    let slotsByEntity: [[Int]]
    /// True when some relationship has no inverse.
    let isNeeded: Bool
    private var byTarget: [RowID: [Referrer]]?

    init(schema: Schema) {
        slotsByEntity = schema.entities.map { e in
            e.properties.compactMap { p in p.relationship.flatMap { $0.inverseSlot == nil ? p.slot : nil } }
        }
        isNeeded = slotsByEntity.contains { !$0.isEmpty }
    }

    /// The committed referrers of `row` (some may be stale: callers check the slot still holds it).
    func referrers(of row: RowID, in table: ObjectTable) -> [Referrer] {
        guard isNeeded else { return [] }
        if byTarget == nil { build(table) }
        return byTarget?[row] ?? []
    }

    private func build(_ table: ObjectTable) {
        var map: [RowID: [Referrer]] = [:]
        table.forEachEntity { row, entity in
            for slot in slotsByEntity[entity] {
                for t in table.value(at: row, slot: slot).rows { map[t, default: []].append(Referrer(row: row, slot: slot)) }
            }
        }
        byTarget = map
    }

    /// Keeps the index current as a committed change replaces `old` by `new` at `row` (either may be nil).
    func update(row: RowID, old: StoredObject?, new: StoredObject?) {
        guard isNeeded, byTarget != nil else { return }
        let entity = (new ?? old).map(\.entity) ?? 0
        for slot in slotsByEntity[entity] {
            let before = old?.values[slot].rows ?? [], after = new?.values[slot].rows ?? []
            if before == after { continue }
            let referrer = Referrer(row: row, slot: slot)
            for t in before where !after.contains(t) { byTarget?[t]?.removeAll { $0 == referrer } }
            for t in after where !before.contains(t) { byTarget?[t, default: []].append(referrer) }
        }
        if new == nil { byTarget?[row] = nil }
    }

    /// Forgets everything (the table was loaded anew).
    func reset() { byTarget = nil }
}
