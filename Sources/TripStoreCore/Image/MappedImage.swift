import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A snapshot image mapped into memory (see `SnapshotImage`), and the checks
/// of its pieces as they are first touched.
///
/// The mapping is private and writable: the table changes image rows in place
/// (a delete, a new record location, a relationship slot) only after their
/// group has passed its checks, and the changes never reach the file.
final class MappedImage: ListSource {
    let header: SnapshotImage.Header
    let layout: SnapshotImage.Layout
    let schema: Schema
    /// The whole file, mapped; the arena owns (and unmaps) it.
    let base: UnsafeMutableRawPointer
    let rows: Int
    let listCount: Int
    let entities: UnsafeMutablePointer<Int16>
    /// Per row, where its record starts among its group's records.
    let offsets: UnsafePointer<UInt32>
    let prefixes: UnsafePointer<UInt64>
    /// Per unit of rows, the checksum of its records.
    let unitHashes: UnsafePointer<UInt64>
    let records: UnsafeRawPointer
    private let listStarts: UnsafePointer<Int64>
    private let listElements: UnsafePointer<Int32>
    /// Per list group: 0 not checked, 1 good, 2 damaged.
    private let listGroupState: UnsafeMutablePointer<UInt8>
    /// Per row group, its checksum and fence: 0 not checked, 1 good, 2 damaged.
    private let rowHashState: UnsafeMutablePointer<UInt8>
    /// Per chunk of the row and list group tables: 0 not checked, 1 good, 2 damaged.
    private let rowChunkState: UnsafeMutablePointer<UInt8>
    private let listChunkState: UnsafeMutablePointer<UInt8>
    /// The first thing found damaged after open, if anything was.
    private(set) var damage: String?
    /// The types the image gave rows the table has since changed (`noteTypeChange`).
    private var entitiesBeforeChange: [Int: Int16] = [:]

    /// Whether entity `e` is a kind of entity `d`, at `e * schema.entities.count + d`:
    /// flat, so a check of each related row's type counts no references to arrays.
    private let kinds: UnsafeMutablePointer<Bool>
    private let plans: [[ImageSlotCheck]]
    private let declaredIndexes: [(entity: Int, property: Property)]
    /// Each saved value index once first used (`.some(nil)` when it failed its checks).
    private var savedIndexes: [SavedValueIndex??]

    /// Maps `fd` and checks its header and directory against `binding`; nil
    /// when the image does not belong to it or fails a check. An image of
    /// another copy of the same snapshot is mapped too: the caller checks
    /// `header.binding.file` (see `SnapshotImage.Binding.sameSnapshot`).
    init?(fd: Int32, schema: Schema, binding: SnapshotImage.Binding, accept: (SnapshotImage.Header) -> Bool) {
        guard let size = try? FileIO.size(fd, path: ""), size >= SnapshotImage.Header.byteCount else { return nil }
        var headerBytes = [UInt8](repeating: 0, count: SnapshotImage.Header.byteCount)
        guard headerBytes.withUnsafeMutableBytes({ FileIO.read(fd, into: $0, at: 0) }) == headerBytes.count,
              let h = headerBytes.withUnsafeBytes(SnapshotImage.Header.decode), h.binding.sameSnapshot(as: binding), accept(h),
              h.entities == Int64(schema.entities.count), h.valueIndexes == Int64(StoreIndexes.declared(schema).count),
              let layout = SnapshotImage.Layout(h),
              // Every byte a section names must be in the file before it is mapped
              // (a mapped page past the end is a crash, not an error).
              layout.fileBytes == size,
              let mapped = FileIO.mapPrivate(fd, length: size, offset: 0) else { return nil }
        header = h
        self.layout = layout
        self.schema = schema
        base = mapped
        rows = Int(h.rows)
        listCount = Int(h.lists)
        entities = (mapped + layout.entities).bindMemory(to: Int16.self, capacity: rows)
        offsets = UnsafePointer((mapped + layout.offsets).bindMemory(to: UInt32.self, capacity: rows))
        prefixes = UnsafePointer((mapped + layout.prefixes).bindMemory(to: UInt64.self, capacity: rows))
        unitHashes = UnsafePointer((mapped + layout.unitHashes).bindMemory(to: UInt64.self, capacity: layout.rowUnits))
        records = UnsafeRawPointer(mapped + layout.records)
        listStarts = UnsafePointer((mapped + layout.listStarts).bindMemory(to: Int64.self, capacity: listCount + 1))
        listElements = UnsafePointer((mapped + layout.listElements).bindMemory(to: Int32.self, capacity: Int(h.listElements)))
        listGroupState = ZeroedBytes.allocate(layout.listGroups)
        rowHashState = ZeroedBytes.allocate(layout.rowGroups)
        rowChunkState = ZeroedBytes.allocate(layout.rowChunks)
        listChunkState = ZeroedBytes.allocate(layout.listChunks)
        let entityCount = schema.entities.count
        kinds = .allocate(capacity: max(1, entityCount * entityCount))
        for e in 0..<entityCount { for d in 0..<entityCount { kinds[e * entityCount + d] = schema.isKind(e, of: d) } }
        plans = schema.entities.map { e in e.properties.map(ImageSlotCheck.init) }
        declaredIndexes = StoreIndexes.declared(schema)
        savedIndexes = Array(repeating: nil, count: declaredIndexes.count)
        guard directoryIsSound() else {
            FileIO.unmap(mapped, length: size)
            return nil
        }
    }

    deinit {
        kinds.deallocate()
        ZeroedBytes.free(listGroupState)
        ZeroedBytes.free(rowHashState)
        ZeroedBytes.free(rowChunkState)
        ZeroedBytes.free(listChunkState)
    }

    /// Backs the tables of which groups passed their checks with pages now
    /// (see `ObjectTable.prepareForScatteredChanges`).
    func populateStates() {
        ZeroedBytes.populate(rowHashState)
        ZeroedBytes.populate(rowChunkState)
    }

    /// Writes the image file `source` (the one mapped) again at `path`,
    /// through a temporary file and a rename as every image is written,
    /// bound to `binding`: what binds the image of a copied folder to its
    /// own copy of the snapshot. Copied a few MB at a time from the file,
    /// not through the mapping, which would then hold every page, and
    /// written in the pieces of a file that is mapped. False when it could
    /// not be written (nothing is left behind: it is a cache).
    func writeBound(to binding: SnapshotImage.Binding, from source: Int32, path: String) -> Bool {
        var h = header
        h.binding = binding
        let temp = path + ".tmp"
        guard let fd = try? FileIO.createFresh(temp, O_WRONLY) else { return false }
        var buffer = [UInt8](repeating: 0, count: 4 << 20)
        var at = 0, written = true
        while written && at < layout.fileBytes {
            let want = min(buffer.count, layout.fileBytes - at)
            written = buffer.withUnsafeMutableBytes { b in
                FileIO.read(source, into: UnsafeMutableRawBufferPointer(rebasing: b[0..<want]), at: at) == want
                    && (try? FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: b[0..<want]), at: at, path: temp,
                                             piece: FileIO.mappedWritePiece)) != nil
            }
            at += want
        }
        written = written && FileIO.write(fd, h.encoded(), at: 0)
        FileIO.close(fd)
        if written, (try? FileIO.rename(temp, path)) != nil { return true }
        FileIO.unlink(temp)
        return false
    }

    /// Unmaps the file when the image is not used after all.
    func discard() { FileIO.unmap(base, length: layout.fileBytes) }

    // MARK: The directory, checked at open

    private func directoryIsSound() -> Bool {
        let directory = UnsafeRawBufferPointer(start: base + layout.directory.lowerBound, count: layout.directory.count)
        guard PageHash.hash(directory) == header.directoryHash else { return false }
        var previousStart: Int64 = 0
        for e in 0...schema.entities.count {
            let s = typeStart(e)
            guard s >= previousStart, s <= header.rows else { return false }
            previousStart = s
        }
        return typeStart(0) == 0 && previousStart == header.rows
    }

    // MARK: The group tables, a chunk at a time

    /// Whether chunk `c` of the row group table holds: its checksum, its
    /// first fence, fences and record ends in order within it and within
    /// the records (the last chunk ending where they end). Checked once.
    func rowChunkIsSound(_ c: Int) -> Bool {
        if rowChunkState[c] == 0 {
            rowChunkState[c] = rowChunkHolds(c) ? 1 : 2
            if rowChunkState[c] == 2 { noteDamage("the row group table from group \(c << SnapshotImage.chunkShift)") }
        }
        return rowChunkState[c] == 1
    }

    private func rowChunkHolds(_ c: Int) -> Bool {
        let (from, to) = SnapshotImage.chunk(c, of: layout.rowGroups)
        let entries = UnsafeRawBufferPointer(start: base + layout.rowGroupTable + from * SnapshotImage.Layout.rowGroupEntry,
                                             count: (to - from) * SnapshotImage.Layout.rowGroupEntry)
        let chunk = UnsafeRawPointer(base + layout.rowChunkTable + c * 16)
        guard from < to, PageHash.hash(entries, seed: UInt64(c)) == chunk.load(as: UInt64.self),
              rawRowGroup(from).fence == chunk.load(fromByteOffset: 8, as: UInt64.self) else { return false }
        var previousFence: UInt64 = 0, previousEnd: Int64 = 0
        for g in from..<to {
            let (_, fence, end) = rawRowGroup(g)
            guard fence >= previousFence, end >= previousEnd, end <= header.recordBytes else { return false }
            previousFence = fence
            previousEnd = end
        }
        return to < layout.rowGroups || previousEnd == header.recordBytes
    }

    /// Whether chunk `c` of the list group table matches its checksum. Checked once.
    private func listChunkIsSound(_ c: Int) -> Bool {
        if listChunkState[c] == 0 {
            let (from, to) = SnapshotImage.chunk(c, of: layout.listGroups)
            let entries = UnsafeRawBufferPointer(start: base + layout.listGroupTable + from * 8, count: (to - from) * 8)
            let expected = UnsafeRawPointer(base + layout.listChunkTable).load(fromByteOffset: c * 8, as: UInt64.self)
            listChunkState[c] = PageHash.hash(entries, seed: UInt64(c)) == expected ? 1 : 2
            if listChunkState[c] == 2 { noteDamage("the list group table from group \(from)") }
        }
        return listChunkState[c] == 1
    }

    /// A row group's checksum, first id prefix, and the end of its records,
    /// once its chunk of the table has passed its checks (zeros otherwise,
    /// which no group's checksum matches: see `groupHashHolds`).
    @inline(__always) func rowGroup(_ g: Int) -> (hash: UInt64, fence: UInt64, end: Int64) {
        guard rowChunkIsSound(g >> SnapshotImage.chunkShift) else { return (0, 0, 0) }
        return rawRowGroup(g)
    }

    @inline(__always) private func rawRowGroup(_ g: Int) -> (hash: UInt64, fence: UInt64, end: Int64) {
        let p = UnsafeRawPointer(base + layout.rowGroupTable + g * SnapshotImage.Layout.rowGroupEntry)
        return (p.load(as: UInt64.self), p.load(fromByteOffset: 8, as: UInt64.self), p.load(fromByteOffset: 16, as: Int64.self))
    }

    /// How many row groups start below id prefix `k`: the chunks' first
    /// fences (checked at open) find the chunk, and that chunk's entries the group.
    func groupsBelow(_ k: UInt64) -> Int {
        var lo = 0, hi = layout.rowChunks
        let chunkFences = UnsafeRawPointer(base + layout.rowChunkTable)
        while lo < hi {
            let mid = (lo + hi) / 2
            if chunkFences.load(fromByteOffset: mid * 16 + 8, as: UInt64.self) < k { lo = mid + 1 } else { hi = mid }
        }
        guard lo > 0 else { return 0 }
        let (from, to) = SnapshotImage.chunk(lo - 1, of: layout.rowGroups)
        guard rowChunkIsSound(lo - 1) else { return from }
        var a = from, b = to
        while a < b {
            let mid = (a + b) / 2
            if rawRowGroup(mid).fence < k { a = mid + 1 } else { b = mid }
        }
        return a
    }

    /// Where row `r`'s record starts in the records (its group checked first).
    @inline(__always) func recordOffset(_ r: Int) -> Int64 {
        let g = r >> SnapshotImage.groupShift
        return (g == 0 ? 0 : rowGroup(g - 1).end) + Int64(offsets[r])
    }

    private func typeStart(_ e: Int) -> Int64 { UnsafeRawPointer(base + layout.typeStarts).load(fromByteOffset: e * 8, as: Int64.self) }

    /// The number of rows of each entity (from the checked directory).
    var countByEntity: [Int] { (0..<schema.entities.count).map { Int(typeStart($0 + 1) - typeStart($0)) } }

    // MARK: Pieces checked when first touched

    /// An entity's rows, ascending, once they pass their checksum and checks;
    /// nil (and `damage` set) when they do not.
    func typeRows(_ e: Int) -> [RowID]? {
        guard let slice = checkedTypeRows(e) else { return damaged("the type index of \(schema.entities[e].name)") }
        return Array(slice)
    }

    /// An entity's rows in the mapping, if they pass their checks.
    private func checkedTypeRows(_ e: Int) -> UnsafeBufferPointer<RowID>? {
        let start = Int(typeStart(e)), end = Int(typeStart(e + 1))
        let p = UnsafeRawPointer(base + layout.typeRows).bindMemory(to: RowID.self, capacity: rows)
        let slice = UnsafeBufferPointer(start: p + start, count: end - start)
        let expected = UnsafeRawPointer(base + layout.typeHashes).load(fromByteOffset: e * 8, as: UInt64.self)
        guard PageHash.hash(UnsafeRawBufferPointer(slice)) == expected else { return nil }
        var previous: RowID = -1
        for r in slice {
            // -1: deleted in this process since (the rows were read before that).
            guard r > previous, Int(r) < rows, Int(entities[Int(r)]) == e || entities[Int(r)] == -1 else { return nil }
            previous = r
        }
        return slice
    }

    /// Declared value index `k` (in `StoreIndexes.declared` order), used in
    /// place; nil (and `damage` set) when its entry or head fails its checks.
    func savedIndex(_ k: Int) -> SavedValueIndex? {
        guard k >= 0, k < savedIndexes.count else { return nil }
        if let known = savedIndexes[k] { return known }
        let entry = UnsafeRawPointer(base + layout.valueIndexTable + k * SnapshotImage.Layout.valueIndexEntry)
        let index = SavedValueIndex(image: self, entry: entry, entity: declaredIndexes[k].entity, property: declaredIndexes[k].property)
        if index == nil { noteDamage("the index of \(schema.entities[declaredIndexes[k].entity].name).\(declaredIndexes[k].property.name)") }
        savedIndexes[k] = .some(index)
        return index
    }

    /// Checks the rows of unit `u` (see `SnapshotImage.unitShift`): their
    /// group's checksum and fence (once per group), then the unit's records'
    /// checksum and each record's bounds, id order and values against the
    /// schema; with `references`, also the type of every row its
    /// relationships hold and their lists (else `checkUnitReferences` does
    /// that later). False (and `damage` set) when they fail.
    func checkRowUnit(_ u: Int, references: Bool = true) -> Bool {
        if unitIsSound(u, references: references) { return true }
        noteDamage("rows \(unitRows(u))")
        return false
    }

    /// The second half of a unit's checks, for a unit `checkRowUnit` passed
    /// without its references: every related row is of the relationship's
    /// type and every list passes its checks. False (and `damage` set) when not.
    func checkUnitReferences(_ u: Int) -> Bool {
        for r in unitRows(u) {
            // By the type the image gave it: a row deleted since keeps its record in the image.
            let e = Int(entities[r] == -1 ? entitiesBeforeChange[r] ?? -1 : entities[r])
            guard let (s, _) = recordRange(r), e >= 0, e < plans.count,
                  valuesAreSound(records + Int(s), entity: e, references: .only) else {
                noteDamage("rows \(unitRows(u))")
                return false
            }
        }
        return true
    }

    private func unitRows(_ u: Int) -> Range<Int> {
        let first = u << SnapshotImage.unitShift
        return first..<min(rows, first + SnapshotImage.unitSize)
    }

    /// Whether unit `u`'s group, records' checksum and records hold.
    private func unitIsSound(_ u: Int, references: Bool = true) -> Bool {
        let range = unitRows(u)
        guard groupHashIsSound(range.lowerBound >> SnapshotImage.groupShift),
              let (start, _) = recordRange(range.lowerBound), let (_, end) = recordRange(range.upperBound - 1), start <= end,
              SnapshotImage.unitHash(u, records: UnsafeRawBufferPointer(start: records + Int(start), count: Int(end - start))) == unitHashes[u]
        else { return false }
        return rowsAreSound(range, references: references ? .also : .skipped)
    }

    /// Whether row group `g`'s checksum and fence hold, checked once; the id
    /// prefixes of a sound group may be searched (a row found is checked
    /// with its unit before it is read).
    func groupHashIsSound(_ g: Int) -> Bool {
        if rowHashState[g] == 0 { rowHashState[g] = groupHashHolds(g) ? 1 : 2 }
        return rowHashState[g] == 1
    }

    /// The checksum over the group's columns and its units' checksums, its
    /// fence, its records' range (the checked directory's), its prefixes in
    /// order and its entities in the schema.
    private func groupHashHolds(_ g: Int) -> Bool {
        let first = g << SnapshotImage.groupShift, stop = min(rows, first + SnapshotImage.groupSize)
        guard first < stop, rowChunkIsSound(g >> SnapshotImage.chunkShift),
              g == 0 || rowChunkIsSound((g - 1) >> SnapshotImage.chunkShift) else { return false }
        let (expected, fence, end) = rowGroup(g)
        let start = g == 0 ? 0 : rowGroup(g - 1).end
        guard start <= end else { return false }
        let firstUnit = first >> SnapshotImage.unitShift, stopUnit = (stop + SnapshotImage.unitSize - 1) >> SnapshotImage.unitShift
        let h = SnapshotImage.groupHash(g, entities: UnsafeRawBufferPointer(start: entities + first, count: (stop - first) * 2),
                                        offsets: UnsafeRawBufferPointer(start: offsets + first, count: (stop - first) * 4),
                                        prefixes: UnsafeRawBufferPointer(start: prefixes + first, count: (stop - first) * 8),
                                        unitHashes: UnsafeRawBufferPointer(start: unitHashes + firstUnit, count: (stopUnit - firstUnit) * 8))
        guard h == expected, prefixes[first] == fence, offsets[first] == 0 else { return false }
        for r in (first + 1)..<stop where prefixes[r] < prefixes[r - 1] { return false }
        // Every row's type one of the schema's, before any unit of the group is read.
        for r in first..<stop where entities[r] < 0 || Int(entities[r]) >= plans.count { return false }
        return true
    }

    /// Where row `r`'s record starts and ends, if within its group's records
    /// and in order with its neighbours.
    private func recordRange(_ r: Int) -> (start: Int64, end: Int64)? {
        let g = r >> SnapshotImage.groupShift
        let groupStart = g == 0 ? 0 : rowGroup(g - 1).end, groupEnd = rowGroup(g).end
        let last = min(rows, (g + 1) << SnapshotImage.groupShift) - 1
        let start = groupStart + Int64(offsets[r]), end = r < last ? groupStart + Int64(offsets[r + 1]) : groupEnd
        guard start >= groupStart, start <= end, end <= groupEnd else { return nil }
        return (start, end)
    }

    /// The records of `range` (rows of one group whose checksum held): each
    /// within its bytes, its id prefix and order (after the row before it,
    /// in the group) and its values against the schema.
    private func rowsAreSound(_ range: Range<Int>, references: ReferenceChecks) -> Bool {
        let bounds = RecordBounds(rows: rows, lists: listCount, bytes: Int(header.recordBytes))
        let groupFirst = (range.lowerBound >> SnapshotImage.groupShift) << SnapshotImage.groupShift
        var previousRecord: UnsafeRawPointer?
        if range.lowerBound > groupFirst {
            // The id of the row before, for the order (the rest is its unit's
            // to check; it may be a row this process has deleted since).
            guard let (s, end) = recordRange(range.lowerBound - 1),
                  bounds.idEnd(records + Int(s), end: records + Int(end)) != nil else { return false }
            previousRecord = records + Int(s)
        }
        for r in range {
            let e = Int(entities[r])
            guard let (s, end) = recordRange(r), e >= 0, e < plans.count else { return false }
            let record = records + Int(s)
            guard bounds.check(record, end: records + Int(end), slots: plans[e].count),
                  prefixes[r] == RecordReader.idPrefix(record),
                  previousRecord.map({ RecordReader.idLess($0, record) }) ?? true,
                  valuesAreSound(record, entity: e, references: references) else {
                return false
            }
            previousRecord = record
        }
        return true
    }

    /// Every value fits its slot as the schema declares it: the tag of each
    /// attribute's type (nil only where optional, an enum value one of its
    /// cases), and every related row an object of the relationship's type
    /// (or a row deleted since, whose own group is checked when it is read).
    private func valuesAreSound(_ record: UnsafeRawPointer, entity: Int, references: ReferenceChecks) -> Bool {
        var p = RecordReader.firstSlot(record)
        return plans[entity].withUnsafeBufferPointer { checks in
            for k in checks.indices {
                // Through a pointer: a copy of the check would count references to its arrays, slot by slot.
                let check = checks.baseAddress! + k
                let value = p
                p = RecordReader.skip(p)
                let tag = value.load(as: UInt8.self)
                let destination = check.pointee.destination
                if destination >= 0 {
                    switch tag {
                    case RecordTag.noReference: continue
                    case RecordTag.toOne where !check.pointee.toMany:
                        guard references == .skipped
                                || fits(Int(Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))), destination) else { return false }
                    case RecordTag.toMany where check.pointee.toMany:
                        guard references != .skipped else { continue }
                        guard let n = RecordReader.listNumber(value), let list = checkedList(n) else { return false }
                        for t in list where !fits(Int(t), destination) { return false }
                    default: return false
                    }
                    continue
                }
                if references == .only { continue }
                if tag == RecordTag.null {
                    guard check.pointee.optional else { return false }
                    continue
                }
                guard tag < 32, check.pointee.tagMask & (1 << UInt32(tag)) != 0 else { return false }
                if check.pointee.isNested, let nested = check.pointee.nested,
                   !ImageSlotCheck.fits(value, nested, optional: check.pointee.optional) { return false }
                if check.pointee.isEnumeration, let cases = check.pointee.cases {
                    var q = value + 1
                    let n = RecordReader.varint(&q)
                    let bytes = UnsafeRawBufferPointer(start: q, count: n)
                    guard cases.contains(where: { $0.elementsEqual(bytes) }) else { return false }
                }
            }
            return true
        }
    }

    /// Which of a record's values `valuesAreSound` checks: a relationship's
    /// rows cost a page each to check (their types, their lists), so a read
    /// of attributes and ids checks them only when a reader first needs them.
    private enum ReferenceChecks {
        case also, skipped, only
    }

    /// Whether row `t` may stand in a relationship to `destination`: by the
    /// type the image gave it, also once this process has deleted it (a
    /// record checked later must not hold a row of another type because its
    /// type now reads as none). A row the image itself says is empty fails
    /// its own unit's checks when read.
    @inline(__always) private func fits(_ t: Int, _ destination: Int) -> Bool {
        var e = Int(entities[t])
        if e == -1, let before = entitiesBeforeChange[t] { e = Int(before) }
        let count = plans.count
        return e == -1 || (e >= 0 && e < count && kinds[e * count + destination])
    }

    /// Called before the table changes base row `row`'s type in the mapping
    /// (a delete): keeps the type the image gave it, for `fits`.
    func noteTypeChange(_ row: Int) {
        if entitiesBeforeChange[row] == nil { entitiesBeforeChange[row] = entities[row] }
    }

    /// List `n`'s rows in the mapping, once its group passed its checks.
    private func checkedList(_ n: Int) -> UnsafeBufferPointer<Int32>? {
        guard n >= 0, n < listCount, checkListGroup(n >> SnapshotImage.groupShift) else { return nil }
        return UnsafeBufferPointer(start: listElements + Int(listStarts[n]), count: Int(listStarts[n + 1] - listStarts[n]))
    }

    /// Checks list group `g` once: starts in order within the elements, the
    /// checksum, and every element a row of the image.
    private func checkListGroup(_ g: Int) -> Bool {
        if listGroupState[g] != 0 { return listGroupState[g] == 1 }
        let ok = listGroupIsSound(g)
        if !ok { noteDamage("lists \(g << SnapshotImage.groupShift) and on") }
        return ok
    }

    /// Checks list group `g` and records its state (each group by one thread only).
    private func listGroupIsSound(_ g: Int) -> Bool {
        let first = g << SnapshotImage.groupShift, stop = min(listCount, first + SnapshotImage.groupSize)
        var ok = first > 0 || listStarts[0] == 0
        // From 0: a group's first start is checked like the others before anything is hashed from it.
        var previous: Int64 = 0
        for n in first...stop where ok {
            let s = listStarts[n]
            ok = s >= previous && s <= header.listElements
            previous = s
        }
        if ok {
            let from = Int(listStarts[first]), to = Int(listStarts[stop])
            var h = PageHash.hash(UnsafeRawBufferPointer(start: listStarts + first, count: (stop - first + 1) * 8), seed: UInt64(g))
            h = PageHash.hash(UnsafeRawBufferPointer(start: listElements + from, count: (to - from) * 4), seed: h)
            let expected = UnsafeRawPointer(base + layout.listGroupTable).load(fromByteOffset: g * 8, as: UInt64.self)
            ok = listChunkIsSound(g >> SnapshotImage.chunkShift) && h == expected && (first > 0 || listStarts[1] == 0)
            for k in from..<to where ok { ok = listElements[k] >= 0 && Int(listElements[k]) < rows }
        }
        listGroupState[g] = ok ? 1 : 2
        return ok
    }

    /// Never in place: a list group is checked before it is read.
    func list(_ n: Int) -> UnsafeBufferPointer<RowID>? { nil }

    /// List group `g` as arrays (every list empty when the group is damaged,
    /// which `damage` then reports).
    func copyListGroup(_ g: Int) -> [[RowID]] {
        let first = g << SnapshotImage.groupShift, stop = min(listCount, first + SnapshotImage.groupSize)
        guard checkListGroup(g) else { return Array(repeating: [], count: stop - first) }
        return (first..<stop).map { n in
            Array(UnsafeBufferPointer(start: listElements + Int(listStarts[n]), count: Int(listStarts[n + 1] - listStarts[n])))
        }
    }

    private func damaged<T>(_ what: String) -> T? {
        noteDamage(what)
        return nil
    }

    func noteDamage(_ what: String) {
        if damage == nil { damage = "\(what) fail their checks" }
    }

    /// Checks every list group not yet checked and the units of rows `only`
    /// names (all by default) on all cores; the units that failed (their
    /// damage noted). A unit the table has changed in place since it passed
    /// must not be named (its group's checksum, checked before, is not
    /// checked again).
    func checkEverything(only: [Int]? = nil) -> [Int] {
        let shared = Shared(value: self)
        // Most pieces are about to be read: in big reads, not a page per fault.
        let most = only.map { $0.count * 2 > rows >> SnapshotImage.unitShift } ?? true
        if most { FileIO.willRead(base, length: layout.fileBytes, all: true) }
        defer { if most { FileIO.willRead(base, length: layout.fileBytes, all: false) } }
        let listGroups = layout.listGroups
        // The group tables' chunks first, here: the workers below only read their states.
        for c in 0..<layout.rowChunks { _ = rowChunkIsSound(c) }
        for c in 0..<layout.listChunks { _ = listChunkIsSound(c) }
        let units = only ?? Array(0..<((rows + SnapshotImage.unitSize - 1) >> SnapshotImage.unitShift))
        let parts = rows >= 65_536 ? 2 : 1
        // List groups first, each worker its own range, so the row checks
        // that follow only read their states.
        _ = Parallel.map(parts) { k in
            for g in Parallel.ranges(listGroups, parts: parts)[k] where shared.value.listGroupState[g] == 0 {
                _ = shared.value.listGroupIsSound(g)
            }
        }
        for g in 0..<listGroups where listGroupState[g] == 2 { noteDamage("lists from \(g << SnapshotImage.groupShift)") }
        // Then the checksums of the groups those units are in (each group by
        // one worker), then the units, which only read the groups' states.
        var distinct: [Int] = []
        for u in units where distinct.last != u >> (SnapshotImage.groupShift - SnapshotImage.unitShift) {
            distinct.append(u >> (SnapshotImage.groupShift - SnapshotImage.unitShift))
        }
        let groups = distinct
        _ = Parallel.map(parts) { k in
            for i in Parallel.ranges(groups.count, parts: parts)[k] { _ = shared.value.groupHashIsSound(groups[i]) }
        }
        let failed = Parallel.map(parts) { k in
            Parallel.ranges(units.count, parts: parts)[k].map { units[$0] }.filter { !shared.value.unitIsSound($0) }
        }.flatMap { $0 }
        for u in failed { noteDamage("rows from \(u << SnapshotImage.unitShift)") }
        for e in schema.entities.indices where checkedTypeRows(e) == nil { noteDamage("the type index of \(schema.entities[e].name)") }
        for k in savedIndexes.indices { _ = savedIndex(k)?.checkAll() }
        return failed
    }
}

/// The image as `checkEverything`'s workers see it: each checks its own
/// groups and writes only their states.
private struct Shared: @unchecked Sendable {
    let value: MappedImage
}
