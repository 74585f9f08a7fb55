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

    /// The image of the table (see `SnapshotImage`) with `order` as the new
    /// row order (the snapshot's id order), in memory and complete but for the
    /// header's binding to its snapshot file, which exists only after the
    /// snapshot's rename: so it can be built while the snapshot is written.
    /// Reads the table only (through workers' rules: nothing may change it meanwhile).
    /// Nil when a count does not fit the layout.
    func prepareImage(order: [RowID], indexed: [IndexedProperty]) -> PreparedImage? {
        let plans: [[ImageSlot]] = schema.entities.map { e in
            e.properties.map { p in
                guard let r = p.relationship else { return .attribute }
                return r.isToMany ? .toMany(derived: !r.isStoredSide) : .toOne
            }
        }
        var newRow = [RowID](repeating: -1, count: rowCount)
        for (i, r) in order.enumerated() { newRow[Int(r)] = RowID(i) }
        var entities: [Int16] = [], offsets: [Int64] = [], prefixes: [UInt64] = []
        var listStarts: [Int64] = [0, 0]
        var listElements: [Int32] = []
        var typeRows = Array(repeating: [RowID](), count: schema.entities.count)
        entities.reserveCapacity(order.count)
        offsets.reserveCapacity(order.count)
        prefixes.reserveCapacity(order.count)
        var records = RecordBuffer(capacity: max(4096, arena.totalBytes - arena.unusedBytes + 4096))
        for (i, r) in order.enumerated() {
            let e = Int(entity(at: r) ?? 0)
            entities.append(Int16(e))
            typeRows[e].append(RowID(i))
            offsets.append(Int64(records.count))
            let record = self.record(r)
            let (id, firstSlot) = RecordReader.id(record)
            prefixes.append(ObjectTable.prefix(id))
            let length = RecordReader.length(record, count: plans[e].count)
            let at = records.count
            records.bytes(UnsafeRawBufferPointer(start: record, count: length))
            // The copy has the same layout: patch its relationship slots in place.
            var value = firstSlot
            for plan in plans[e] {
                defer { value = RecordReader.skip(value) }
                let tag = value.load(as: UInt8.self)
                let patchAt = at + (value - record) + 1
                switch plan {
                case .attribute: continue
                case .toOne:
                    guard tag == RecordTag.toOne else { continue }
                    let target = Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))
                    records.patchInt32(newRow[Int(target)], at: patchAt)
                case .toMany(let derived):
                    guard let n = RecordReader.listNumber(value), n != 0 else { continue }
                    let first = listElements.count
                    for t in lists[n] { listElements.append(newRow[Int(t)]) }
                    if derived { listElements[first...].sort() }
                    records.patchInt32(Int32(listStarts.count - 1), at: patchAt)
                    listStarts.append(Int64(listElements.count))
                }
            }
        }
        // Each declared index over the new rows, as `ValueIndex` orders it.
        var indexBlobs: [SavedIndexBytes] = []
        for index in indexed {
            let closure = Set(schema.entities[index.entity].closure)
            var entries: [(IndexKey?, RowID)] = []
            for (i, r) in order.enumerated() where closure.contains(Int(entities[i])) {
                entries.append((IndexKey(value(at: r, slot: index.property.slot)), RowID(i)))
            }
            let fresh = ValueIndex(entity: index.entity, property: index.property)
            fresh.build(entries)
            indexBlobs.append(SavedIndexBytes(fresh.ordered(), nulls: fresh.rowsWithoutValue, 
                                              text: index.property.attribute.map { SavedValueIndex.keyTag($0.type) == 3 } ?? false))
        }
        var h = SnapshotImage.Header(binding: SnapshotImage.Binding(token: 0, snapshotBytes: 0, snapshotCRC: 0, fingerprint: [],
                                                                    file: FileIdentity(device: 0, inode: 0, size: 0, modified: 0, changed: 0)),
                                     historyStart: 0, historyCount: 0)
        h.valueIndexes = Int64(indexBlobs.count)
        h.valueIndexBytes = Int64(indexBlobs.reduce(0) { $0 + $1.bytes.count })
        h.rows = Int64(order.count)
        h.lists = Int64(listStarts.count - 1)
        h.listElements = Int64(listElements.count)
        h.recordBytes = Int64(records.count)
        h.entities = Int64(schema.entities.count)
        guard let layout = SnapshotImage.Layout(h) else { return nil }

        // The directory: per row group, per list group, per entity.
        var directory: [UInt8] = []
        func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { directory.append(contentsOf: $0) } }
        func pad() { while directory.count % 8 != 0 { directory.append(0) } }
        let recordBytes = records.contents
        for g in 0..<layout.rowGroups {
            let first = g << SnapshotImage.groupShift, stop = min(order.count, first + SnapshotImage.groupSize)
            let start = Int(offsets[first]), end = stop < order.count ? Int(offsets[stop]) : records.count
            var hash = entities[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: UInt64(g)) }
            hash = offsets[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: hash) }
            hash = prefixes[first..<stop].withUnsafeBytes { PageHash.hash($0, seed: hash) }
            hash = PageHash.hash(UnsafeRawBufferPointer(rebasing: recordBytes[start..<end]), seed: hash)
            put(hash); put(prefixes[first]); put(Int64(end))
        }
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
        var blobAt = layout.valueIndexes
        for b in indexBlobs {
            for field in SavedValueIndex.Field.allCases {
                put(field == .offset ? Int64(blobAt) : b.fields[field.rawValue])
            }
            blobAt += b.bytes.count
        }
        h.directoryHash = directory.withUnsafeBytes { PageHash.hash($0) }
        return PreparedImage(header: h, layout: layout, directory: directory, entities: entities, offsets: offsets,
                             prefixes: prefixes, typeRows: typeRows.flatMap { $0 }, listStarts: listStarts,
                             listElements: listElements, indexBlobs: indexBlobs, records: OwnedBytes(records.release()))
    }
}

/// An image built in memory, waiting for its snapshot's binding (see `ObjectTable.prepareImage`).
struct PreparedImage: @unchecked Sendable {
    var header: SnapshotImage.Header
    let layout: SnapshotImage.Layout
    let directory: [UInt8]
    let entities: [Int16]
    let offsets: [Int64]
    let prefixes: [UInt64]
    let typeRows: [RowID]
    let listStarts: [Int64]
    let listElements: [Int32]
    let indexBlobs: [SavedIndexBytes]
    let records: OwnedBytes

    /// Writes the image, bound to its snapshot, to `fd`.
    func write(binding: SnapshotImage.Binding, historyStart: Int, historyCount: Int, to fd: Int32, path: String) throws {
        var h = header
        h.binding = binding
        h.historyStart = Int64(historyStart)
        h.historyCount = Int64(historyCount)
        var written = 0
        func write(_ bytes: UnsafeRawBufferPointer) throws {
            try FileIO.writeAll(fd, bytes, path: path)
            written += bytes.count
            let padding = (8 - written % 8) % 8
            if padding > 0 {
                try FileIO.writeAll(fd, [UInt8](repeating: 0, count: padding), path: path)
                written += padding
            }
        }
        try h.encoded().withUnsafeBytes(write)
        try directory.withUnsafeBytes(write)
        try entities.withUnsafeBytes(write)
        try offsets.withUnsafeBytes(write)
        try prefixes.withUnsafeBytes(write)
        try typeRows.withUnsafeBytes(write)
        try listStarts.withUnsafeBytes(write)
        try listElements.withUnsafeBytes(write)
        for b in indexBlobs { try b.bytes.withUnsafeBytes(write) }
        CrashPoint.hit("image-mid-write")
        let recordBytes = UnsafeRawBufferPointer(start: records.base, count: records.count)
        try FileIO.writeAll(fd, recordBytes, path: path)
        written += recordBytes.count
        guard written == layout.fileBytes else {
            throw IOError(operation: "write", path: path, code: EIO)
        }
    }
}

/// Bytes given up by a `RecordBuffer`, freed with this object.
final class OwnedBytes: @unchecked Sendable {
    let base: UnsafeMutableRawPointer
    let count: Int

    init(_ bytes: (UnsafeMutableRawPointer, Int)) {
        (base, count) = bytes
    }

    deinit { base.deallocate() }
}

/// A declared value index: its entity and property (what an image needs of it).
struct IndexedProperty: Sendable {
    let entity: Int
    let property: Property

    static func of(_ indexes: [ValueIndex]) -> [IndexedProperty] {
        indexes.map { IndexedProperty(entity: $0.entity, property: $0.property) }
    }
}
