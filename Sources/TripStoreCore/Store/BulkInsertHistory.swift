import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A bulk import's transaction as history keeps it, without a `Change` per
/// object (about 150 bytes each): its snapshot history line, grouped by type.
///
/// The changes (nearly all of the line) need only the records' ids: they
/// are encoded ahead, while the import links (see `BulkImportPlan`), and
/// the header, which needs the commit's token and time, is put before them at the commit.
enum BulkInsertHistory {
    /// Bytes of the line in blocks of about a megabyte, and their checksum.
    /// Blocks, because the line of a million-trip import is 330 MB: one piece
    /// of that size would take fresh memory where smaller ones fill what
    /// sorting and linking have freed.
    struct Line: Sendable {
        var blocks: [[UInt8]] = []
        var count = 0
        var crc: UInt32 = 0

        mutating func append(_ bytes: [UInt8]) {
            crc = bytes.withUnsafeBytes { CRC32C.checksum($0, continuing: crc) }
            count += bytes.count
            blocks.append(bytes)
        }
    }

    static let blockSize = 1 << 20

    /// The line's changes and its newline: each run is a type and its
    /// objects (indexes into `records`) in input order.
    static func changes(_ runs: [(type: String, objects: [Int32])], records: RecordPointers) -> Line {
        // The runs back to back: `firstOfRun[n] + k` is object k of run n.
        let objects = runs.flatMap(\.objects)
        var firstOfRun: [Int] = [], total = 0
        for run in runs {
            firstOfRun.append(total)
            total += run.objects.count
        }
        var line = Line()
        func drain(_ w: inout JSONWriter) {
            line.append(w.bytes)
            // A new block of the same size; the one handed over keeps its bytes.
            w.bytes.removeAll(keepingCapacity: true)
        }
        var w = JSONWriter(capacity: blockSize + 4096)
        HistoryCoding.appendInsertRuns(runs.map { ($0.type, $0.objects.count) },
                                       id: { n, k, w in
                                           // Records of one type lie among the others': load them well ahead.
                                           let i = firstOfRun[n] + k
                                           if i + 16 < objects.count { Prefetch.read(records.records[Int(objects[i + 16])]) }
                                           appendID(of: records.records[Int(objects[i])], to: &w)
                                       }, to: &w, drainEvery: blockSize, drain: drain)
        w.bytes.append(0x0A)
        drain(&w)
        return line
    }

    /// A record's id, quoted (a packed one written out without a look for what to escape).
    @inline(__always) private static func appendID(of record: UnsafeRawPointer, to w: inout JSONWriter) {
        guard record.load(as: UInt8.self) == RecordID.packedMarker else {
            return RecordReader.withID(record) { w.appendQuoted(utf8: $0) }
        }
        withUnsafeTemporaryAllocation(byteCount: RecordID.quotedCount, alignment: 8) { quoted in
            RecordID.writeQuoted(packed: record + 1, into: quoted.baseAddress!)
            w.bytes.append(contentsOf: UnsafeRawBufferPointer(quoted))
        }
    }

    /// The whole line: the header of the commit, then `changes`.
    static func line(token: Int64, timestamp: Double, author: String, changes: Line) -> Line {
        var w = JSONWriter()
        HistoryCoding.appendHeader(token: token, timestamp: timestamp, author: author, to: &w)
        var line = Line()
        line.append(w.bytes)
        line.blocks += changes.blocks
        line.crc = CRC32C.combine(line.crc, changes.crc, lengthOfB: changes.count)
        line.count += changes.count
        return line
    }
}
