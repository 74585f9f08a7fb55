import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// `snapshot-N.image`: the objects of `snapshot-N.jsonl` laid out so that a
/// process uses the mapped file as it is, instead of loading it. It is a
/// cache, never the truth: it names the snapshot file it was made from
/// (token, size and trailer checksum, and the file's device, inode,
/// modification and status-change times as the file system reports them after
/// the rename, so any later change to that file makes the image ignored) and
/// the schema, and every piece of it carries a checksum.
///
/// Opening reads the header and a small directory (checked at once, its size
/// independent of the rows'); every other piece is checked the first time the
/// process touches it: a chunk of the row or list group tables, a group of
/// 64 rows (their entities, record offsets, id prefixes and unit
/// checksums), a unit of 4 rows' records, a group of 64 relationship lists, one entity's rows in the type index, a
/// group of 256 values of a value index or of 256 buckets of its text index.
/// Damage found then makes the command answer from the JSON instead (see
/// `Store.imageDamage`). It is written after the snapshot is durable,
/// without fsync: a torn image fails its checks and costs only speed.
///
/// Layout (little-endian, every section 8-byte aligned and the entities
/// 4096-byte aligned, in this order):
///
/// | section | contents |
/// |---|---|
/// | header | `Header.byteCount` bytes, ending with its own checksum |
/// | row groups | per 64 rows: checksum of their columns, first id prefix, end of their records |
/// | list groups | per 64 lists: checksum |
/// | type starts | per entity, where its rows start in the type rows (and the end) |
/// | type checksums | per entity, the checksum of its type rows |
/// | value index table | per declared index: where its bytes are, their checksum, its counts |
/// | row group chunks | per 256 row groups: the checksum of their entries, the first one's id prefix |
/// | list group chunks | per 256 list groups: the checksum of their entries |
/// | entities | `Int16` per row (rows are in id order, as in the snapshot) |
/// | offsets | `UInt32` per row: where its record starts, counted from its group's first record |
/// | prefixes | `UInt64` per row: the id's first eight bytes, big-endian |
/// | unit checksums | `UInt64` per unit of 4 rows: the checksum of its records (covered by its group's checksum) |
/// | type rows | `Int32` per row: each entity's rows, ascending |
/// | list starts | `Int64` per list and one more: list n is `starts[n]..<starts[n+1]` |
/// | list elements | `Int32` rows |
/// | records | the records (`RecordCoding`), relationship slots holding image rows and lists |
/// | value indexes | per index, as `SavedValueIndex` describes: checksums, rows without a value, key offsets, row counts, rows, keys, text buckets |
///
/// The directory (row groups to type checksums) is covered by the header's
/// directory checksum, so it is checked at open.
enum SnapshotImage {
    /// Format 13 (`D`): row groups of 64 rows, so a read that finds one row
    /// by id hashes a quarter of the columns format 12's groups of 256 made
    /// it hash (older images are not read: the next writer writes the
    /// image again).
    static let magic = Array("TSIMAGED".utf8)
    static let version = 13
    /// Row or list groups per chunk of their tables.
    static let chunkShift = 8

    /// The groups of chunk `c` of a table of `groups` entries.
    static func chunk(_ c: Int, of groups: Int) -> (from: Int, to: Int) {
        (c << chunkShift, min(groups, (c + 1) << chunkShift))
    }
    /// Rows (and lists) per group: a group's checksum covers its rows'
    /// columns, and finding a row by id hashes its group's (1 KB), so a
    /// journal of scattered updates hashes a little per line at open.
    static let groupShift = 6
    static let groupSize = 1 << groupShift
    /// Rows checked together when a read first touches one of them: a row
    /// group's checksum (its columns) once for all of its rows, then each
    /// unit of rows' records checksum, bounds, id order and values as it is
    /// touched (a `get` or a sorted page reads a few rows of many groups,
    /// and should not hash or check their neighbours).
    static let unitShift = 2
    static let unitSize = 1 << unitShift

    /// What ties an image to its snapshot.
    struct Binding: Equatable {
        var token: Int64
        var snapshotBytes: Int64
        var snapshotCRC: UInt32
        var fingerprint: [UInt8]
        /// The snapshot file itself, as `fstat` saw it.
        var file: FileIdentity

        /// Whether both name the same snapshot by its token, size, checksum
        /// and schema, whichever copy of the file they saw: the image of one
        /// copy serves another once that copy's bytes are checked against
        /// its checksum (a copied or restored folder).
        func sameSnapshot(as other: Binding) -> Bool {
            token == other.token && snapshotBytes == other.snapshotBytes && snapshotCRC == other.snapshotCRC
                && fingerprint == other.fingerprint
        }
    }

    struct Header {
        var binding: Binding
        var historyStart: Int64
        var historyCount: Int64
        var rows: Int64 = 0
        var lists: Int64 = 0
        var listElements: Int64 = 0
        var recordBytes: Int64 = 0
        var entities: Int64 = 0
        var valueIndexes: Int64 = 0
        var valueIndexBytes: Int64 = 0
        var directoryHash: UInt64 = 0

        /// Magic, token, size, crc, fingerprint, four file fields, nine counts, two checksums.
        static let byteCount = 8 + 8 + 8 + 8 + 16 + 8 * 4 + 8 * 9 + 8 + 8

        func encoded() -> [UInt8] {
            var out = SnapshotImage.magic
            func put<T: FixedWidthInteger>(_ v: T) { withUnsafeBytes(of: v.littleEndian) { out.append(contentsOf: $0) } }
            put(binding.token); put(binding.snapshotBytes); put(Int64(binding.snapshotCRC))
            out.append(contentsOf: binding.fingerprint.prefix(16) + Array(repeating: 0, count: max(0, 16 - binding.fingerprint.count)))
            put(binding.file.device); put(binding.file.inode); put(binding.file.modified); put(binding.file.changed)
            put(historyStart); put(historyCount); put(rows); put(lists); put(listElements); put(recordBytes); put(entities)
            put(valueIndexes); put(valueIndexBytes)
            put(directoryHash)
            put(out.withUnsafeBytes { PageHash.hash($0) })
            return out
        }

        static func decode(_ b: UnsafeRawBufferPointer) -> Header? {
            guard b.count >= byteCount, b.prefix(8).elementsEqual(SnapshotImage.magic),
                  UInt64(littleEndian: b.loadUnaligned(fromByteOffset: byteCount - 8, as: UInt64.self))
                    == PageHash.hash(UnsafeRawBufferPointer(rebasing: b[0..<(byteCount - 8)])) else { return nil }
            var at = 8
            func get<T: FixedWidthInteger>(_: T.Type) -> T {
                defer { at += MemoryLayout<T>.size }
                return T(littleEndian: b.loadUnaligned(fromByteOffset: at, as: T.self))
            }
            let token = get(Int64.self), size = get(Int64.self), crc = get(Int64.self)
            let fp = Array(b[at..<(at + 16)])
            at += 16
            let file = FileIdentity(device: get(UInt64.self), inode: get(UInt64.self), size: size,
                                    modified: get(Int64.self), changed: get(Int64.self))
            var h = Header(binding: Binding(token: token, snapshotBytes: size, snapshotCRC: UInt32(truncatingIfNeeded: crc),
                                            fingerprint: fp, file: file),
                           historyStart: get(Int64.self), historyCount: get(Int64.self))
            h.rows = get(Int64.self); h.lists = get(Int64.self); h.listElements = get(Int64.self)
            h.recordBytes = get(Int64.self); h.entities = get(Int64.self)
            h.valueIndexes = get(Int64.self); h.valueIndexBytes = get(Int64.self); h.directoryHash = get(UInt64.self)
            return h
        }
    }

    /// Where each section starts, from the header's counts; nil when a count
    /// is out of range or the sizes overflow (checked before anything is mapped).
    struct Layout {
        var rowGroups = 0, listGroups = 0, rowChunks = 0, listChunks = 0
        var rowGroupTable = 0, listGroupTable = 0, typeStarts = 0, typeHashes = 0, valueIndexTable = 0
        var rowChunkTable = 0, listChunkTable = 0
        var rowUnits = 0
        var entities = 0, offsets = 0, prefixes = 0, unitHashes = 0, typeRows = 0, listStarts = 0, listElements = 0, valueIndexes = 0, records = 0
        var fileBytes = 0

        static let rowGroupEntry = 24
        static let page = 4096
        /// `SavedValueIndex.Field`s.
        static let valueIndexEntry = SavedValueIndex.Field.allCases.count * 8

        init?(_ h: Header) {
            guard h.rows >= 0, h.rows < Int64(Int32.max), h.lists >= 1, h.lists < Int64(Int32.max),
                  h.listElements >= 0, h.listElements < Int64(Int32.max) * 64, h.recordBytes >= 0, h.recordBytes < (1 << 40),
                  h.entities > 0, h.entities < Int64(Int16.max), h.valueIndexes >= 0, h.valueIndexes < 4096,
                  h.valueIndexBytes >= 0, h.valueIndexBytes < (1 << 40), h.valueIndexBytes % 8 == 0 else { return nil }
            let rows = Int(h.rows), lists = Int(h.lists), entityCount = Int(h.entities)
            rowGroups = (rows + SnapshotImage.groupSize - 1) >> SnapshotImage.groupShift
            rowUnits = (rows + SnapshotImage.unitSize - 1) >> SnapshotImage.unitShift
            listGroups = (lists + SnapshotImage.groupSize - 1) >> SnapshotImage.groupShift
            rowChunks = (rowGroups + (1 << SnapshotImage.chunkShift) - 1) >> SnapshotImage.chunkShift
            listChunks = (listGroups + (1 << SnapshotImage.chunkShift) - 1) >> SnapshotImage.chunkShift
            var at = Header.byteCount
            func section(_ bytes: Int) -> Int {
                let start = at
                at += (bytes + 7) & ~7
                return start
            }
            rowGroupTable = section(rowGroups * Layout.rowGroupEntry)
            listGroupTable = section(listGroups * 8)
            typeStarts = section((entityCount + 1) * 8)
            typeHashes = section(entityCount * 8)
            valueIndexTable = section(Int(h.valueIndexes) * Layout.valueIndexEntry)
            rowChunkTable = section(rowChunks * 16)
            listChunkTable = section(listChunks * 8)
            // The columns start on a page: from there on the file is written past the page cache (see `ObjectTable.writeImage`).
            at = (at + Layout.page - 1) & ~(Layout.page - 1)
            entities = section(rows * 2)
            offsets = section(rows * 4)
            prefixes = section(rows * 8)
            unitHashes = section(rowUnits * 8)
            typeRows = section(rows * 4)
            listStarts = section((lists + 1) * 8)
            listElements = section(Int(h.listElements) * 4)
            records = section(Int(h.recordBytes))
            valueIndexes = at
            fileBytes = at + Int(h.valueIndexBytes)
        }

        /// The bytes the header's directory checksum covers, checked at open:
        /// from the type starts to the entities (the group tables are checked
        /// a chunk at a time, against the chunk tables).
        var directory: Range<Int> { typeStarts..<entities }
    }

    /// The checksum of row group `g`: its rows' entities, record offsets
    /// and id prefixes, and its units' checksums (so its records are
    /// checked a unit at a time, as they are read).
    static func groupHash(_ g: Int, entities: UnsafeRawBufferPointer, offsets: UnsafeRawBufferPointer,
                          prefixes: UnsafeRawBufferPointer, unitHashes: UnsafeRawBufferPointer) -> UInt64 {
        var h = PageHash.hash(entities, seed: UInt64(g))
        h = PageHash.hash(offsets, seed: h)
        h = PageHash.hash(prefixes, seed: h)
        return PageHash.hash(unitHashes, seed: h)
    }

    /// The checksum of unit `u`'s records.
    static func unitHash(_ u: Int, records: UnsafeRawBufferPointer) -> UInt64 {
        PageHash.hash(records, seed: UInt64(u))
    }

    static func fingerprint(_ schema: Schema) -> [UInt8] {
        let b = Array(schema.fingerprint.utf8.prefix(16))
        return b + Array(repeating: 0, count: 16 - b.count)
    }
}
