import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Every live object of a store, by row and by id.
///
/// Each object is one compact record in a `RecordArena` (see `RecordCoding`),
/// not a Swift value per field: a store takes less memory than its JSON
/// and loads without an allocation per value. `object(at:)` decodes a record
/// when asked; `value(at:slot:)` decodes one slot.
///
/// Rows are assigned as objects are created and never reused while the store
/// is open, so a row held by an index or a relationship stays meaningful.
///
/// The arrays the hot loops read are `@exclusivity(unchecked)` (here, in
/// `RecordArena`, `StoreIndexes` and `ValueIndex`): a table is changed by one
/// thread, and parallel workers only read it while nothing changes it
/// (`Parallel.map` returns before the caller goes on), so no access can
/// overlap a write, and the run-time checks would be paid on every access
/// in those loops.
package final class ObjectTable: ObjectLookup {
    package let schema: Schema
    /// Rows below `baseRows` came from a snapshot, sorted by id: their columns
    /// are in the snapshot image's mapping, or in memory of their own when
    /// the snapshot was read from JSON. Rows from there on are in arrays.
    @exclusivity(unchecked) private(set) var baseRows = 0
    /// The entity of each base row, or -1 where no object lives.
    @exclusivity(unchecked) var baseEntities = UnsafeMutablePointer<Int16>.allocate(capacity: 1)
    /// Where each base row's record is in the arena (kept after a delete, so the id stays readable).
    @exclusivity(unchecked) private var baseLocators = UnsafeMutablePointer<Int64>.allocate(capacity: 1)
    /// The first eight bytes of each base row's id, for binary search.
    @exclusivity(unchecked) var basePrefixes = UnsafePointer(UnsafeMutablePointer<UInt64>.allocate(capacity: 1))
    /// The prefix of the first row of each group of base rows, to find the
    /// group of an id (of rows held in memory; an image's are in its directory).
    @exclusivity(unchecked) var fences: [UInt64] = []
    /// Per unit of base rows, its `UnitState` (rows read from JSON are checked at once).
    @exclusivity(unchecked) private var groupState = ZeroedBytes.allocate(1)
    /// The image the base rows are mapped from, if they are.
    private(set) var image: MappedImage?
    /// Base rows whose object was replaced or removed since the table was
    /// loaded from an image, with the entity and record they had there: an
    /// index saved in the image is read with their old entries taken out
    /// (and the rows from `baseRows` on and their values now laid over it).
    @exclusivity(unchecked) private(set) var changedBaseRows: [RowID: (entity: Int16, locator: Int64)] = [:]
    /// Records a journal's replay state holds for base rows (`adoptReplayed`):
    /// each takes the place of the image's when its unit is checked, so the
    /// open that takes them reads nothing of the image for them.
    @exclusivity(unchecked) private var replayed = ReplayedRecords.none
    /// The entity and record locator of each row from `baseRows` on.
    @exclusivity(unchecked) var laterEntities: [Int16] = []
    @exclusivity(unchecked) var laterLocators: [Int64] = []
    let arena = RecordArena()
    /// The to-many relationship lists; a record's to-many slot holds a number
    /// here. List 0 is the shared empty list, never changed in place.
    let lists = RelationshipLists()
    @exclusivity(unchecked) var scratch = RecordBuffer(capacity: 4096)
    /// Rows below this are in id order (the base rows).
    var idOrderedRows: Int { baseRows }
    /// Rows from `idOrderedRows` up to `laterIDsCover`, by id; extended when an id is looked up.
    @exclusivity(unchecked) var laterIDs: [String: RowID] = [:]
    @exclusivity(unchecked) var laterIDsCover = 0
    /// Live objects per concrete entity.
    @exclusivity(unchecked) package internal(set) var countByEntity: [Int]
    /// Who refers to each object through relationships without an inverse.
    let oneWay: OneWayReferences
    /// Per entity, the slots that hold relationships.
    let relationshipSlots: [[Int]]
    /// Per entity, how many slots its records have.
    let slotCounts: [Int]
    /// What references must satisfy (`referenceProblems`), worked out the
    /// first time a commit or a replayed line needs it (a query never does).
    private(set) lazy var referenceRules = ReferenceRules(schema)

    package init(schema: Schema) {
        self.schema = schema
        self.oneWay = OneWayReferences(schema: schema)
        self.relationshipSlots = schema.entities.map { e in e.properties.compactMap { $0.relationship == nil ? nil : $0.slot } }
        self.slotCounts = schema.entities.map { $0.properties.count }
        self.countByEntity = Array(repeating: 0, count: schema.entities.count)
        groupState[0] = UnitState.checked
    }

    deinit {
        ZeroedBytes.free(groupState)
        baseLocators.deallocate()
        if image == nil {
            baseEntities.deallocate()
            UnsafeMutablePointer(mutating: basePrefixes).deallocate()
        }
    }

    /// The number of live objects.
    @exclusivity(unchecked) package internal(set) var count = 0
    /// One past the highest row ever used.
    package var rowCount: Int { baseRows + laterEntities.count }

    /// Bytes of object records in memory, and how many of them are no longer used.
    package var recordBytes: (total: Int, unused: Int) { (arena.totalBytes, arena.unusedBytes) }

    // MARK: Reading

    /// The entity of the object at a row, if one lives there.
    @inline(__always) package func entity(at row: RowID) -> Int? {
        let i = Int(row)
        guard i >= 0, i < rowCount else { return nil }
        let e = rawEntity(i)
        return e >= 0 ? Int(e) : nil
    }

    @inline(__always) func record(_ row: RowID) -> UnsafeRawPointer {
        UnsafeRawPointer(arena.pointer(locator(Int(row))))
    }

    /// A row's record for reading its id and attributes only: an image row's
    /// relationships may not have been checked yet (see `checkedForAttributes`).
    @inline(__always) func attributeRecord(_ row: RowID) -> UnsafeRawPointer {
        let i = Int(row)
        if i < baseRows {
            checkedForAttributes(i)
            return UnsafeRawPointer(arena.pointer(baseLocators[i]))
        }
        return UnsafeRawPointer(arena.pointer(laterLocators[i - baseRows]))
    }

    /// Starts loading a row's entity and the first 128 bytes of its record
    /// into the cache (see `Prefetch`); a loop calls it a few rows ahead of
    /// the row it reads. Rows not yet checked are left alone: checking is work.
    /// The record's place is read from the row's locator, which may itself
    /// be a miss: `prefetchColumns` a few rows earlier loads that first.
    @inline(__always) func prefetch(_ row: RowID) {
        let i = Int(row)
        let locator: Int64
        if i >= 0 && i < baseRows {
            guard UnitState.isReadable(groupState[i >> SnapshotImage.unitShift]) else { return }
            Prefetch.read(baseEntities + i)
            locator = baseLocators[i]
        } else if i >= baseRows && i < rowCount && laterLocators[i - baseRows] >= 0 {
            // (A row used up by an object made and deleted in one transaction has no record.)
            locator = laterLocators[i - baseRows]
        } else {
            return
        }
        // A trip's record runs to four or five lines, its lists' numbers near the end.
        let record = arena.pointer(locator)
        Prefetch.read(record)
        Prefetch.read(record + 64)
        Prefetch.read(record + 128)
        Prefetch.read(record + 192)
    }

    /// Starts loading a row's entity and locator (see `prefetch`).
    @inline(__always) func prefetchColumns(_ row: RowID) {
        let i = Int(row)
        guard i >= 0 && i < baseRows else { return }
        Prefetch.read(baseEntities + i)
        Prefetch.read(baseLocators + i)
    }

    // MARK: Columns

    /// Checks a base row's unit first if it has not been checked.
    @inline(__always) func checked(_ i: Int) {
        if groupState[i >> SnapshotImage.unitShift] != UnitState.checked { checkUnit(i >> SnapshotImage.unitShift) }
    }

    /// Checks a base row's unit as far as reading its type, id and
    /// attributes needs: all but the rows its relationships hold, which cost
    /// a page each to check and which a sorted page or a row's id never reads.
    /// `checked` (every other read of a record, and every change) checks them.
    @inline(__always) func checkedForAttributes(_ i: Int) {
        if !UnitState.isReadable(groupState[i >> SnapshotImage.unitShift]) { checkUnit(i >> SnapshotImage.unitShift, references: false) }
    }

    /// The entity at row `i` (`0..<rowCount`), -1 where none lives.
    /// Its unit is checked first: a reader that has a row's type reads its
    /// record as that type's, so a unit that fails its checks must have
    /// been taken out before its types are read. (A unit whose relationships
    /// fail later is taken out then; its stand-in record reads as any type.)
    @inline(__always) func rawEntity(_ i: Int) -> Int16 {
        if i < baseRows {
            checkedForAttributes(i)
            return baseEntities[i]
        }
        return laterEntities[i - baseRows]
    }

    @inline(__always) func locator(_ i: Int) -> Int64 {
        if i < baseRows {
            checked(i)
            return baseLocators[i]
        }
        return laterLocators[i - baseRows]
    }

    func setEntity(_ i: Int, _ e: Int16) {
        if i < baseRows {
            checked(i)
            noteChange(i)
            image?.noteTypeChange(i)
            baseEntities[i] = e
        } else {
            laterEntities[i - baseRows] = e
        }
    }

    /// `attributesOnly`: the new record differs from the old in attributes
    /// alone, so the rows its relationships hold are still the image's, and
    /// still checked when first read (see `checkedForAttributes`).
    func setLocator(_ i: Int, _ l: Int64, attributesOnly: Bool = false) {
        if i < baseRows {
            if attributesOnly { checkedForAttributes(i) } else { checked(i) }
            noteChange(i)
            baseLocators[i] = l
        } else {
            laterLocators[i - baseRows] = l
        }
    }

    /// Whether the rows past the image's that a journal's replay state
    /// holds read within the bounds of their entities' records, and the
    /// table is as the image left it: the state is taken only then.
    func acceptsReplayed(_ records: ReplayedRecords) -> Bool {
        guard image != nil, rowCount == baseRows, records.rowCount >= baseRows else { return false }
        let bounds = RecordBounds(rows: records.rowCount, lists: records.listCount, bytes: Int.max)
        return records.bytes.withUnsafeBytes { raw in
            records.entries(in: baseRows..<records.rowCount).allSatisfy { e in
                let p = raw.baseAddress! + e.offset
                return e.isEmpty || Int(e.entity) < slotCounts.count && bounds.check(p, end: p + e.count, slots: slotCounts[Int(e.entity)])
            }
        }
    }

    /// Takes what a journal's replay state holds (checked by
    /// `acceptsReplayed`): its lists and the rows past the image's now; the
    /// records and deletes of image rows each when its unit is checked (at
    /// once if it is already), reading nothing of the image before: the
    /// counts say at once what lives. An image row's entity is compared with
    /// the image's then, and a record's bytes checked (a difference is
    /// damage). Returns the rows added and the image rows deleted, with their
    /// entities, for the type index.
    func adoptReplayed(_ records: ReplayedRecords) -> (added: [(row: RowID, entity: Int)], deleted: [(row: RowID, entity: Int)]) {
        lists.adoptReplayed(records)
        var added: [(row: RowID, entity: Int)] = []
        reserve(records.rowCount - baseRows)
        records.bytes.withUnsafeBytes { raw in
            for e in records.entries(in: baseRows..<records.rowCount) {
                guard !e.isEmpty else {
                    appendEmpty()
                    continue
                }
                added.append((RowID(rowCount), Int(e.entity)))
                appendRecord(entity: Int(e.entity), locator: arena.append(UnsafeRawBufferPointer(start: raw.baseAddress! + e.offset, count: e.count)))
            }
        }
        changedBaseRows.reserveCapacity(changedBaseRows.count + records.entries.count)
        // Units checked already (all of them, when the image was checked
        // at open) take their records now: damage shows while the store opens.
        var checkedUnits: [Int] = [], deleted: [(row: RowID, entity: Int)] = []
        for e in records.entries(in: 0..<baseRows) {
            if changedBaseRows[RowID(e.row)] == nil { changedBaseRows[RowID(e.row)] = (e.entity, Self.replayedFromState) }
            if e.isEmpty {
                countByEntity[Int(e.entity)] -= 1
                count -= 1
                deleted.append((RowID(e.row), Int(e.entity)))
            }
            let u = Int(e.row) >> SnapshotImage.unitShift
            if u != checkedUnits.last && (UnitState.isReadable(groupState[u]) || groupState[u] == UnitState.checkedInImage) {
                checkedUnits.append(u)
            }
        }
        replayed = records
        for u in checkedUnits {
            if groupState[u] == UnitState.checkedInImage { checkUnit(u) } else { takeReplayedRecords(u) }
        }
        return (added, deleted)
    }

    /// The entity a changed base row had in the image, if one lived there.
    func imageEntity(_ row: RowID) -> Int? {
        guard let e = changedBaseRows[row]?.entity, e >= 0 else { return nil }
        return Int(e)
    }

    /// Notes that base row `i` changes (before it does), keeping what the image held.
    func noteChange(_ i: Int) {
        if image != nil && changedBaseRows[RowID(i)] == nil { changedBaseRows[RowID(i)] = (baseEntities[i], baseLocators[i]) }
    }

    /// The locator `changedBaseRows` notes for a row whose record came from
    /// a journal's replay state before its unit was checked.
    static let replayedFromState: Int64 = -2

    /// The rows changed or added since the table was loaded, in order.
    var journalChangedRows: [RowID] { changedBaseRows.keys.sorted() + (baseRows..<rowCount).map { RowID($0) } }

    /// The entity and slot value a changed base row had in the image.
    func imageValue(_ row: RowID, slot: Int) -> (entity: Int, value: Value)? {
        guard let (e, noted) = changedBaseRows[row] else { return nil }
        var locator = noted
        if locator == Self.replayedFromState, let image {
            // A row whose record came from a journal's replay state: its image record is read once its unit is checked.
            checkedForAttributes(Int(row))
            locator = image.recordOffset(Int(row))
        }
        guard e >= 0, Int(e) < slotCounts.count, slot < slotCounts[Int(e)], locator >= 0 else { return nil }
        return (Int(e), RecordReader.value(RecordReader.slot(UnsafeRawPointer(arena.pointer(locator)), slot), lists: lists))
    }

    /// Runs the checks of an image's unit of rows; a unit that fails them is
    /// taken out of the table (its rows read as empty, with a harmless record
    /// each) and the damage is noted for the command to answer from the JSON instead.
    private func checkUnit(_ u: Int, references: Bool = true) {
        guard let image else { return }
        switch groupState[u] {
        case UnitState.checkedInImage:
            takeLocators(u, from: image)
            return
        case UnitState.unchecked:
            if image.checkRowUnit(u, references: references) {
                takeLocators(u, from: image)
                if !references { groupState[u] = UnitState.checkedButRelationships }
                return
            }
        case UnitState.checkedButRelationships where references:
            if image.checkUnitReferences(u) {
                groupState[u] = UnitState.checked
                return
            }
        default:
            return
        }
        groupState[u] = UnitState.failed
        neutralize(u)
    }

    /// Whether the id prefixes of base row `i`'s group may be searched: its
    /// image group's checksum holds (or the rows are not an image's).
    func prefixesAreSound(_ i: Int) -> Bool {
        guard let image, !UnitState.isReadable(groupState[i >> SnapshotImage.unitShift]) else { return true }
        if image.groupHashIsSound(i >> SnapshotImage.groupShift) { return true }
        checked(i)  // fails, noting the damage
        return false
    }

    private func neutralize(_ u: Int) {
        // A packed id of zeros, then a nil for as many slots as any entity has:
        // whatever type a reader takes it for, it reads within these bytes.
        let empty = [RecordID.packedMarker] + [UInt8](repeating: 0, count: RecordID.packedCount)
            + [UInt8](repeating: RecordTag.null, count: schema.entities.map { $0.properties.count }.max() ?? 0)
        let locator = empty.withUnsafeBytes { arena.append($0) }
        for r in (u << SnapshotImage.unitShift)..<min(baseRows, (u + 1) << SnapshotImage.unitShift) {
            baseEntities[r] = -1
            baseLocators[r] = locator
        }
    }

    /// Fills a checked unit's record locators from the image (which keeps
    /// them relative to the group, in half the bytes) and marks it ready.
    private func takeLocators(_ u: Int, from image: MappedImage) {
        for r in (u << SnapshotImage.unitShift)..<min(baseRows, (u + 1) << SnapshotImage.unitShift) {
            baseLocators[r] = image.recordOffset(r)
        }
        groupState[u] = UnitState.checked
        if !replayed.entries.isEmpty { takeReplayedRecords(u) }
    }

    /// Puts the replayed records of unit `u`'s rows in place of the image's,
    /// and empties the rows whose objects were deleted. A record outside the
    /// bounds of its entity's, or a row the image holds as another entity,
    /// makes the image damaged: the work is done again from the JSON.
    private func takeReplayedRecords(_ u: Int) {
        let first = u << SnapshotImage.unitShift
        let bounds = RecordBounds(rows: rowCount, lists: lists.count, bytes: Int.max)
        replayed.bytes.withUnsafeBytes { raw in
            for e in replayed.entries(in: first..<min(baseRows, first + (1 << SnapshotImage.unitShift))) {
                let r = Int(e.row), p = raw.baseAddress! + e.offset
                guard baseEntities[r] == e.entity, Int(e.entity) < slotCounts.count,
                      e.isEmpty || bounds.check(p, end: p + e.count, slots: slotCounts[Int(e.entity)]) else {
                    image?.noteDamage("rows the journal's replay state names")
                    continue
                }
                if e.isEmpty {
                    // (Counted out at open, in `adoptReplayed`.)
                    image?.noteTypeChange(r)
                    baseEntities[r] = -1
                } else {
                    baseLocators[r] = arena.append(UnsafeRawBufferPointer(start: p, count: e.count))
                }
            }
        }
    }

    /// Readies the table for about `changes` changes of rows scattered over
    /// the image (a long journal replayed at open): the changed rows get
    /// their room ahead. Each change fills its unit's record locators, a few
    /// bytes on a page of their own, and a fresh page costs a fault and
    /// zeroing it. A 2 MB page zeroes the locators of 262,144 rows at once,
    /// which pays only where the changes would touch most of the 4 KB pages
    /// anyway (about one change per 1,024 rows, 512 rows to a page): a
    /// command's journal of a few thousand lines over a million trips would
    /// otherwise zero every 2 MB page of the locators to fill a few bytes in
    /// each.
    func prepareForScatteredChanges(_ changes: Int) {
        guard image != nil, changes > 0 else { return }
        if changes >= baseRows / Self.rowsPerChangeForHugePages {
            MemoryTuning.preferHugePages(UnsafeMutableRawPointer(baseLocators), byteCount: baseRows * MemoryLayout<Int64>.size)
        }
        changedBaseRows.reserveCapacity(min(changes, baseRows))
        // Changes at least half as many as the pages of the units' states
        // touch most of them, each page first read (a check) and then
        // written: backed now, it saves two faults.
        if changes >= Self.units(baseRows) / 4096 / 2 {
            ZeroedBytes.populate(groupState)
            image?.populateStates()
        }
    }

    /// Scattered changes, one per this many rows or more, get the locators 2 MB pages.
    static let rowsPerChangeForHugePages = 1_024

    /// Units of `n` base rows.
    private static func units(_ n: Int) -> Int { (n + SnapshotImage.unitSize - 1) >> SnapshotImage.unitShift }

    /// What the image's checks found damaged since open, if anything.
    package var imageDamage: String? { image?.damage }

    /// Runs every check of the image now (before workers read the table, or
    /// when the whole table is needed anyway); false when something is damaged.
    func checkEverything() -> Bool {
        guard let image else { return true }
        let units = Self.units(baseRows)
        let unchecked = (0..<units).filter { groupState[$0] == UnitState.unchecked }
        let failed = Set(image.checkEverything(only: unchecked))
        for u in unchecked {
            if failed.contains(u) {
                groupState[u] = UnitState.failed
                neutralize(u)
            } else {
                takeLocators(u, from: image)
            }
        }
        // Workers may read the table next: nothing is left to do on first touch.
        for u in 0..<units where groupState[u] == UnitState.checkedInImage || groupState[u] == UnitState.checkedButRelationships { checkUnit(u) }
        for n in stride(from: 0, to: lists.mappedCount, by: RelationshipLists.groupSize) { _ = lists[n] }
        return image.damage == nil
    }

    package func object(at row: RowID) -> StoredObject? {
        guard let e = entity(at: row) else { return nil }
        let r = record(row)
        return StoredObject(entity: e, id: RecordReader.idString(r),
                            values: RecordReader.values(r, count: schema.entities[e].properties.count, lists: lists))
    }

    package func id(at row: RowID) -> String? {
        guard entity(at: row) != nil else { return nil }
        return RecordReader.idString(attributeRecord(row))
    }

    package func reference(at row: RowID) -> (entity: Int, id: String)? {
        guard let e = entity(at: row) else { return nil }
        return (e, RecordReader.idString(attributeRecord(row)))
    }

    /// One slot of a live row (`.null` for a row with no object).
    @inline(__always) package func value(at row: RowID, slot: Int) -> Value {
        // A slot past the entity's is a row of another type than an index said (only a hostile image says so).
        guard let e = entity(at: row), slot < slotCounts[e] else { return .null }
        let p = RecordReader.slot(attributeRecord(row), slot)
        if RecordReader.isRelationship(p) {
            // The rows it holds are checked before a reader sees them.
            return RecordReader.value(RecordReader.slot(record(row), slot), lists: lists)
        }
        return RecordReader.value(p, lists: lists)
    }

    /// The id a row has or had: also for a deleted row, whose record stays.
    package func recordedID(_ row: RowID) -> String? {
        guard row >= 0, Int(row) < rowCount, locator(Int(row)) >= 0 else { return nil }
        return RecordReader.idString(record(row))
    }

    /// Calls `body` with a row's id bytes (also for a deleted row).
    @inline(__always) func withID<R>(_ row: RowID, _ body: (UnsafeRawBufferPointer) -> R) -> R {
        RecordReader.withID(attributeRecord(row), body)
    }

    /// Checks that all rows (just loaded from a snapshot) are in strictly
    /// increasing id order, so ids are unique and a row can be found by binary
    /// search, and makes them the base rows; the first row out of order otherwise.
    func adoptSnapshotOrder() -> Int? {
        precondition(baseRows == 0 && image == nil)
        let n = rowCount
        let prefixes = UnsafeMutablePointer<UInt64>.allocate(capacity: max(1, n))
        for i in 0..<n {
            // Rows in id order, records in input order: load ahead.
            if i + 8 < n { Prefetch.read(arena.pointer(laterLocators[i + 8])) }
            guard laterEntities[i] >= 0 else {
                prefixes.deallocate()
                return i
            }
            let r = record(RowID(i))
            prefixes[i] = RecordReader.idPrefix(r)
            if i > 0 && !RecordReader.idLess(record(RowID(i - 1)), r) {
                prefixes.deallocate()
                return i
            }
        }
        let entities = UnsafeMutablePointer<Int16>.allocate(capacity: max(1, n))
        let locators = UnsafeMutablePointer<Int64>.allocate(capacity: max(1, n))
        laterEntities.withUnsafeBufferPointer { entities.initialize(from: $0.baseAddress!, count: n) }
        laterLocators.withUnsafeBufferPointer { locators.initialize(from: $0.baseAddress!, count: n) }
        adoptBase(rows: n, entities: entities, locators: locators, prefixes: prefixes)
        laterEntities = []
        laterLocators = []
        return nil
    }

    /// Takes the rows of a snapshot image into this empty table. Nothing is
    /// read but the image's directory: each group of rows is checked when
    /// first touched, unless `checked` says the caller checked them all.
    func adoptImage(_ image: MappedImage, checked: Bool) -> Bool {
        guard rowCount == 0, arena.totalBytes == 0 else { return false }
        // The records are the arena's first block, so a record's offset is its locator.
        guard arena.adoptMapping(start: image.base, length: image.layout.fileBytes, skip: image.layout.records,
                                 count: Int(image.header.recordBytes)) == 0 else { return false }
        let units = Self.units(image.rows)
        // 3: checked, its locators not yet taken from the image.
        let state = ZeroedBytes.allocate(units)
        if checked { state.update(repeating: UnitState.checkedInImage, count: max(1, units)) }
        deallocateBase()
        self.image = image
        adoptBase(rows: image.rows, entities: image.entities, locators: .allocate(capacity: max(1, image.rows)),
                  prefixes: UnsafeMutablePointer(mutating: image.prefixes), state: state,
                  fences: [])  // found through the image's chunks (`groupsBelow`)
        lists.adopt(image)
        countByEntity = image.countByEntity
        count = image.rows
        return true
    }

    /// Takes over the base columns (the old ones were deallocated).
    /// `adoptBase` for rows held in memory (not an image's), every group of rows checked.
    func adoptBase(rows n: Int, entities: UnsafeMutablePointer<Int16>, locators: UnsafeMutablePointer<Int64>,
                           prefixes: UnsafeMutablePointer<UInt64>) {
        let groups = (n + SnapshotImage.groupSize - 1) >> SnapshotImage.groupShift, units = Self.units(n)
        let state = ZeroedBytes.allocate(units)
        state.update(repeating: UnitState.checked, count: max(1, units))
        deallocateBase()
        adoptBase(rows: n, entities: entities, locators: locators, prefixes: prefixes, state: state,
                  fences: (0..<groups).map { prefixes[$0 << SnapshotImage.groupShift] })
    }

    func adoptBase(rows: Int, entities: UnsafeMutablePointer<Int16>, locators: UnsafeMutablePointer<Int64>,
                           prefixes: UnsafeMutablePointer<UInt64>, state: UnsafeMutablePointer<UInt8>, fences: [UInt64]) {
        ZeroedBytes.free(groupState)
        baseEntities = entities
        baseLocators = locators
        basePrefixes = UnsafePointer(prefixes)
        groupState = state
        self.fences = fences
        baseRows = rows
        laterIDsCover = rows
    }

    private func deallocateBase() {
        baseLocators.deallocate()
        guard image == nil else { return }
        baseEntities.deallocate()
        UnsafeMutablePointer(mutating: basePrefixes).deallocate()
    }
}

/// The state of a unit of base rows (`SnapshotImage.unitShift`), a byte
/// each in a table that starts at zero.
enum UnitState {
    static let unchecked: UInt8 = 0
    /// Checked throughout, its locators taken: readable and changeable.
    static let checked: UInt8 = 1
    /// Failed its checks: taken out, its rows empty.
    static let failed: UInt8 = 2
    /// Checked throughout (`checkEverything` before an open), its locators still in the image.
    static let checkedInImage: UInt8 = 3
    /// Checked but for the rows its relationships hold (`checkedForAttributes`).
    static let checkedButRelationships: UInt8 = 4

    /// Whether a unit's types, ids and attributes may be read as they are.
    @inline(__always) static func isReadable(_ state: UInt8) -> Bool {
        state == checked || state == checkedButRelationships
    }
}
