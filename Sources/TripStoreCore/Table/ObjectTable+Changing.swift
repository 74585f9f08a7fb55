import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Changing the table: rows appended, replaced and removed, values set, and
/// records encoded into the arena. Base rows are changed through their
/// locators, so an image row that changes is read from memory from then on.
extension ObjectTable {
    package func reserve(_ n: Int) {
        laterEntities.reserveCapacity(laterEntities.count + n)
        laterLocators.reserveCapacity(laterLocators.count + n)
    }

    /// Adds an object at the next row; the caller has checked that its id is new.
    @discardableResult
    func append(_ object: StoredObject) -> RowID {
        let row = RowID(rowCount)
        laterEntities.append(Int16(object.entity))
        laterLocators.append(encode(object, reusing: nil))
        countByEntity[object.entity] += 1
        count += 1
        return row
    }

    /// Takes a bulk import's rows, sorted by id, into this empty table as
    /// its base rows (as `adoptSnapshotOrder` does a loaded snapshot's):
    /// the table owns the columns from here on. Only rows whose id prefixes
    /// tie read their ids to check the order; the first row out of order, or nil.
    func adoptRowsInIDOrder(_ n: Int, entities: UnsafeMutablePointer<Int16>, locators: UnsafeMutablePointer<Int64>,
                            prefixes: UnsafeMutablePointer<UInt64>) -> Int? {
        precondition(rowCount == 0 && image == nil)
        adoptBase(rows: n, entities: entities, locators: locators, prefixes: prefixes)
        for i in 0..<n {
            guard entities[i] >= 0 && Int(entities[i]) < countByEntity.count else { return i }
            countByEntity[Int(entities[i])] += 1
            guard i > 0 && prefixes[i - 1] >= prefixes[i] else { continue }
            guard prefixes[i - 1] == prefixes[i], RecordReader.idLess(record(RowID(i - 1)), record(RowID(i))) else { return i }
        }
        count = n
        return nil
    }

    /// Adds a record encoded elsewhere (by a migration's workers), giving
    /// the to-many slots at `lists`' offsets new lists of those targets.
    func append(entity: Int, record: UnsafeRawBufferPointer,
                lists: some Sequence<(offset: Int, targets: Slice<UnsafeBufferPointer<RowID>>)>) -> RowID {
        let row = RowID(rowCount)
        let locator = arena.append(record)
        let p = arena.pointer(locator)
        for (offset, targets) in lists { fill(p + offset, toMany: true, targets) }
        appendRecord(entity: entity, locator: locator)
        return row
    }

    /// Adds a record already encoded (loading a snapshot); to-many slots hold `noReference` until linked.
    func appendRecord(entity: Int, locator: Int64) {
        laterEntities.append(Int16(entity))
        laterLocators.append(locator)
        countByEntity[entity] += 1
        count += 1
    }

    /// Puts an object at a row reserved for it (`row == rowCount`) or replaces one.
    func set(_ object: StoredObject, at row: RowID) {
        let i = Int(row)
        if i == rowCount {
            append(object)
            return
        }
        let old: UnsafeRawPointer? = locator(i) >= 0 ? record(row) : nil
        if rawEntity(i) < 0 {
            countByEntity[object.entity] += 1
            count += 1
            setEntity(i, Int16(object.entity))
        } else if let old {
            arena.forget(RecordReader.length(old, count: schema.entities[object.entity].properties.count))
        }
        setLocator(i, encode(object, reusing: old))
    }

    /// Uses up a row for an object created and deleted in the same transaction.
    func appendEmpty() {
        laterEntities.append(-1)
        laterLocators.append(-1)
    }

    /// Where a row's slot is in its record, to be filled in place.
    @inline(__always) func slotPointer(_ row: RowID, _ slot: Int) -> UnsafeMutableRawPointer {
        UnsafeMutableRawPointer(mutating: RecordReader.slot(record(row), slot))
    }

    /// Fills a relationship slot (of a record just loaded) in place.
    @inline(__always) func fill(_ p: UnsafeMutableRawPointer, toMany: Bool, _ targets: Slice<UnsafeBufferPointer<RowID>>) {
        if !toMany {
            if let t = targets.first { fill(p, toOne: t) }
        } else if targets.isEmpty {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(0), as: Int32.self)
        } else {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(lists.append(Array(targets))).littleEndian, as: Int32.self)
        }
    }

    /// Sets a to-many slot to list `number` of the lists a bulk import built.
    @inline(__always) func fill(_ p: UnsafeMutableRawPointer, list number: Int) {
        p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
        (p + 1).storeBytes(of: Int32(number).littleEndian, as: Int32.self)
    }

    @inline(__always) func fill(_ p: UnsafeMutableRawPointer, toOne target: RowID) {
        p.storeBytes(of: RecordTag.toOne, as: UInt8.self)
        (p + 1).storeBytes(of: target.littleEndian, as: Int32.self)
    }

    func appendReference(_ target: RowID, to row: RowID, slot: Int) {
        if Int(row) < baseRows { noteChange(Int(row)) }
        let p = slotPointer(row, slot)
        if let n = RecordReader.listNumber(p), n != 0 {
            lists[n].append(target)
        } else {
            p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
            (p + 1).storeBytes(of: Int32(lists.append([target])).littleEndian, toByteOffset: 0, as: Int32.self)
        }
    }

    func setValue(_ value: Value, row: RowID, slot: Int) {
        guard let e = entity(at: row) else { return }
        guard schema.entities[e].properties[slot].relationship != nil else {
            // The record again with this slot's bytes replaced: the others
            // are copied as they are, not decoded and encoded again.
            let old = attributeRecord(row)
            let start = RecordReader.slot(old, slot), end = RecordReader.skip(start)
            let length = RecordReader.length(old, count: slotCounts[e])
            scratch.removeAll()
            scratch.bytes(UnsafeRawBufferPointer(start: old, count: start - old))
            RecordWriter.attribute(value, to: &scratch)
            scratch.bytes(UnsafeRawBufferPointer(start: end, count: old + length - end))
            arena.forget(length)
            setLocator(Int(row), arena.append(scratch.contents), attributesOnly: true)
            return
        }
        // Changed in place: noted, so that a journal's replay state written anew holds the row.
        if Int(row) < baseRows { noteChange(Int(row)) }
        let p = UnsafeMutableRawPointer(mutating: RecordReader.slot(record(row), slot))
        switch value {
        case .toOne(let r):
            p.storeBytes(of: RecordTag.toOne, as: UInt8.self)
            (p + 1).storeBytes(of: r.littleEndian, as: Int32.self)
        case .toMany(let l):
            if let n = RecordReader.listNumber(p), n != 0 {
                if !lists.holds(n, l) { lists[n] = l }
            } else if l.isEmpty {
                p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
                (p + 1).storeBytes(of: Int32(0), as: Int32.self)
            } else {
                p.storeBytes(of: RecordTag.toMany, as: UInt8.self)
                (p + 1).storeBytes(of: Int32(lists.append(l)).littleEndian, as: Int32.self)
            }
        default:
            p.storeBytes(of: RecordTag.noReference, as: UInt8.self)
        }
    }

    func remove(_ row: RowID) {
        guard let e = entity(at: row) else { return }
        if Int(row) >= idOrderedRows && Int(row) < laterIDsCover {
            laterIDs[RecordReader.idString(record(row))] = nil
        }
        arena.forget(RecordReader.length(record(row), count: schema.entities[e].properties.count))
        countByEntity[e] -= 1
        count -= 1
        setEntity(Int(row), -1)
    }

    /// Writes an object's record; to-many slots keep the list numbers of `old`.
    private func encode(_ object: StoredObject, reusing old: UnsafeRawPointer?) -> Int64 {
        scratch.removeAll()
        RecordWriter.id(object.id, to: &scratch)
        var oldSlot = old.map { RecordReader.firstSlot($0) }
        for p in schema.entities[object.entity].properties {
            let v = object.values[p.slot]
            let reuse = oldSlot.flatMap { RecordReader.listNumber($0) }.flatMap { $0 == 0 ? nil : $0 }
            if let o = oldSlot { oldSlot = RecordReader.skip(o) }
            guard p.relationship != nil else {
                RecordWriter.attribute(v, to: &scratch)
                continue
            }
            switch v {
            case .toOne(let r): RecordWriter.reference(tag: RecordTag.toOne, r, to: &scratch)
            case .toMany(let l):
                let n: Int
                if let reuse {
                    n = reuse
                    // Set only when it changes: a list set is one a journal's replay state writes again.
                    if !lists.holds(n, l) { lists[n] = l }
                } else if l.isEmpty {
                    n = 0
                } else {
                    n = lists.append(l)
                }
                RecordWriter.reference(tag: RecordTag.toMany, Int32(n), to: &scratch)
            default: RecordWriter.reference(tag: RecordTag.noReference, 0, to: &scratch)
            }
        }
        return arena.append(scratch.contents)
    }
}
