import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension ObjectTable {
    /// Writes the image of the table (see `SnapshotImage`), with `order` as
    /// the new row order (the snapshot's id order), to a new file at `path`:
    /// complete but for the header's binding to its snapshot file, which
    /// exists only after the snapshot's rename, so that it is written while
    /// the snapshot is. The records are copied a block of rows at a time,
    /// never all at once. Reads the table only (through workers' rules:
    /// nothing may change it meanwhile). Nil, with no file left, when a count
    /// does not fit the layout or writing fails: an image is only a cache.
    /// `lists` is a flat copy of the table's lists (see `FlatLists`);
    /// `listsReferencedOnce` says that the records refer to each of them but
    /// the empty one exactly once (as a bulk import builds them), which
    /// spares a pass over the records to count them.
    func writeImage(order: [RowID], indexed: [IndexedProperty], lists flat: FlatLists, path: String,
                    listsReferencedOnce: Bool = false) -> UnboundImage? {
        let plan = ImageRowPlan(schema: schema, order: order, rowCount: rowCount)
        let table = readView, lists = flat.view
        var next = 0
        return writeImage(plan: plan, indexed: indexed, lists: flat, path: path, listsReferencedOnce: listsReferencedOnce) {
            defer { next += 1 }
            return next < plan.blockCount ? plan.block(next, table: table, lists: lists) : nil
        }
    }

    /// `writeImage`, with the blocks of rows (`plan.rows(ofBlock:)`, in
    /// order) made by `blocks`, which returns nil when it stops early (no
    /// image is then written). `builtIndexes`, where given, returns the
    /// indexes built ahead (see `BulkImportPlan`), or nil where it has none
    /// for `indexed`: they are then built here.
    func writeImage(plan: ImageRowPlan, indexed: [IndexedProperty], lists flat: FlatLists, path: String,
                    listsReferencedOnce: Bool, builtIndexes: (() -> [SavedIndexBytes]?)? = nil,
                    blocks: () -> ImageBlock?) -> UnboundImage? {
        let order = plan.order
        // The declared indexes are built on a thread of their own meanwhile
        // (they are written last); nothing returns before it is done.
        let view = ImageTableView(table: self)
        let building = builtIndexes == nil ? Parallel.start { view.table.indexBlobs(order: order, indexed: indexed) } : nil
        defer { _ = building?.wait() }
        let lists = flat.view
        defer { withExtendedLifetime(flat) {} }
        // The lists come before the records in the file: how many there are places them.
        let listCounts = listsReferencedOnce ? (lists: flat.listCount, elements: flat.elementCount)
                                             : imageListCounts(plan: plan, lists: lists)
        var h = SnapshotImage.Header(binding: SnapshotImage.Binding(token: 0, snapshotBytes: 0, snapshotCRC: 0, fingerprint: [],
                                                                    file: FileIdentity(device: 0, inode: 0, size: 0, modified: 0, changed: 0)),
                                     historyStart: 0, historyCount: 0)
        // The records and value indexes come last: every other section's place is known without them.
        h.valueIndexes = Int64(indexed.count)
        h.rows = Int64(order.count)
        h.lists = Int64(listCounts.lists)
        h.listElements = Int64(listCounts.elements)
        h.entities = Int64(schema.entities.count)
        guard var layout = SnapshotImage.Layout(h), let fd = try? FileIO.createFresh(path, O_RDWR) else { return nil }
        var kept = false
        defer {
            if !kept {
                FileIO.close(fd)
                FileIO.unlink(path)
            }
        }
        // From the columns on, the sections are written front to back past
        // the page cache (see `StreamingFileWriter`), through descriptors of
        // their own: the records and value indexes from the first page that
        // is theirs alone as they are copied, then the columns and lists,
        // which are only known once every record is read, up to it; the
        // header and directory, before them, last.
        let recordsAt = layout.records, recordPagesAt = (recordsAt + SnapshotImage.Layout.page - 1) & ~(SnapshotImage.Layout.page - 1)
        guard let recordsFD = try? FileIO.open(path, O_WRONLY | O_NOFOLLOW) else { return nil }
        defer { FileIO.close(recordsFD) }
        guard let columnsFD = try? FileIO.open(path, O_WRONLY | O_NOFOLLOW) else { return nil }
        defer { FileIO.close(columnsFD) }
        // Opened by name again: the file made above, not one put in its place meanwhile.
        guard let made = FileIdentity.of(fd), [recordsFD, columnsFD].allSatisfy({ FileIdentity.of($0)?.isSameFile(as: made) == true }) else {
            return nil
        }
        let out = StreamingFileWriter(fd: recordsFD, path: path, from: recordPagesAt)
        // Made once the records are written, in the memory their writer frees.
        var columnsWriter: StreamingFileWriter?
        defer {
            out.waitForWrites()
            columnsWriter?.waitForWrites()
        }
        /// The first bytes from the records on, up to their first page: written after the columns.
        var head: [UInt8] = []
        var streamed = recordsAt
        func emit(_ bytes: UnsafeRawBufferPointer) {
            let inHead = min(bytes.count, max(0, recordPagesAt - streamed))
            head.append(contentsOf: bytes[0..<inHead])
            if bytes.count > inHead { out.write(UnsafeRawBufferPointer(rebasing: bytes[inHead...])) }
            streamed += bytes.count
        }
        func padded() {
            let zeros: (UInt64, UInt64) = (0, 0)
            withUnsafeBytes(of: zeros) { emit(UnsafeRawBufferPointer(rebasing: $0[0..<((8 - streamed % 8) % 8)])) }
        }
        do {
            // The blocks in order: the columns and lists gathered, the lists
            // numbered, each group of rows checksummed over its columns and
            // records, the records streamed.
            var entities: [Int16] = [], offsets: [UInt32] = [], prefixes: [UInt64] = [], unitHashes: [UInt64] = []
            var listStarts: [Int64] = [0, 0]
            var listElements: [Int32] = []
            var typeRows = Array(repeating: [RowID](), count: schema.entities.count)
            entities.reserveCapacity(order.count)
            offsets.reserveCapacity(order.count)
            prefixes.reserveCapacity(order.count)
            unitHashes.reserveCapacity(layout.rowUnits)
            listStarts.reserveCapacity(listCounts.lists + 1)
            listElements.reserveCapacity(listCounts.elements)
            var groups: [(hash: UInt64, fence: UInt64, end: Int64)] = []
            var bufferAt = 0
            while entities.count < order.count {
                guard let block = blocks(), block.first == entities.count, block.fits, block.count > 0 else { return nil }
                block.numberLists(from: Int32(listStarts.count - 1))
                let elementBase = listElements.count
                listElements += block.listElements
                for end in block.listEnds { listStarts.append(Int64(elementBase + end)) }
                entities += block.entities
                offsets += block.offsets
                prefixes += block.prefixes
                for (k, e) in block.entities.enumerated() { typeRows[Int(e)].append(RowID(block.first + k)) }
                var groupStart = 0
                for (k, end) in block.groupEnds.enumerated() {
                    let g = (block.first >> SnapshotImage.groupShift) + k
                    let first = g << SnapshotImage.groupShift, stop = min(order.count, first + SnapshotImage.groupSize)
                    // Each unit's records, then the group's columns and those checksums.
                    let firstUnit = unitHashes.count
                    for unitFirst in stride(from: first, to: stop, by: SnapshotImage.unitSize) {
                        let unitStop = min(stop, unitFirst + SnapshotImage.unitSize)
                        let s = groupStart + Int(offsets[unitFirst]), e = unitStop < stop ? groupStart + Int(offsets[unitStop]) : end
                        guard s <= e, e <= end else { return nil }
                        unitHashes.append(SnapshotImage.unitHash(unitFirst >> SnapshotImage.unitShift,
                                                                 records: UnsafeRawBufferPointer(rebasing: block.recordContents[s..<e])))
                    }
                    let hash = entities[first..<stop].withUnsafeBytes { e in
                        offsets[first..<stop].withUnsafeBytes { o in
                            prefixes[first..<stop].withUnsafeBytes { p in
                                unitHashes[firstUnit...].withUnsafeBytes { u in
                                    SnapshotImage.groupHash(g, entities: e, offsets: o, prefixes: p, unitHashes: u)
                                }
                            }
                        }
                    }
                    groups.append((hash, prefixes[first], Int64(bufferAt + end)))
                    groupStart = end
                }
                emit(block.recordContents)
                bufferAt += block.recordBytes
            }
            // Counted ahead as the records list them, or the layout is wrong.
            guard listStarts.count - 1 == listCounts.lists, listElements.count == listCounts.elements else { return nil }
            padded()
            h.recordBytes = Int64(bufferAt)

            let indexBlobs = building?.wait() ?? builtIndexes?() ?? indexBlobs(order: order, indexed: indexed)
            h.valueIndexBytes = Int64(indexBlobs.reduce(0) { $0 + $1.bytes.count })
            guard let complete = SnapshotImage.Layout(h), complete.records == layout.records, streamed == complete.valueIndexes else { return nil }
            layout = complete
            // Back to back: each index's bytes are a multiple of eight.
            for b in indexBlobs { b.bytes.withUnsafeBytes { emit($0) } }
            try out.finish()
            // Through the page cache: the columns are what the next command
            // reads first (an id's row, a type's rows), and after a bulk
            // import its first write would otherwise read them from the disk.
            let columns = StreamingFileWriter(fd: columnsFD, path: path, from: layout.entities, pastThePageCache: false)
            columnsWriter = columns
            /// Appends a section that must start at `offset`, and its padding.
            func stream<T>(_ column: [T], at offset: Int) -> Bool {
                guard columns.count == offset else { return false }
                column.withUnsafeBytes { columns.write($0) }
                let zeros: (UInt64, UInt64) = (0, 0)
                withUnsafeBytes(of: zeros) { columns.write(UnsafeRawBufferPointer(rebasing: $0[0..<((8 - columns.count % 8) % 8)])) }
                return true
            }
            guard stream(entities, at: layout.entities), stream(offsets, at: layout.offsets), stream(prefixes, at: layout.prefixes),
                  stream(unitHashes, at: layout.unitHashes),
                  stream(typeRows.flatMap { $0 }, at: layout.typeRows), stream(listStarts, at: layout.listStarts),
                  stream(listElements, at: layout.listElements), stream(head, at: layout.records) else { return nil }
            try columns.finish()

            // The directory: per row group, per list group, per entity, per
            // index, then the chunk tables that check the group tables.
            var directory: [UInt8] = []
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { directory.append(contentsOf: $0) } }
            func pad() { while directory.count % 8 != 0 { directory.append(0) } }
            func at(_ section: Int) -> Bool { directory.count == section - SnapshotImage.Header.byteCount }
            for group in groups { put(group.hash); put(group.fence); put(group.end) }
            pad()
            for g in 0..<layout.listGroups {
                let first = g << SnapshotImage.groupShift, stop = min(listStarts.count - 1, first + SnapshotImage.groupSize)
                var hash = listStarts[first...stop].withUnsafeBytes { PageHash.hash($0, seed: UInt64(g)) }
                hash = listElements[Int(listStarts[first])..<Int(listStarts[stop])].withUnsafeBytes { PageHash.hash($0, seed: hash) }
                put(hash)
            }
            pad()
            guard at(layout.typeStarts) else { return nil }
            var start: Int64 = 0
            for rows in typeRows {
                put(start)
                start += Int64(rows.count)
            }
            put(start)
            for rows in typeRows { put(rows.withUnsafeBytes { PageHash.hash($0) }) }
            pad()
            var blobAt = layout.valueIndexes
            for b in indexBlobs {
                for field in SavedValueIndex.Field.allCases {
                    put(field == .offset ? Int64(blobAt) : b.fields[field.rawValue])
                }
                blobAt += b.bytes.count
            }
            pad()
            guard at(layout.rowChunkTable) else { return nil }
            let tables = directory
            for c in 0..<layout.rowChunks {
                let (from, to) = SnapshotImage.chunk(c, of: layout.rowGroups)
                put(tables[(from * SnapshotImage.Layout.rowGroupEntry)..<(to * SnapshotImage.Layout.rowGroupEntry)]
                    .withUnsafeBytes { PageHash.hash($0, seed: UInt64(c)) })
                put(groups[from].fence)
            }
            let listTable = layout.listGroupTable - SnapshotImage.Header.byteCount
            for c in 0..<layout.listChunks {
                let (from, to) = SnapshotImage.chunk(c, of: layout.listGroups)
                put(tables[(listTable + from * 8)..<(listTable + to * 8)].withUnsafeBytes { PageHash.hash($0, seed: UInt64(c)) })
            }
            // The directory runs to the page the columns start on.
            let whole = layout.entities - SnapshotImage.Header.byteCount
            guard directory.count <= whole else { return nil }
            directory += Array(repeating: 0, count: whole - directory.count)
            let checked = (layout.directory.lowerBound - SnapshotImage.Header.byteCount)..<whole
            h.directoryHash = directory[checked].withUnsafeBytes { PageHash.hash($0) }
            try directory.withUnsafeBytes {
                try FileIO.writeAll(fd, $0, at: SnapshotImage.Header.byteCount, path: path, piece: FileIO.mappedWritePiece)
            }
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
    /// How many lists (the empty one first) and list elements an image of
    /// the rows in `plan`'s order holds: those its records refer to.
    fileprivate func imageListCounts(plan: ImageRowPlan, lists: FlatLists.View) -> (lists: Int, elements: Int) {
        var counts = (lists: 1, elements: 0)
        let order = plan.order
        for (i, r) in order.enumerated() {
            if i + 8 < order.count { prefetch(order[i + 8]) }
            let e = Int(entity(at: r) ?? 0)
            var value = RecordReader.firstSlot(record(r))
            for k in plan.firstSlot[e]..<plan.firstSlot[e + 1] {
                defer { value = RecordReader.skip(value) }
                guard case .toMany = plan.slots[k], let n = RecordReader.listNumber(value), n != 0 else { continue }
                counts.lists += 1
                counts.elements += lists[n].count
            }
        }
        return counts
    }

    /// Each declared index over the rows in `order`, as `ValueIndex` orders
    /// it, in the image's form. Reads the table only.
    fileprivate func indexBlobs(order: [RowID], indexed: [IndexedProperty]) -> [SavedIndexBytes] {
        ObjectTable.indexBlobs(indexedValues(order: order, indexed: indexed), indexed: indexed, lists: lists)
    }

    /// Each index in the image's form, as `ValueIndex` orders it, from its
    /// rows and values (`indexedValues`).
    static func indexBlobs(_ values: [IndexedValues], indexed: [IndexedProperty], lists: RelationshipLists) -> [SavedIndexBytes] {
        zip(indexed, values).map { index, values in
            let (ordered, nulls) = numberIndex(values) ?? hashedIndex(values, index: index, lists: lists)
            return SavedIndexBytes(ordered, nulls: nulls, text: index.property.attribute.map { SavedValueIndex.keyTag($0.type) == 3 } ?? false)
        }
    }

    /// Each index's rows (positions in `order`) and their values, copied in
    /// one pass over the rows: in id order a record is a miss each time it
    /// is read, so it is read once for all the indexes that cover it.
    func indexedValues(order: [RowID], indexed: [IndexedProperty]) -> [IndexedValues] {
        IndexedValues.collect(order.count, schema: schema, indexed: indexed,
                              entity: { entity(at: order[$0]) }, record: { record(order[$0]) }, prefetch: { prefetch(order[$0]) })
    }

    /// An index as `ValueIndex.build` orders it. Rows whose values have the
    /// same bytes share a key, decoded once: values repeat (many trips share
    /// a destination), and a `String` made and hashed per row repeats for
    /// every row work each distinct value needs once, on the image's index
    /// thread, which the snapshot's encoders share the cores with.
    static func hashedIndex(_ values: IndexedValues, index: IndexedProperty, lists: RelationshipLists) -> (ValueIndex.Ordered, nulls: [RowID]) {
        let (firsts, byteRanks, _) = values.distinctByBytes()
        if let nfc = nfcTextIndex(values, firsts: firsts, byteRanks: byteRanks) { return nfc }
        // Values with different bytes can still be one key (strings equal as Unicode text): merged here.
        var rankOf: [IndexKey: Int] = [:]
        var distinct: [IndexKey] = []
        var merged: [Int] = firsts.map { k in
            guard let p = values.value(k), let key = IndexKey(RecordReader.value(p, lists: lists)) else { return -1 }
            if let known = rankOf[key] { return known }
            rankOf[key] = distinct.count
            distinct.append(key)
            return distinct.count - 1
        }
        // In the order of their bytes first: that is their order as text
        // wherever they are in NFC (nearly always), so that the sort in
        // `build`, which decides, finds them in order and only checks it.
        if let order = Self.byteOrder(distinct) {
            var rankOf = [Int](repeating: 0, count: order.count)
            for (p, d) in order.enumerated() { rankOf[d] = p }
            distinct = order.map { distinct[$0] }
            merged = merged.map { $0 < 0 ? $0 : rankOf[$0] }
        }
        var ranks: [Int] = [], rows: [RowID] = [], nulls: [RowID] = []
        ranks.reserveCapacity(values.count)
        rows.reserveCapacity(values.count)
        for k in 0..<values.count {
            let rank = byteRanks[k] < 0 ? -1 : merged[Int(byteRanks[k])]
            if rank < 0 {
                nulls.append(values.rows[k])
            } else {
                ranks.append(rank)
                rows.append(values.rows[k])
            }
        }
        let fresh = ValueIndex(entity: index.entity, property: index.property)
        fresh.build(distinct: distinct, ranks: ranks, rows: rows, nulls: nulls)
        return (fresh.ordered(), fresh.rowsWithoutValue)
    }

    /// `hashedIndex` where every value is text in NFC (or none), from the
    /// values' distinct bytes (`distinctByBytes`), without a `String` hashed
    /// (in normal form) per value or a second sort of them: text in NFC is
    /// ordered by its bytes, and two such values are one key exactly where
    /// their bytes are equal. Text of characters below U+0300 (ASCII,
    /// Latin-1, Latin Extended-A and -B, IPA: none combines or decomposes)
    /// is in NFC as it is; any other value is normalized once to see.
    /// Nil when a value is not text, or not in NFC.
    static func nfcTextIndex(_ values: IndexedValues, firsts: [Int], byteRanks: [Int32]) -> (ValueIndex.Ordered, nulls: [RowID])? {
        // Each distinct value's text; nil: a null.
        var texts: [UnsafeRawBufferPointer?] = []
        texts.reserveCapacity(firsts.count)
        for k in firsts {
            guard let p = values.value(k) else { return nil }
            switch p.load(as: UInt8.self) {
            case RecordTag.null: texts.append(nil)
            case RecordTag.string:
                var q = p + 1
                let n = RecordReader.varint(&q)
                let text = UnsafeRawBufferPointer(start: q, count: n)
                guard isBelowCombiningMarks(text)
                        || IndexKey.normalizedText(String(decoding: text, as: UTF8.self)).elementsEqual(text) else { return nil }
                texts.append(text)
            default: return nil
            }
        }
        let order = texts.indices.filter { texts[$0] != nil }.sorted { ObjectTable.less(texts[$0]!, texts[$1]!) }
        var position = [Int](repeating: -1, count: texts.count)
        for (p, d) in order.enumerated() { position[d] = p }
        // Rows grouped by value in value order: counted, then placed (in row order, so ascending within a value).
        var counts = [Int](repeating: 0, count: order.count + 1), nulls: [RowID] = []
        for k in 0..<values.count {
            let p = byteRanks[k] < 0 ? -1 : position[Int(byteRanks[k])]
            if p < 0 { nulls.append(values.rows[k]) } else { counts[p + 1] += 1 }
        }
        for p in 0..<order.count { counts[p + 1] += counts[p] }
        var flat = [RowID](repeating: 0, count: counts[order.count]), next = counts
        for k in 0..<values.count {
            let p = byteRanks[k] < 0 ? -1 : position[Int(byteRanks[k])]
            guard p >= 0 else { continue }
            flat[next[p]] = values.rows[k]
            next[p] += 1
        }
        let keys = order.map { IndexKey.string(String(decoding: texts[$0]!, as: UTF8.self)) }
        return (ValueIndex.Ordered(keys: keys, flat: flat, counts: counts), nulls)
    }

    /// Whether `text` is well-formed UTF-8 of characters below U+0300 only:
    /// ASCII, or two bytes whose first is 0xC2–0xCB.
    @inline(__always) static func isBelowCombiningMarks(_ text: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = text.count
        while i < n {
            if i + 8 <= n && text.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                i += 8
                continue
            }
            let b = text[i]
            if b < 0x80 {
                i += 1
                continue
            }
            guard b >= 0xC2, b <= 0xCB, i + 1 < n, text[i + 1] & 0xC0 == 0x80 else { return false }
            i += 2
        }
        return true
    }

    /// The positions of `distinct` in the order of their UTF-8 bytes; nil
    /// unless every one is a string.
    static func byteOrder(_ distinct: [IndexKey]) -> [Int]? {
        var bytes: [UInt8] = [], ends: [Int] = [0]
        ends.reserveCapacity(distinct.count + 1)
        for key in distinct {
            guard case .string(let s) = key else { return nil }
            bytes += s.utf8
            ends.append(bytes.count)
        }
        return bytes.withUnsafeBufferPointer { b in
            ends.withUnsafeBufferPointer { e in
                distinct.indices.sorted { x, y in
                    let xn = e[x + 1] - e[x], yn = e[y + 1] - e[y]
                    let c = memcmp(b.baseAddress! + e[x], b.baseAddress! + e[y], min(xn, yn))
                    return c != 0 ? c < 0 : xn < yn
                }
            }
        }
    }

    /// An index whose rows hold doubles or dates (or nothing) in the order
    /// `ValueIndex.build` gives, without hashing each value (most of them
    /// are distinct): entries sorted by value, then row, and equal values
    /// made one key, the first row's. Nil when a row holds anything else,
    /// or not a number: `hashedIndex` then orders them.
    static func numberIndex(_ values: IndexedValues) -> (ValueIndex.Ordered, nulls: [RowID])? {
        // Sorted by value (through an ordered key), rows in order within a value.
        var entries: [(prefix: UInt64, g: Int32)] = []
        var nulls: [RowID] = []
        entries.reserveCapacity(values.count)
        for k in 0..<values.count {
            guard let p = values.value(k) else { return nil }
            switch p.load(as: UInt8.self) {
            case RecordTag.double, RecordTag.date:
                let d = Double(bitPattern: UInt64(littleEndian: (p + 1).loadUnaligned(as: UInt64.self)))
                guard !d.isNaN else { return nil }
                entries.append((RadixSort.key(d), Int32(k)))
            case RecordTag.null:
                nulls.append(values.rows[k])
            default:
                return nil
            }
        }
        var ordered = ValueIndex.Ordered(keys: [], flat: [], counts: [0])
        ordered.flat.reserveCapacity(entries.count)
        var last: UInt64?
        for (key, k) in RadixSort.sorted(entries) {
            if key != last {
                if !ordered.keys.isEmpty { ordered.counts.append(ordered.flat.count) }
                // A zero is the first row's: -0 where that one holds -0.
                ordered.keys.append(.number(key == RadixSort.key(0) ? zero(values.value(Int(k))) : RadixSort.double(key)))
                last = key
            }
            ordered.flat.append(values.rows[Int(k)])
        }
        if !ordered.keys.isEmpty { ordered.counts.append(ordered.flat.count) }
        return (ordered, nulls)
    }

    /// The zero (0 or -0) a value holds.
    private static func zero(_ p: UnsafeRawPointer?) -> Double {
        guard let p else { return 0 }
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

    /// The indexes `schema` declares, in the order a store keeps them (see `StoreIndexes.declared`).
    static func declared(_ schema: Schema) -> [IndexedProperty] {
        StoreIndexes.declared(schema).map { IndexedProperty(entity: $0.entity, property: $0.property) }
    }

    /// Whether two lists name the same indexes in the same order.
    static func same(_ a: [IndexedProperty], _ b: [IndexedProperty]) -> Bool {
        a.count == b.count && zip(a, b).allSatisfy { $0.entity == $1.entity && $0.property.slot == $1.property.slot }
    }
}
