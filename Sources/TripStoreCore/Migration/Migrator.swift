import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a migration did: the store under the new schema, the transaction
/// that recorded it, and the plan it followed.
public struct MigrationResult {
    /// The store, open for writing under the new schema. The store the
    /// migration was called on is `.migrated` from then on.
    public let store: Store
    /// The `migrate` transaction.
    public let transaction: HistoryTransaction
    /// The plan, one line a change.
    public let plan: SchemaMigration
}

/// Moves a store to a new schema (a lightweight migration): plans
/// it against every object, converts every record, and writes the store of
/// the new schema as one transaction.
public struct Migrator {
    public let store: Store

    /// Works on `store`.
    public init(_ store: Store) { self.store = store }

    /// The plan for moving this store to `target`, checked against every
    /// object: `problems` lists each change a lightweight migration cannot
    /// make (structural ones, and what the objects refuse, such as an enum
    /// case in use). Nothing is written.
    ///
    /// - Throws: `StoreError.damaged` when the image shows damage while the objects are read.
    public func plan(to target: Schema) throws -> SchemaMigration {
        var plan = SchemaMigration(from: store.schema, to: target.keepingRenames(recordedIn: store.schema.descriptions))
        guard !plan.isEmpty else { return plan }
        // The objects are carried over into a table in memory that is then
        // dropped: what the new shape breaks shows only there, and a dry run
        // must refuse what the migration would.
        let scratch = Store(folder: store.files.folder, schema: target, access: .read, options: store.options)
        defer { scratch.state = .closed }
        _ = try convert(plan: &plan, into: scratch)
        return plan
    }

    /// Moves the store to `target` in one transaction of one `migrate`
    /// change (docs/cli.md, migrate): each object is carried over (renamed, converted,
    /// given defaults; removed values kept in history), then a snapshot is
    /// written, then the new `schema.json`. A crash at any moment leaves
    /// the store wholly before or wholly after.
    ///
    /// ```swift
    /// let done = try Migrator(store).migrate(to: try SchemaFile.read(bytes), author: "alice")
    /// let migrated = done.store   // the old value is `.migrated`
    /// ```
    /// - Throws: `StoreError.migrationRefused` listing every change it cannot
    ///   make (nothing changed); `.notWritable`; what `compact` throws (the
    ///   store is then as before).
    public func migrate(to target: Schema, author: String, timestamp: Double? = nil) throws -> MigrationResult {
        try store.checkWritable(.migrate)
        // The renames the store records stay recorded (see `keepingRenames`).
        let plan = SchemaMigration(from: store.schema, to: target.keepingRenames(recordedIn: store.schema.descriptions))
        guard !plan.isEmpty else { throw StoreError.migrationRefused(["the store already has this schema (fingerprint \(store.schema.fingerprint)); there is nothing to migrate"]) }
        return try migrate(plan, author: author, timestamp: timestamp)
    }

    /// Records a new `version` of the same shape in `schema.json` (no
    /// transaction: nothing about the objects changes). Returns false when
    /// the record already has it.
    ///
    /// - Throws: `StoreError.notWritable`, or `.migrationRefused` when `target` has another shape.
    @discardableResult
    public func recordVersion(of target: Schema) throws -> Bool {
        try store.checkWritable(.migrate)
        guard target.fingerprint == store.schema.fingerprint else {
            throw StoreError.migrationRefused(["the schema has another shape (fingerprint \(target.fingerprint)); migrate to it instead"])
        }
        guard try SchemaRecord.read(store.files)?.version != target.version else { return false }
        try store.writeSchemaRecord(of: target.keepingRenames(recordedIn: store.schema.descriptions), to: store.files.schemaRecord)
        return true
    }

    private func migrate(_ plan: SchemaMigration, author: String, timestamp: Double?) throws -> MigrationResult {
        var plan = plan
        let target = plan.to
        // Never build on a snapshot that fails its checksum (read through
        // while the objects are converted, before anything is written), nor
        // drop history that could not be read.
        // The snapshot's history lines not read yet go to the new snapshot
        // as they are (see `compact`); the others are read, and must read.
        let carried = store.historyLog.snapshotLastCommit == nil ? nil : store.historyLog.pending
        let next = Store(folder: store.files.folder, schema: target, access: .write, options: store.options)
        let (saved, oldValues) = try store.whileCheckingSnapshotChecksum {
            let saved = carried == nil ? try store.checkedHistory() : store.historyLog.loaded
            Trace.mark("migrate: history")
            return (saved, try convert(plan: &plan, into: next))
        }
        Trace.mark("migrate: \(next.table.count) objects carried over, the checksum checked")
        guard plan.problems.isEmpty else {
            // Rows from an image whose relationships' sides disagree look like
            // a migration that would break them: the image is what is wrong.
            if let image = store.table.image, let first = store.table.referenceProblems(limit: 1).first {
                image.noteDamage("relationships whose sides disagree (\(first))")
                throw StoreError.imageDamaged(file: store.imagePath, detail: store.table.imageDamage ?? first)
            }
            throw StoreError.migrationRefused(plan.problems)
        }

        let record = MigrationRecord(from: store.schema.fingerprint, to: target.fingerprint, steps: plan.steps,
                                     schema: SchemaFile.value(target), previous: SchemaFile.value(store.schema), oldValues: oldValues)
        var change = Change(kind: .migrate, type: "", id: "")
        change.migration = record
        let t = HistoryTransaction(token: store.lastToken + 1, timestamp: max(timestamp ?? Store.now(), try store.lastCommitTime() ?? 0),
                                   author: author, changes: [change])
        if let carried {
            let fd = dup(carried.fd)
            guard fd >= 0 else { throw IOError(operation: "dup", path: carried.file, code: errno) }
            next.historyLog.pending = (fd, carried.bytes, carried.firstLine, carried.file)
            next.historyLog.snapshotCount = store.historyLog.snapshotCount
            next.historyLog.snapshotLastCommit = store.historyLog.snapshotLastCommit
        }
        next.historyLog.oldestReachableCommit = store.historyLog.oldestReachableCommit
        next.historyLog.loaded = saved + [t]
        next.lastToken = t.token
        next.snapshotToken = store.snapshotToken
        next.hasSnapshot = store.hasSnapshot
        next.recordedFingerprint = store.recordedFingerprint
        next.recordedDescriptions = store.recordedDescriptions
        next.lock = store.lock
        store.lock = nil
        do {
            try next.compact(tableIsChecked: true, migrating: true)
        } catch {
            guard FileIO.exists(store.files.snapshot(t.token)) else {
                // Before the snapshot's rename: the files are as before, and so is this store.
                store.lock = next.lock
                next.lock = nil
                next.state = .closed
                FileIO.unlink(store.files.pendingSchemaRecord)
                throw error
            }
            // After it the migration is committed: the pending record stays
            // for the next writer to finish with, and the new store, whose
            // memory may be ahead of what finished, reads but writes no more.
            next.warnings.append(.migrationUnfinished(reason: "\(error)"))
            next.markBroken(by: error)
        }
        store.journal.close()
        store.historyLog.close()
        store.state = .migrated(token: t.token)
        return MigrationResult(store: next, transaction: t, plan: plan)
    }

    /// Carries every object over as `plan` says, into `next`'s table when
    /// given (nil: only checks), adding to `plan.problems` what the objects
    /// refuse. Returns the old values history keeps, by id. The objects are
    /// read and converted on every core, in id order, then added in order.
    private func convert(plan: inout SchemaMigration, into next: Store?) throws -> [JSONMember] {
        let rows = store.table.rowsSortedByID()
        // Every piece is checked first: reading then changes nothing, and workers may share the table.
        guard store.table.checkEverything() else { throw StoreError.imageDamaged(file: store.imagePath, detail: store.table.imageDamage ?? "") }
        var newRow = [Int32](repeating: -1, count: store.table.rowCount)
        for (k, r) in rows.enumerated() { newRow[Int(r)] = Int32(k) }
        let building = next != nil && plan.problems.isEmpty
        let (view, frozenPlan, oldSchema, rowMap) = (store.table.readView, plan, store.schema, newRow)
        // Most objects go record to record (see `RecordConversion`).
        let records = building ? RecordConversion(plan, from: store.schema) : nil
        let flat = FlatLists(store.table.lists)
        defer { withExtendedLifetime(flat) {} }
        let lists = flat.view
        // Blocks of rows converted on every core a few ahead of the thread
        // that adds them in order, so that little is held at once.
        let blockRows = 4096
        let work = OrderedWork(count: (rows.count + blockRows - 1) / blockRows, ahead: 4) {
            { k in
                ObjectConversion.run(rows[(k * blockRows)..<min(rows.count, (k + 1) * blockRows)], plan: frozenPlan, schema: oldSchema,
                                     table: view, newRow: rowMap, keepObjects: building, records: records, lists: lists)
            }
        }
        defer { work.finish() }
        var refusals = RefusalCounter()
        var oldValues: [JSONMember] = []
        var inexact: [String: Int] = [:]
        if building, let next { next.table.reserve(rows.count) }
        while let part = work.next() {
            refusals.merge(part.refusals)
            inexact.merge(part.inexact, uniquingKeysWith: +)
            oldValues += part.oldValues
            guard building, let next else { continue }
            part.append(to: next.table) { next.indexes.appendType($0, $1) }
        }
        plan.problems += refusals.sentences
        plan.notes = inexact.sorted { $0.key < $1.key }.map { label, n in
            "\(label): \(n) integer value\(n == 1 ? "" : "s") past 2^53 \(n == 1 ? "becomes" : "become") the nearest Double; history keeps the exact integer\(n == 1 ? "" : "s")"
        }
        let added = Self.addedInverses(plan)
        plan.problems += Self.addedInverseConflicts(added, plan: plan, in: store.table)
        guard building, let next, plan.problems.isEmpty else { return oldValues }
        if next.table.adoptSnapshotOrder() != nil {
            throw StoreError.damaged(file: store.files.folder, line: nil, detail: "the objects' ids are not unique", repairable: false)
        }
        Self.fillAddedInverses(added, plan: plan, in: next)
        plan.problems += Self.inverseProblems(plan, in: next)
        // Whatever else the new shape breaks (a relationship made its own
        // inverse, say) is refused here, not found as damage by the snapshot.
        if plan.problems.isEmpty {
            plan.problems += next.table.referenceProblems().map { "the objects would break a relationship: " + $0 }
        }
        return oldValues
    }

    /// A relationship the migration adds as the inverse of one the store
    /// already has, which it fills from that one.
    struct AddedInverse {
        var entity: Int
        var slot: Int
        var relationship: Relationship
        var inverse: Int
    }

    /// The relationships of the new schema that no object has yet and whose
    /// inverse the objects carry over.
    private static func addedInverses(_ plan: SchemaMigration) -> [AddedInverse] {
        let schema = plan.to
        let mappings = plan.mappings.compactMap { $0 }
        func isFilled(_ m: SchemaMigration.EntityMapping, _ slot: Int) -> Bool {
            if case .fill = m.slots[slot] { return true }
            return false
        }
        var out: [AddedInverse] = []
        for e in schema.entities {
            for p in e.properties where p.declaringEntity == e.id {
                guard let r = p.relationship, let inverse = r.inverseSlot,
                      mappings.allSatisfy({ !schema.isKind($0.entity, of: e.id) || isFilled($0, p.slot) }),
                      mappings.contains(where: { schema.isKind($0.entity, of: r.destination) && !isFilled($0, inverse) }) else { continue }
                out.append(AddedInverse(entity: e.id, slot: p.slot, relationship: r, inverse: inverse))
            }
        }
        return out
    }

    /// An added to-one inverse that two objects would point back to, found
    /// in the store's own objects (so a dry run lists it too).
    private static func addedInverseConflicts(_ added: [AddedInverse], plan: SchemaMigration, in table: ObjectTable) -> [String] {
        let schema = plan.to
        var refusals = RefusalCounter()
        for a in added where !a.relationship.isToMany {
            let back = schema.entities[a.relationship.destination]
            let label = "add \(schema.entities[a.entity].name).\(schema.entities[a.entity].properties[a.slot].name) as the inverse of \(back.name).\(back.properties[a.inverse].name)"
            var pointedAt = Set<RowID>(), noted = Set<RowID>()
            table.forEachEntity { row, oldEntity in
                guard let m = plan.mappings[oldEntity], schema.isKind(m.entity, of: a.relationship.destination),
                      case .references(let s, _, _) = m.slots[a.inverse] else { return }
                for t in table.value(at: row, slot: s).rows where !pointedAt.insert(t).inserted && noted.insert(t).inserted {
                    refusals.note("\(label): objects more than one object points at", id: table.id(at: t) ?? "?")
                }
            }
        }
        return refusals.sentences
    }

    /// Fills the added inverses from the other side, so that both mirror
    /// each other (a to-many side lists its objects in id order).
    private static func fillAddedInverses(_ added: [AddedInverse], plan: SchemaMigration, in next: Store) {
        let schema = plan.to, table = next.table
        for a in added {
            table.forEachEntity { row, entity in
                guard schema.isKind(entity, of: a.relationship.destination) else { return }
                for t in table.value(at: row, slot: a.inverse).rows {
                    if a.relationship.isToMany {
                        table.appendReference(row, to: t, slot: a.slot)
                    } else {
                        table.setValue(.toOne(row), row: t, slot: a.slot)
                    }
                }
            }
        }
    }

    /// Relationships that become inverses of each other must already mirror each other.
    private static func inverseProblems(_ plan: SchemaMigration, in next: Store) -> [String] {
        var refusals = RefusalCounter()
        let schema = plan.to, table = next.table
        for case let mapping? in plan.mappings where !mapping.newInverses.isEmpty {
            let e = schema.entities[mapping.entity]
            for slot in mapping.newInverses {
                guard let rel = e.properties[slot].relationship, let inverse = rel.inverseSlot else { continue }
                let back = schema.entities[rel.destination].properties[inverse]
                let label = "\(e.properties[slot].name) and \(schema.entities[rel.destination].name).\(back.name) become inverses"
                for row in next.indexes.rows(of: mapping.entity) {
                    let targets: [RowID]
                    switch table.value(at: row, slot: slot) {
                    case .toOne(let r): targets = [r]
                    case .toMany(let rs): targets = rs
                    default: targets = []
                    }
                    for t in targets {
                        let points: Bool
                        switch table.value(at: t, slot: inverse) {
                        case .toOne(let r): points = r == row
                        case .toMany(let rs): points = rs.contains(row)
                        default: points = false
                        }
                        if !points { refusals.note("\(e.name).\(label): they do not mirror each other", id: table.id(at: row) ?? "?") }
                    }
                }
            }
        }
        return refusals.sentences
    }

    /// The first of `cases` a value holds (an enum, or an array of them).
    static func firstCase(in v: Value, of cases: Set<String>) -> String? {
        switch v {
        case .string(let s): return cases.contains(s) ? s : nil
        case .array(let items):
            for i in items { if let c = firstCase(in: i, of: cases) { return c } }
            return nil
        default: return nil
        }
    }
}

/// One worker's share of a migration: its rows' objects in the new schema,
/// the old values history keeps of them, and what they refuse.
struct ObjectConversion: Sendable {
    /// The objects in order: each a record in `recordBytes` (its to-many
    /// slots to be given lists as `listFixes` say), or, with `entity` -1,
    /// the object at `objects[bytes.lowerBound]`, converted the decoding way.
    var converted: [Converted] = []
    var recordBytes: [UInt8] = []
    var listFixes: [ListFix] = []
    var listElements: [RowID] = []
    var objects: [StoredObject] = []
    var oldValues: [JSONMember] = []
    var refusals = RefusalCounter()
    /// Per attribute label: how many integers became a `Double` that is not
    /// equal to them (history keeps the exact ones).
    var inexact: [String: Int] = [:]

    struct Converted: Sendable {
        var entity: Int16
        var bytes: Range<Int32>
        var fixes: Range<Int32>
    }

    /// A to-many slot at `offset` in its record, and its new targets in `listElements`.
    struct ListFix: Sendable {
        var offset: Int32
        var elements: Range<Int32>
    }

    /// Adds the objects to `table` in order, telling `added` each one's row and entity.
    func append(to table: ObjectTable, _ added: (RowID, Int) -> Void) {
        recordBytes.withUnsafeBytes { bytes in
            listElements.withUnsafeBufferPointer { elements in
                for c in converted {
                    if c.entity < 0 {
                        let o = objects[Int(c.bytes.lowerBound)]
                        added(table.append(o), o.entity)
                        continue
                    }
                    let fixes = listFixes[Int(c.fixes.lowerBound)..<Int(c.fixes.upperBound)].lazy.map {
                        (offset: Int($0.offset), targets: elements[Int($0.elements.lowerBound)..<Int($0.elements.upperBound)])
                    }
                    let record = UnsafeRawBufferPointer(rebasing: bytes[Int(c.bytes.lowerBound)..<Int(c.bytes.upperBound)])
                    added(table.append(entity: Int(c.entity), record: record, lists: fixes), Int(c.entity))
                }
            }
        }
    }

    static func run(_ rows: ArraySlice<RowID>, plan: SchemaMigration, schema: Schema, table: ObjectTable.ReadView,
                    newRow: [Int32], keepObjects: Bool, records: RecordConversion?, lists: FlatLists.View) -> ObjectConversion {
        var out = ObjectConversion()
        if keepObjects { out.converted.reserveCapacity(rows.count) }
        for row in rows {
            if keepObjects, let records, newRow.withUnsafeBufferPointer({ records.convert(row, table: table, lists: lists, newRow: $0, into: &out) }) != nil {
                continue
            }
            guard let o = table.object(at: row) else { continue }
            let oldEntity = schema.entities[o.entity]
            guard let mapping = plan.mappings[o.entity] else {
                out.refusals.note("remove entity \(oldEntity.name): objects of it are in the store", id: o.id)
                continue
            }
            var values: [Value] = []
            values.reserveCapacity(mapping.slots.count)
            var kept: [JSONMember] = []
            for source in mapping.slots {
                switch source {
                case .fill(let v):
                    values.append(v)
                case .attribute(let s, let conversion, let whenNil, let label):
                    var v = o.values[s]
                    if v.isNull {
                        if case .becomes(let d) = whenNil {
                            if let d {
                                v = d
                                kept.append(JSONMember(oldEntity.properties[s].name, .null))
                            } else {
                                out.refusals.note("make \(label) required: objects have no value for it and it has no \"default\"", id: o.id)
                            }
                        }
                    } else {
                        switch conversion {
                        case .none: break
                        case .intToDouble:
                            if case .int(let i) = v {
                                let d = Double(i)
                                if Int64(exactly: d) != i {
                                    kept.append(JSONMember(oldEntity.properties[s].name, .int(i)))
                                    out.inexact[label, default: 0] += 1
                                }
                                v = .double(d)
                            }
                        case .removedCases(let gone):
                            if let c = Migrator.firstCase(in: v, of: gone) {
                                out.refusals.note("remove enum case \(label) \"\(c)\": objects use it", id: o.id)
                            }
                        }
                    }
                    values.append(v)
                case .references(let s, let destinations, let refusal):
                    let v = o.values[s]
                    var targets: [RowID] = []
                    switch v {
                    case .toOne(let r): targets = [r]
                    case .toMany(let rs): targets = rs
                    default: break
                    }
                    if let destinations {
                        for t in targets {
                            guard let e = table.entity(at: t), let m = plan.mappings[e], destinations.contains(m.entity) else {
                                let name = table.entity(at: t).map { schema.entities[$0].name } ?? "missing object"
                                out.refusals.note("\(refusal): objects refer to a \(name)", id: o.id)
                                break
                            }
                        }
                    }
                    let mapped = targets.map { RowID(newRow[Int($0)]) }
                    switch v {
                    case .toOne: values.append(mapped.first.map { .toOne($0) } ?? .null)
                    case .toMany: values.append(.toMany(mapped))
                    default: values.append(v)
                    }
                }
            }
            for (slot, name) in mapping.removed {
                let v = o.values[slot]
                switch v {
                case .null: continue
                case .toMany(let rs) where rs.isEmpty: continue
                default: kept.append(JSONMember(name, EnvelopeEncoder.jsonValue(v, of: oldEntity.properties[slot], schema: schema, lookup: table)))
                }
            }
            if !kept.isEmpty { out.oldValues.append(JSONMember(o.id, .object(kept))) }
            if keepObjects {
                out.converted.append(Converted(entity: -1, bytes: Int32(out.objects.count)..<Int32(out.objects.count), fixes: 0..<0))
                out.objects.append(StoredObject(entity: mapping.entity, id: o.id, values: values))
            }
        }
        return out
    }
}

/// Counts the objects behind each refusal, so that the plan lists each
/// change once: "…: 3 objects (first: 't1')".
struct RefusalCounter: Sendable {
    private var order: [String] = []
    private var counts: [String: (count: Int, first: String)] = [:]

    mutating func note(_ sentence: String, id: String) {
        if let c = counts[sentence] {
            counts[sentence] = (c.count + 1, c.first)
        } else {
            order.append(sentence)
            counts[sentence] = (1, id)
        }
    }

    /// Adds a later share's counts (its objects come after this one's in id order).
    mutating func merge(_ other: RefusalCounter) {
        for s in other.order {
            guard let c = other.counts[s] else { continue }
            if let mine = counts[s] {
                counts[s] = (mine.count + c.count, mine.first)
            } else {
                order.append(s)
                counts[s] = c
            }
        }
    }

    var sentences: [String] {
        order.map { s in
            let c = counts[s] ?? (0, "")
            return s + " (\(c.count) object\(c.count == 1 ? "" : "s"), first '\(c.first)')"
        }
    }
}
