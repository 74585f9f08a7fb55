import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// The changes of one transaction, kept aside from the store until commit.
///
/// It sees its own changes (`object(at:)`), keeps both sides of every
/// relationship consistent, applies delete rules, and at the end says what
/// changed as history `Change`s. Dropping it leaves the store untouched.
///
/// It remembers the token it was staged on. Committed after other commits, it
/// is checked for conflicts (see `Store.commit`) and then merged onto the
/// current state, so it never undoes what they did.
public struct TransactionBuilder: ObjectLookup {
    /// The store's schema.
    public let schema: Schema
    let table: ObjectTable
    /// The first row this transaction's new objects get.
    let base: Int
    /// The store's last token when this transaction was started.
    public let baseToken: Int64
    var newObjects: [StoredObject?] = []
    var newRowByID: [String: RowID] = [:]
    var changed: [RowID: StoredObject] = [:]
    /// Each changed existing row as the table held it when this transaction first changed it.
    var originals: [RowID: StoredObject] = [:]
    var changedOrder: [RowID] = []
    var deleted: Set<RowID> = []
    var deletedOrder: [RowID] = []
    var denyChecks: [(row: RowID, entity: Int, id: String, slot: Int)] = []
    /// Relationships a delete followed whose other side did not point back:
    /// a table never holds them (both sides are written together), so only
    /// a forged or damaged image can; the commit refuses (see `Store.commit`).
    package private(set) var disagreeingInverses: [String] = []
    /// Slots of existing rows that the caller set itself (`row << 16 | slot`),
    /// as opposed to inverse sides kept in step: conflicts are judged on these.
    var explicitSlots: Set<Int64> = []
    /// Existing rows the caller asked to delete, and existing rows it linked to.
    var deleteRequests: [RowID] = []
    var linkTargets: Set<RowID> = []
    /// Per row, the token its caller read it at, where older than `baseToken`.
    var rowTokens: [RowID: Int64] = [:]
    /// Per property (row << 16 | slot): a later token it was read at than its row's.
    var slotTokens: [Int64: Int64] = [:]
    /// Links asked for to objects that do not exist (refused at commit).
    var missingTargets: [(row: RowID, slot: Int, target: RowID)] = []
    /// References this transaction added to relationships without an inverse, by target.
    var addedOneWay: [RowID: [Referrer]] = [:]

    init(table: ObjectTable, baseToken: Int64) {
        self.table = table
        self.schema = table.schema
        self.base = table.rowCount
        self.baseToken = baseToken
    }

    /// True when nothing was inserted, changed or deleted.
    public var isEmpty: Bool { newObjects.isEmpty && changed.isEmpty && deleted.isEmpty }

    package func object(at row: RowID) -> StoredObject? {
        if deleted.contains(row) { return nil }
        if Int(row) >= base { return isOwnRow(row) ? newObjects[Int(row) - base] : nil }
        if let c = changed[row] { return c }
        return table.object(at: row)
    }

    /// The entity of the live object at a row, without copying the object.
    func entity(at row: RowID) -> Int? {
        if deleted.contains(row) { return nil }
        if Int(row) >= base { return isOwnRow(row) ? newObjects[Int(row) - base]?.entity : nil }
        if let c = changed[row] { return c.entity }
        return table.entity(at: row)
    }

    /// One slot of a live row as this transaction sees it.
    func value(at row: RowID, slot: Int) -> Value {
        if deleted.contains(row) { return .null }
        if Int(row) >= base { return isOwnRow(row) ? newObjects[Int(row) - base]?.values[slot] ?? .null : .null }
        if let c = changed[row] { return c.values[slot] }
        return table.value(at: row, slot: slot)
    }

    /// The live row of an id, seeing this transaction's inserts and deletes.
    /// Objects inserted by commits after this transaction was staged are not
    /// seen: their rows are at or above `base`, which belong to this
    /// transaction's own inserts (inserting such an id is a conflict at commit).
    package func row(for id: String) -> RowID? {
        let id = Identifier.normalized(id)
        if let r = newRowByID[id] { return deleted.contains(r) ? nil : r }
        if let r = table.row(for: id), Int(r) < base, !deleted.contains(r) { return r }
        return nil
    }

    /// Whether this transaction deletes the object with `id`: no object may
    /// take that id in the same transaction (history, time travel and the
    /// journal's replay read an insert and a delete of one id as one object).
    package func deletes(id: String) -> Bool {
        guard !deleted.isEmpty else { return false }
        let id = Identifier.normalized(id)
        if let r = newRowByID[id] { return deleted.contains(r) }
        if let r = table.row(for: id), Int(r) < base { return deleted.contains(r) }
        return false
    }

    /// Whether a row at or above `base` is one this transaction inserted.
    @inline(__always) func isOwnRow(_ row: RowID) -> Bool { Int(row) - base < newObjects.count }

    package mutating func reserve(_ n: Int) {
        newObjects.reserveCapacity(n)
        newRowByID.reserveCapacity(n)
    }

    /// Says that the caller read `row` at `token` (older than the transaction):
    /// a commit then refuses to change it if another commit changed it since.
    /// A model context uses this for the objects it fetched before the save.
    package mutating func assumeRead(_ row: RowID, at token: Int64) {
        if token < baseToken { rowTokens[row] = min(token, rowTokens[row] ?? token) }
    }

    /// Rows of stored objects the transaction changes, deletes or links to
    /// (pairs kept in step and cascades included).
    package func storedRowsTouched() -> [RowID] {
        var seen = Set<RowID>()
        return (changedOrder + deleteRequests + deletedOrder + linkTargets.sorted()).filter { Int($0) < base && seen.insert($0).inserted }
    }

    /// Every object the transaction inserts, changes or deletes, with its id
    /// (read before the commit, while a deleted object still has one).
    package func touchedObjects() -> [(row: RowID, id: String)] {
        var out: [(row: RowID, id: String)] = []
        for row in storedRowsTouched() {
            if let id = originals[row]?.id ?? table.recordedID(row) { out.append((row, id)) }
        }
        for (i, o) in newObjects.enumerated() {
            if let o { out.append((RowID(base + i), o.id)) }
        }
        return out
    }

    /// Says that the caller read one property of `row` later than the rest,
    /// at `token` (a fault loaded after the object was fetched).
    package mutating func assumeRead(_ row: RowID, slot: Int, at token: Int64) {
        slotTokens[Int64(row) << 16 | Int64(slot)] = token
    }

    /// The token `row` was read at, for conflict checks.
    func token(of row: RowID) -> Int64 { rowTokens[row] ?? baseToken }

    /// The token a property of `row` was read at.
    func token(of row: RowID, slot: Int) -> Int64 {
        max(token(of: row), slotTokens[Int64(row) << 16 | Int64(slot)] ?? .min)
    }

    /// Adds a new object; the caller has checked that its id is unused.
    /// References in its relationship slots are linked, inverses included.
    @discardableResult
    package mutating func insert(_ object: StoredObject) -> RowID {
        let row = RowID(base + newObjects.count)
        var o = object
        o.id = Identifier.normalized(o.id)
        var given: [(Int, [RowID])] = []
        for slot in table.relationshipSlots[o.entity] {
            switch o.values[slot] {
            case .toOne(let t):
                given.append((slot, [t]))
            case .toMany(let l) where !l.isEmpty:
                given.append((slot, l))
            default:
                continue
            }
            o.values[slot] = schema.entities[o.entity].emptyValues[slot]
        }
        newObjects.append(o)
        newRowByID[o.id] = row
        for (slot, targets) in given { for t in targets { link(row, slot: slot, to: t) } }
        return row
    }

    mutating func modify(_ row: RowID, _ body: (inout StoredObject) -> Void) {
        guard row >= 0 else { return }
        if Int(row) >= base {
            guard isOwnRow(row), newObjects[Int(row) - base] != nil else { return }
            body(&newObjects[Int(row) - base]!)
            return
        }
        if changed[row] == nil {
            guard let o = table.object(at: row) else { return }
            changed[row] = o
            originals[row] = o
            changedOrder.append(row)
        }
        body(&changed[row]!)
    }

    private mutating func markExplicit(_ row: RowID, _ slot: Int) {
        if Int(row) < base { explicitSlots.insert(Int64(row) << 16 | Int64(slot)) }
    }

    /// Sets an attribute's value.
    package mutating func setAttribute(_ row: RowID, slot: Int, to value: Value) {
        markExplicit(row, slot)
        modify(row) { $0.values[slot] = value }
    }

    // MARK: - Relationships

    func relationship(_ row: RowID, _ slot: Int) -> Relationship? {
        guard let e = entity(at: row) else { return nil }
        return schema.entities[e].properties[slot].relationship
    }

    /// Adds `target` to one side; returns the object a to-one side pointed at before, if another.
    private mutating func addReference(_ row: RowID, _ slot: Int, _ target: RowID, toMany: Bool) -> RowID? {
        var displaced: RowID?
        var added = false
        modify(row) { o in
            if toMany {
                guard case .toMany(var list) = o.values[slot] else {
                    o.values[slot] = .toMany([target])
                    added = true
                    return
                }
                guard !list.contains(target) else { return }
                // Let go of the slot's copy first, so the append happens in place.
                o.values[slot] = .null
                list.append(target)
                o.values[slot] = .toMany(list)
                added = true
            } else {
                if case .toOne(let old) = o.values[slot] {
                    if old == target { return }
                    displaced = old
                }
                o.values[slot] = .toOne(target)
                added = true
            }
        }
        if added, table.oneWay.isNeeded, relationship(row, slot)?.inverseSlot == nil {
            addedOneWay[target, default: []].append(Referrer(row: row, slot: slot))
        }
        return displaced
    }

    private mutating func removeReference(_ row: RowID, _ slot: Int, _ target: RowID) {
        guard entity(at: row) != nil else { return }
        switch value(at: row, slot: slot) {
        case .toOne(let t) where t == target:
            modify(row) { $0.values[slot] = .null }
        case .toMany(let l) where l.contains(target):
            modify(row) { $0.values[slot] = .toMany(l.filter { $0 != target }) }
        default: break
        }
    }

    /// Relates `row`'s relationship `slot` to `target`, and the inverse back.
    package mutating func link(_ row: RowID, slot: Int, to target: RowID) {
        markExplicit(row, slot)
        if Int(target) < base { linkTargets.insert(target) }
        guard let rel = relationship(row, slot) else { return }
        guard entity(at: target) != nil else {
            missingTargets.append((row, slot, target))
            return
        }
        let displaced = addReference(row, slot, target, toMany: rel.isToMany)
        guard let inverse = rel.inverseSlot, let invRel = relationship(target, inverse) else { return }
        if let d = displaced { removeReference(d, inverse, row) }
        if let x = addReference(target, inverse, row, toMany: invRel.isToMany), x != row, let back = invRel.inverseSlot {
            removeReference(x, back, target)
        }
    }

    /// Removes `target` from `row`'s relationship `slot`, and `row` from the inverse.
    package mutating func unlink(_ row: RowID, slot: Int, from target: RowID) {
        markExplicit(row, slot)
        guard let rel = relationship(row, slot) else { return }
        removeReference(row, slot, target)
        if let inverse = rel.inverseSlot { removeReference(target, inverse, row) }
    }

    /// Makes `row`'s relationship hold exactly `targets`. Objects it no longer
    /// holds are unlinked; with `deletingDropped` (an import's upsert, where the
    /// new version of an owner no longer lists an owned child) those under a
    /// cascade rule are deleted instead. A model context passes false: in
    /// SwiftData, removing a child from an array never deletes it.
    package mutating func setRelationship(_ row: RowID, slot: Int, to targets: [RowID],
                                         deletingDropped: Bool = true) throws(StoreError) {
        markExplicit(row, slot)
        var seen = Set<RowID>()
        let targets = targets.filter { seen.insert($0).inserted }  // a to-many holds an object once
        for t in targets where Int(t) < base { linkTargets.insert(t) }
        guard entity(at: row) != nil, let rel = relationship(row, slot) else { return }
        let current = value(at: row, slot: slot).rows
        let keep = Set(targets)
        for t in current where !keep.contains(t) {
            if deletingDropped && rel.deleteRule == .cascade {
                try delete(t)
            } else {
                unlink(row, slot: slot, from: t)
            }
        }
        for t in targets { link(row, slot: slot, to: t) }
        if rel.isToMany, case .toMany(let now) = value(at: row, slot: slot), now != targets, Set(now) == keep {
            modify(row) { $0.values[slot] = .toMany(targets) }  // keep the given order
        }
    }

    /// Puts `first` at the front of a to-many relationship, in that order.
    mutating func reorder(_ row: RowID, slot: Int, first: [RowID]) {
        guard case .toMany(let now) = value(at: row, slot: slot), now != first else { return }
        let head = Set(first)
        let ordered = first.filter { now.contains($0) } + now.filter { !head.contains($0) }
        if ordered != now {
            markExplicit(row, slot)
            modify(row) { $0.values[slot] = .toMany(ordered) }
        }
    }

    // MARK: - Delete

    /// Deletes an object, following the delete rules of its relationships, and
    /// removes every reference to it, whether or not the relationship that
    /// holds the reference declares an inverse.
    public mutating func delete(_ row: RowID) throws(StoreError) {
        if Int(row) < base && !deleteRequests.contains(row) { deleteRequests.append(row) }
        try deleteFollowingRules(row)
    }

    private mutating func deleteFollowingRules(_ row: RowID) throws(StoreError) {
        guard let o = object(at: row) else { return }
        deleted.insert(row)
        let owner = schema.entities[o.entity]
        for p in owner.properties {
            guard let rel = p.relationship else { continue }
            let targets = o.values[p.slot].rows
            if targets.isEmpty { continue }
            // Before any is deleted: the rule is followed on the strength of the other side agreeing.
            if let inverse = rel.inverseSlot {
                for t in targets where entity(at: t) != nil && !value(at: t, slot: inverse).rows.contains(row) {
                    disagreeingInverses.append("\(owner.name) '\(o.id)'.\(p.name) holds '\(recordedID(t))', which does not point back")
                }
            }
            switch rel.deleteRule {
            case .cascade:
                for t in targets { try deleteFollowingRules(t) }
            case .deny:
                denyChecks.append((row, o.entity, o.id, p.slot))
            case .nullify, .noAction:
                break
            }
            if let inverse = rel.inverseSlot {
                for t in targets where entity(at: t) != nil { removeReference(t, inverse, row) }
            }
        }
        removeOneWayReferences(to: row)
        deletedOrder.append(row)
    }

    /// Takes `row` out of every relationship without an inverse that holds it.
    mutating func removeOneWayReferences(to row: RowID) {
        guard table.oneWay.isNeeded else { return }
        let referrers = (Int(row) < base ? table.oneWay.referrers(of: row, in: table) : []) + (addedOneWay[row] ?? [])
        for r in referrers where !deleted.contains(r.row) {
            removeReference(r.row, Int(r.slot), row)
        }
    }

    /// Rows deleted so far, children of a cascade before their owner.
    package var deletedRows: [RowID] { deletedOrder }

    /// Refuses the transaction if a deny rule still has live objects (commit checks this first).
    public func checkDenyRules() throws(StoreError) {
        for check in denyChecks {
            let before = Int(check.row) >= base ? nil : table.object(at: check.row)
            let targets = (before ?? StoredObject(entity: check.entity, id: check.id, values: [])).values
            guard check.slot < targets.count else { continue }
            let alive = targets[check.slot].rows.filter { entity(at: $0) != nil }
            if !alive.isEmpty {
                let e = schema.entities[check.entity]
                throw .denied(entity: e.name, id: check.id, relationship: e.properties[check.slot].name, count: alive.count)
            }
        }
    }

    /// The inserted objects, in insert order (for the journal's envelopes).
    /// The inserted objects, in the order of the insert changes (`insertOrder`).
    var insertedObjects: [StoredObject] {
        insertOrder().compactMap { newObjects[$0] }
    }
}
