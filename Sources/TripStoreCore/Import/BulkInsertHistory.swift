import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// A bulk import's transaction as history keeps it, without a `Change` per
/// object (strings and arrays of its own, where the line needs only the id):
/// its snapshot history line, grouped by type.
///
/// The line is encoded on every core a block of ids at a time while the
/// snapshot writer writes the blocks in order (see `Store.compact`): the
/// line of a big import is big (an id per object), and made whole ahead it
/// would add all of itself to the import's peak memory, each page of it fresh.
struct BulkInsertHistory: @unchecked Sendable {
    let token: Int64
    let timestamp: Double
    let author: String
    /// Each run: a type and how many of its objects follow in `rows`.
    let runs: [(type: String, count: Int)]
    /// The objects' rows, run after run, each run's in input order (as history lists them).
    let rows: [RowID]

    /// The line's start: the commit's token, time and author.
    func appendHeader(to w: inout JSONWriter) {
        HistoryCoding.appendHeader(token: token, timestamp: timestamp, author: author, to: &w)
    }

    /// The rest of the line and its newline, a block at a time in order from
    /// `next()`, each with its checksum. The caller calls `finish()` before the table changes.
    func blocks(table: ObjectTable.ReadView) -> OrderedWork<(bytes: [UInt8], crc: UInt32)> {
        // Position `firstOfRun[n] + k` is id k of run n.
        let firstOfRun = runs.indices.map { n in runs[..<n].reduce(0) { $0 + $1.count } }
        let total = rows.count
        // At least eight blocks, so that both cores share even a small line.
        let perBlock = min(BulkInsertHistory.idsPerBlock, max(1, (total + 7) / 8))
        let blocks = max(1, (total + perBlock - 1) / perBlock)
        return OrderedWork(count: blocks, ahead: 4) { [runs, rows] in
            { k in
                let positions = (k * perBlock)..<min(total, (k + 1) * perBlock)
                var w = JSONWriter(capacity: positions.count * (RecordID.quotedCount + 1) + 256)
                rows.withUnsafeBufferPointer { rows in
                    HistoryCoding.appendInsertRuns(runs, positions: positions, id: { n, k, w in
                        // Rows in input order are all over the table: their columns, then their records, are loaded ahead.
                        let i = firstOfRun[n] + k
                        if i + 32 < positions.upperBound { table.prefetchColumns(rows[i + 32]) }
                        if i + 16 < positions.upperBound { table.prefetch(rows[i + 16]) }
                        BulkInsertHistory.appendID(of: table.record(rows[i]), to: &w)
                    }, to: &w)
                }
                if k == blocks - 1 { w.bytes.append(0x0A) }
                return (w.bytes, CRC32C.checksum(w.bytes))
            }
        }
    }

    /// The most ids in a block: about 1.3 MB of line.
    static let idsPerBlock = 32768

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
}
