import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ObjectTable {
    /// How each slot is renumbered in an image: relationship slots hold rows
    /// and list numbers that change with the new row order.
    private enum ImageSlot {
        case attribute
        case toOne
        /// Stored sides keep their order; derived sides are sorted, as loading the JSON makes them.
        case toMany(derived: Bool)
    }

    /// Writes the image of the table (see `SnapshotImage`), with `order` as
    /// the new row order (the snapshot's id order), to a new file at `path`:
    /// complete but for the header's binding to its snapshot file, which
    /// exists only after the snapshot's rename, so that it is written while
    /// the snapshot is. The records are copied a group of rows at a time,
    /// never all at once. Reads the table only (through workers' rules:
    /// nothing may change it meanwhile). Nil, with no file left, when a count
    /// does not fit the layout or writing fails: an image is only a cache.
    /// `lists` is a flat copy of the table's lists (see `FlatLists`).
    func writeImage(order: [RowID], indexed: [IndexedProperty], lists flat: FlatLists, path: String) -> UnboundImage? {
        let plans: [[ImageSlot]] = schema.entities.map { e in
            e.properties.map { p in
                guard let r = p.relationship else { return .attribute }
                return r.isToMany ? .toMany(derived: !r.isStoredSide) : .toOne
            }
        }
        // The declared indexes are built on a thread of their own meanwhile
        // (they are written last); nothing returns before it is done.
        let view = ImageTableView(table: self)
        let building = Parallel.start { view.table.indexBlobs(order: order, indexed: indexed) }
        defer { _ = building.wait() }
        // Rows already in id order (as a bulk import or an open leaves them)
        // keep their numbers: no lookup for every reference.
        let renumbered = !order.elementsEqual(0..<RowID(order.count))
        var newRow: [RowID] = []
        if renumbered {
            newRow = [RowID](repeating: -1, count: rowCount)
            for (i, r) in order.enumerated() { newRow[Int(r)] = RowID(i) }
        }
        let lists = flat.view
        defer { withExtendedLifetime(flat) {} }
        // The columns and lists first, with each record's place among the records.
        var entities: [Int16] = [], offsets: [UInt32] = [], prefixes: [UInt64] = []
        var listStarts: [Int64] = [0, 0]
        var listElements: [Int32] = []
        var typeRows = Array(repeating: [RowID](), count: schema.entities.count)
        entities.reserveCapacity(order.count)
        offsets.reserveCapacity(order.count)
        prefixes.reserveCapacity(order.count)
        var recordBytes = 0, groupStart = 0
        /// Per group of rows, the length of its records.
        var groupBytes: [Int] = []
        for (i, r) in order.enumerated() {
            // In id order the records are all over the arena: load ahead.
            if i + 8 < order.count { prefetch(order[i + 8]) }
            let e = Int(entity(at: r) ?? 0)
            entities.append(Int16(e))
            typeRows[e].append(RowID(i))
            if i & (SnapshotImage.groupSize - 1) == 0 { groupStart = recordBytes }
            // A group of rows whose records pass 4 GB gets no image.
            guard recordBytes - groupStart <= Int(UInt32.max) else { return nil }
            offsets.append(UInt32(recordBytes - groupStart))
            let record = self.record(r)
            let (id, firstSlot) = RecordReader.id(record)
            prefixes.append(ObjectTable.prefix(id))
            recordBytes += RecordReader.length(record, count: plans[e].count)
            if i & (SnapshotImage.groupSize - 1) == SnapshotImage.groupSize - 1 || i == order.count - 1 {
                groupBytes.append(recordBytes - groupStart)
            }
            var value = firstSlot
            for plan in plans[e] {
                defer { value = RecordReader.skip(value) }
                guard case .toMany(let derived) = plan, let n = RecordReader.listNumber(value), n != 0 else { continue }
                let first = listElements.count
                if renumbered {
                    for t in lists[n] { listElements.append(newRow[Int(t)]) }
                } else {
                    listElements.append(contentsOf: lists[n])
                }
                if derived { listElements[first...].sort() }
                listStarts.append(Int64(listElements.count))
            }
        }
        var h = SnapshotImage.Header(binding: SnapshotImage.Binding(token: 0, snapshotBytes: 0, snapshotCRC: 0, fingerprint: [],
                                                                    file: FileIdentity(device: 0, inode: 0, size: 0, modified: 0, changed: 0)),
                                     historyStart: 0, historyCount: 0)
        // The value indexes come last: every other section's place is known without them.
        h.valueIndexes = Int64(indexed.count)
        h.rows = Int64(order.count)
        h.lists = Int64(listStarts.count - 1)
        h.listElements = Int64(listElements.count)
        h.recordBytes = Int64(recordBytes)
        h.entities = Int64(schema.entities.count)
        guard var layout = SnapshotImage.Layout(h), let fd = try? FileIO.open(path, O_RDWR | O_CREAT | O_TRUNC) else { return nil }
        var kept = false
        defer {
            if !kept {
                FileIO.close(fd)
                FileIO.unlink(path)
            }
        }
        // From the columns on, the sections are written front to back past
        // the page cache, through a descriptor of their own (see
        // `StreamingFileWriter`); the header and directory, before them, last.
        guard let streamFD = try? FileIO.open(path, O_WRONLY) else { return nil }
        let out = StreamingFileWriter(fd: streamFD, path: path, from: layout.entities)
        defer {
            out.waitForWrites()
            FileIO.close(streamFD)
        }
        do {
            /// Appends a section that must start at `offset`, and its padding.
            func stream<T>(_ column: [T], at offset: Int) -> Bool {
                guard out.count == offset else { return false }
                column.withUnsafeBytes { out.write($0) }
                return padded()
            }
            func padded() -> Bool {
                let zeros: (UInt64, UInt64) = (0, 0)
                withUnsafeBytes(of: zeros) { out.write(UnsafeRawBufferPointer(rebasing: $0[0..<((8 - out.count % 8) % 8)])) }
                return true
            }
            guard stream(entities, at: layout.entities), stream(offsets, at: layout.offsets), stream(prefixes, at: layout.prefixes),
                  stream(typeRows.flatMap { $0 }, at: layout.typeRows), stream(listStarts, at: layout.listStarts),
                  stream(listElements, at: layout.listElements), out.count == layout.records else { return nil }

            // The records a group of rows at a time, relationship slots
            // renumbered; each group's checksum covers its columns and records.
            var groups: [(hash: UInt64, fence: UInt64, end: Int64)] = []
            var buffer = RecordBuffer(capacity: (1 << 20) + (1 << 16))
            var bufferAt = 0
            var list: Int32 = 1
            for g in 0..<layout.rowGroups {
                let first = g << SnapshotImage.groupShift, stop = min(order.count, first + SnapshotImage.groupSize)
                let groupStart = buffer.count
                for i in first..<stop {
                    if i + 8 < order.count { prefetch(order[i + 8]) }
                    let r = order[i], e = Int(entities[i])
                    let record = self.record(r)
                    let at = buffer.count
                    let length = (i + 1 < stop ? Int(offsets[i + 1]) : groupBytes[g]) - Int(offsets[i])
                    buffer.bytes(UnsafeRawBufferPointer(start: record, count: length))
                    // The copy has the same layout: patch its relationship slots in place.
                    var value = RecordReader.id(record).1
                    for plan in plans[e] {
                        defer { value = RecordReader.skip(value) }
                        let patchAt = at + (value - record) + 1
                        switch plan {
                        case .attribute: continue
                        case .toOne:
                            guard value.load(as: UInt8.self) == RecordTag.toOne else { continue }
                            let target = Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))
                            if renumbered { buffer.patchInt32(newRow[Int(target)], at: patchAt) }
                        case .toMany:
                            guard let n = RecordReader.listNumber(value), n != 0 else { continue }
                            buffer.patchInt32(list, at: patchAt)
                            list += 1
                        }
                    }
                }
                var hash = entities[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: UInt64(g)) }
                hash = offsets[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: hash) }
                hash = prefixes[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: hash) }
                hash = PageHash.hash(UnsafeRawBufferPointer(rebasing: buffer.contents[groupStart...]), seed: hash)
                groups.append((hash, prefixes[first], Int64(bufferAt + buffer.count)))
                if buffer.count >= 1 << 20 || stop == order.count {
                    out.write(buffer.contents)
                    bufferAt += buffer.count
                    buffer.removeAll()
                }
            }
            guard bufferAt == recordBytes, padded() else { return nil }

            let indexBlobs = building.wait()
            h.valueIndexBytes = Int64(indexBlobs.reduce(0) { $0 + $1.bytes.count })
            guard let complete = SnapshotImage.Layout(h), complete.records == layout.records else { return nil }
            layout = complete
            var blobAt = layout.valueIndexes
            for b in indexBlobs {
                // Back to back: each index's bytes are a multiple of eight.
                guard out.count == blobAt else { return nil }
                b.bytes.withUnsafeBytes { out.write($0) }
                blobAt += b.bytes.count
            }
            try out.finish()

            // The directory: per row group, per list group, per entity.
            var directory: [UInt8] = []
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { directory.append(contentsOf: $0) } }
            func pad() { while directory.count % 8 != 0 { directory.append(0) } }
            for group in groups { put(group.hash); put(group.fence); put(group.end) }
            pad()
            for g in 0..<layout.listGroups {
                let first = g << SnapshotImage.groupShift, stop = min(listStarts.count - 1, first + SnapshotImage.groupSize)
                var hash = listStarts[first...stop].withUnsafeBytes { PageHash.hash($0, seed: UInt64(g)) }
                hash = listElements[Int(listStarts[first])..<Int(listStarts[stop])].withUnsafeBytes { PageHash.hash($0, seed: hash) }
                put(hash)
            }
            pad()
            var start: Int64 = 0
            for rows in typeRows {
                put(start)
                start += Int64(rows.count)
            }
            put(start)
            for rows in typeRows { put(rows.withUnsafeBytes { PageHash.hash($0) }) }
            pad()
            blobAt = layout.valueIndexes
            for b in indexBlobs {
                for field in SavedValueIndex.Field.allCases {
                    put(field == .offset ? Int64(blobAt) : b.fields[field.rawValue])
                }
                blobAt += b.bytes.count
            }
            // The directory runs to the page the columns start on.
            guard directory.count <= layout.directory.count else { return nil }
            directory += Array(repeating: 0, count: layout.directory.count - directory.count)
            h.directoryHash = directory.withUnsafeBytes { PageHash.hash($0) }
            try directory.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: SnapshotImage.Header.byteCount, path: path) }
            // Every section's padding is in the file, the last one's included.
            guard FileIO.truncate(fd, to: layout.fileBytes) else { return nil }
        } catch {
            return nil
        }
        kept = true
        return UnboundImage(header: h, fd: fd, path: path)
    }
}

extension ObjectTable {
    /// Each declared index over the rows in `order`, as `ValueIndex` orders
    /// it, in the image's form. Reads the table only.
    fileprivate func indexBlobs(order: [RowID], indexed: [IndexedProperty]) -> [SavedIndexBytes] {
        // Each row's entity once (rows in id order read it all over memory), not once per index.
        var entityOfRow = [Int16](repeating: -1, count: order.count)
        for (i, r) in order.enumerated() { entityOfRow[i] = Int16(entity(at: r) ?? -1) }
        return indexed.map { index in
            var covered = [Bool](repeating: false, count: schema.entities.count)
            for e in schema.entities[index.entity].closure { covered[e] = true }
            let rows = entityOfRow.indices.filter { entityOfRow[$0] >= 0 && covered[Int(entityOfRow[$0])] }
            let (ordered, nulls) = numberIndex(rows: rows, order: order, slot: index.property.slot)
                ?? hashedIndex(rows: rows, order: order, index: index)
            return SavedIndexBytes(ordered, nulls: nulls, text: index.property.attribute.map { SavedValueIndex.keyTag($0.type) == 3 } ?? false)
        }
    }

    /// An index as `ValueIndex.build` orders it, over the rows at `rows` in `order`.
    func hashedIndex(rows: [Int], order: [RowID], index: IndexedProperty) -> (ValueIndex.Ordered, nulls: [RowID]) {
        var entries: [(IndexKey?, RowID)] = []
        entries.reserveCapacity(rows.count)
        for (k, i) in rows.enumerated() {
            if k + 8 < rows.count { prefetch(order[rows[k + 8]]) }
            entries.append((IndexKey(value(at: order[i], slot: index.property.slot)), RowID(i)))
        }
        let fresh = ValueIndex(entity: index.entity, property: index.property)
        fresh.build(entries)
        return (fresh.ordered(), fresh.rowsWithoutValue)
    }

    /// An index whose rows hold doubles or dates (or nothing) in the order
    /// `ValueIndex.build` gives, without hashing each value (most of them
    /// are distinct): entries sorted by value, then row, and equal values
    /// made one key, the first row's. Nil when a row holds anything else,
    /// or not a number: `hashedIndex` then orders them.
    func numberIndex(rows: [Int], order: [RowID], slot: Int) -> (ValueIndex.Ordered, nulls: [RowID])? {
        // Sorted by value (through an ordered key), rows in order within a value.
        var entries: [(prefix: UInt64, g: Int32)] = []
        var nulls: [RowID] = []
        entries.reserveCapacity(rows.count)
        for (k, i) in rows.enumerated() {
            if k + 8 < rows.count { prefetch(order[rows[k + 8]]) }
            let row = order[i]
            guard let e = entity(at: row), slot < slotCounts[e] else { return nil }
            let p = RecordReader.slot(record(row), slot)
            switch p.load(as: UInt8.self) {
            case RecordTag.double, RecordTag.date:
                let d = Double(bitPattern: UInt64(littleEndian: (p + 1).loadUnaligned(as: UInt64.self)))
                guard !d.isNaN else { return nil }
                entries.append((RadixSort.key(d), RowID(i)))
            case RecordTag.null:
                nulls.append(RowID(i))
            default:
                return nil
            }
        }
        var ordered = ValueIndex.Ordered(keys: [], flat: [], counts: [0])
        ordered.flat.reserveCapacity(entries.count)
        var last: UInt64?
        for (key, row) in RadixSort.sorted(entries) {
            if key != last {
                if !ordered.keys.isEmpty { ordered.counts.append(ordered.flat.count) }
                // A zero is the first row's: -0 where that one holds -0.
                ordered.keys.append(.number(key == RadixSort.key(0) ? zero(order[Int(row)], slot: slot) : RadixSort.double(key)))
                last = key
            }
            ordered.flat.append(row)
        }
        if !ordered.keys.isEmpty { ordered.counts.append(ordered.flat.count) }
        return (ordered, nulls)
    }

    /// The zero (0 or -0) that `row` holds in `slot`.
    private func zero(_ row: RowID, slot: Int) -> Double {
        let p = RecordReader.slot(record(row), slot)
        return Double(bitPattern: UInt64(littleEndian: (p + 1).loadUnaligned(as: UInt64.self))).sign == .minus ? -0.0 : 0.0
    }
}

/// The table for the image's index thread, which only reads it.
private struct ImageTableView: @unchecked Sendable {
    let table: ObjectTable
}

/// An image written to its temporary file but for its header, which binds
/// it to its snapshot (see `ObjectTable.writeImage`).
struct UnboundImage: Sendable {
    let header: SnapshotImage.Header
    let fd: Int32
    let path: String

    /// Writes the header bound to the snapshot and renames the file to
    /// `final`; false (and no file left) when that fails.
    func bind(_ binding: SnapshotImage.Binding, historyStart: Int, historyCount: Int, as final: String) -> Bool {
        var h = header
        h.binding = binding
        h.historyStart = Int64(historyStart)
        h.historyCount = Int64(historyCount)
        let ok = FileIO.write(fd, h.encoded(), at: 0)
        FileIO.close(fd)
        CrashPoint.hit("image-mid-write")
        if ok, (try? FileIO.rename(path, final)) != nil { return true }
        FileIO.unlink(path)
        return false
    }

    /// Removes the file (its snapshot was not written).
    func discard() {
        FileIO.close(fd)
        FileIO.unlink(path)
    }
}

/// A declared value index: its entity and property (what an image needs of it).
struct IndexedProperty: Sendable {
    let entity: Int
    let property: Property

    static func of(_ indexes: [ValueIndex]) -> [IndexedProperty] {
        indexes.map { IndexedProperty(entity: $0.entity, property: $0.property) }
    }
}
