import TripStoreFormat
import TripStoreSystem

/// The bytes of `journal-<token>.state`, the replay state of a journal: a
/// cache of what its lines did to the snapshot's image rows, so that an open
/// takes the rows' records from it instead of finding and changing each
/// row line by line (see `JournalState`).
///
/// A header binds the file to the snapshot and its image; frames follow,
/// each covering the journal lines from where the one before it ended:
///
///     header:  magic "TSJSTATE", format (u32), 0 (u32), snapshot token (i64),
///              snapshot bytes (i64), snapshot CRC (u32), 0 (u32),
///              schema fingerprint (16 bytes), image rows (i64)
///     frame:   payload bytes (u32), CRC-32C of the payload (u32), payload
///     payload: start, end (u64: journal offsets, end past a newline),
///              lines (u32), the longest line's bytes (u32), CRC-32C of the
///              journal's bytes from start to end (u32), the last line's
///              bytes (u32), rows after (u32: the table's rows once these
///              lines are applied), lists after (u32: its relationship
///              lists), records (u32), lists (u32), then each
///              record: row (u32), entity (u16), record bytes (u32), the
///              record as the table encodes it; a record of no bytes says
///              the row holds no object: an image row's object (of that
///              entity) was deleted, or a row past the image's is empty
///              (entity 0xFFFF); then each
///              list:   number (u32), rows (u32), each row (u32)
///
/// All numbers are little-endian. A frame is bound to what it covers by the
/// journal's length at its end and the checksum of every byte it covers (a
/// frame written anew covers many lines: each of them is bound, not only
/// the last); a reader takes frames while each is whole, checksummed and
/// bound, and ignores the rest. The last line's length lets an open read
/// that line alone (its token and commit time) and parse no other.
///
/// Rows and lists past the image's are numbered as the writer's table
/// numbered them; the frames hold every one of them up to the last frame's
/// counts, so a reader adds them in order.
enum JournalStateFormat {
    static let magic = Array("TSJSTATE".utf8)
    static let version: UInt32 = 3
    static let headerBytes = 8 + 4 + 4 + 8 + 8 + 4 + 4 + 16 + 8
    static let frameHeaderBytes = 8
    static let payloadHeaderBytes = 8 + 8 + 4 + 4 + 4 + 4 + 4 + 4 + 4 + 4
    static let recordHeaderBytes = 4 + 2 + 4
    static let listHeaderBytes = 4 + 4
    /// The entity of an empty record for a row past the image's.
    static let noEntity = 0xFFFF

    /// What the file is bound to: the snapshot its image was made from, and the image's rows.
    struct Binding: Equatable {
        var token: Int64
        var snapshotBytes: Int64
        var snapshotCRC: UInt32
        var fingerprint: [UInt8]
        var rows: Int64

        init(token: Int64, snapshotBytes: Int64, snapshotCRC: UInt32, fingerprint: [UInt8], rows: Int64) {
            self.token = token
            self.snapshotBytes = snapshotBytes
            self.snapshotCRC = snapshotCRC
            // The image's fingerprint field is 16 bytes.
            self.fingerprint = Array(fingerprint.prefix(16)) + Array(repeating: 0, count: max(0, 16 - fingerprint.count))
            self.rows = rows
        }

        init(_ image: MappedImage) {
            let b = image.header.binding
            self.init(token: b.token, snapshotBytes: b.snapshotBytes, snapshotCRC: b.snapshotCRC, fingerprint: b.fingerprint,
                      rows: image.header.rows)
        }
    }

    /// One frame as read: the journal span it covers, and which of the
    /// `Frames`' records and lists are its.
    struct Frame {
        var start: Int
        var end: Int
        var lines: Int
        /// The bytes of the longest line it covers, newline included.
        var longestLine: Int
        /// The CRC-32C of the journal's bytes `start..<end`.
        var coveredCRC: UInt32
        /// The bytes of its last line (ending at `end`).
        var lastLineBytes: Int
        /// The table's rows and lists once its lines are applied.
        var rowsAfter: Int
        var listsAfter: Int
        /// Its records and lists: indices into `Frames.records` and `Frames.lists`.
        var records: Range<Int>
        var lists: Range<Int>
        /// Where the frame ends in the file.
        var fileEnd: Int
    }

    /// A file's frames as read, their records and lists kept in two arrays
    /// for all of them (an open reads thousands of frames).
    struct Frames {
        var frames: [Frame] = []
        /// (row, entity, offset of the record in the file, its bytes)
        var records: [(row: Int, entity: Int, offset: Int, count: Int)] = []
        /// (list number, offset of its rows in the file, how many)
        var lists: [(number: Int, offset: Int, count: Int)] = []
    }

    static func header(_ binding: Binding) -> [UInt8] {
        var out = magic
        out.appendLE(version)
        out.appendLE(UInt32(0))
        out.appendLE(UInt64(bitPattern: binding.token))
        out.appendLE(UInt64(bitPattern: binding.snapshotBytes))
        out.appendLE(binding.snapshotCRC)
        out.appendLE(UInt32(0))
        out.append(contentsOf: binding.fingerprint)
        out.appendLE(UInt64(bitPattern: binding.rows))
        return out
    }

    /// A frame covering `lines` lines of the journal from `start` to `end`,
    /// whose bytes have the CRC-32C `coveredCRC`, with each record given.
    static func frame(start: Int, end: Int, lines: Int, longestLine: Int, coveredCRC: UInt32, lastLineBytes: Int,
                      rowsAfter: Int, listsAfter: Int, records: [(row: Int, entity: Int, bytes: UnsafeRawBufferPointer)],
                      lists: [(number: Int, rows: [RowID])]) -> [UInt8] {
        var payload: [UInt8] = []
        let recordBytes = records.reduce(0) { $0 + recordHeaderBytes + $1.bytes.count }
        let listBytes = lists.reduce(0) { $0 + listHeaderBytes + 4 * $1.rows.count }
        payload.reserveCapacity(payloadHeaderBytes + recordBytes + listBytes)
        payload.appendLE(UInt64(start))
        payload.appendLE(UInt64(end))
        payload.appendLE(UInt32(lines))
        payload.appendLE(UInt32(longestLine))
        payload.appendLE(coveredCRC)
        payload.appendLE(UInt32(lastLineBytes))
        payload.appendLE(UInt32(rowsAfter))
        payload.appendLE(UInt32(listsAfter))
        payload.appendLE(UInt32(records.count))
        payload.appendLE(UInt32(lists.count))
        for r in records {
            payload.appendLE(UInt32(r.row))
            payload.appendLE(UInt16(r.entity))
            payload.appendLE(UInt32(r.bytes.count))
            payload.append(contentsOf: r.bytes)
        }
        for l in lists {
            payload.appendLE(UInt32(l.number))
            payload.appendLE(UInt32(l.rows.count))
            for r in l.rows { payload.appendLE(UInt32(bitPattern: r)) }
        }
        var out: [UInt8] = []
        out.reserveCapacity(frameHeaderBytes + payload.count)
        out.appendLE(UInt32(payload.count))
        out.appendLE(payload.withUnsafeBytes { CRC32C.checksum($0) })
        out.append(contentsOf: payload)
        return out
    }

    /// Whether `bytes` start with the header of `binding`.
    static func hasHeader(_ bytes: UnsafeRawBufferPointer, of binding: Binding) -> Bool {
        guard bytes.count >= headerBytes else { return false }
        return header(binding).withUnsafeBytes { $0.elementsEqual(bytes.prefix(headerBytes)) }
    }

    /// The frames after the header, in order, as far as each is whole,
    /// checksummed and starts where the one before it ended; what follows
    /// the first that is not is ignored. Each frame's counts are at least
    /// the image's and the frame's before; each record is within the file,
    /// names a row below its frame's rows and an entity below `entities`
    /// (or none, for an empty row past the image's); each list a number
    /// below its frame's lists, other than the shared empty list, and rows
    /// below its frame's rows. Nothing else about the journal is checked here.
    static func frames(_ bytes: UnsafeRawBufferPointer, imageRows: Int, imageLists: Int, entities: Int) -> Frames {
        var read = Frames()
        var at = headerBytes, covered = 0, rows = imageRows, lists = imageLists
        while bytes.count - at >= frameHeaderBytes {
            let length = Int(bytes.loadLE(UInt32.self, at: at)), crc = bytes.loadLE(UInt32.self, at: at + 4)
            let p = at + frameHeaderBytes
            guard length >= payloadHeaderBytes, length <= bytes.count - p,
                  CRC32C.checksum(UnsafeRawBufferPointer(rebasing: bytes[p..<(p + length)])) == crc else { break }
            let start = bytes.loadLE(UInt64.self, at: p), end = bytes.loadLE(UInt64.self, at: p + 8)
            let lines = Int(bytes.loadLE(UInt32.self, at: p + 16)), longest = Int(bytes.loadLE(UInt32.self, at: p + 20))
            let coveredCRC = bytes.loadLE(UInt32.self, at: p + 24)
            let lastLineBytes = Int(bytes.loadLE(UInt32.self, at: p + 28))
            let rowsAfter = Int(bytes.loadLE(UInt32.self, at: p + 32)), listsAfter = Int(bytes.loadLE(UInt32.self, at: p + 36))
            let count = Int(bytes.loadLE(UInt32.self, at: p + 40)), listCount = Int(bytes.loadLE(UInt32.self, at: p + 44))
            guard start == UInt64(covered), end > start, end <= UInt64(Int.max), lines > 0, lastLineBytes > 0,
                  UInt64(lastLineBytes) <= end - start, longest >= lastLineBytes, UInt64(longest) <= end - start,
                  rowsAfter >= rows, listsAfter >= lists, rowsAfter <= Int(Int32.max), listsAfter <= Int(Int32.max),
                  count <= (length - payloadHeaderBytes) / recordHeaderBytes,
                  listCount <= (length - payloadHeaderBytes) / listHeaderBytes else { break }
            let stop = p + length
            var r = p + payloadHeaderBytes
            var sound = true
            let firstRecord = read.records.count, firstList = read.lists.count
            for _ in 0..<count {
                guard stop - r >= recordHeaderBytes else { sound = false; break }
                let row = Int(bytes.loadLE(UInt32.self, at: r)), entity = Int(bytes.loadLE(UInt16.self, at: r + 4))
                let n = Int(bytes.loadLE(UInt32.self, at: r + 6))
                r += recordHeaderBytes
                guard row < rowsAfter, entity < entities || entity == noEntity && n == 0 && row >= imageRows, n <= stop - r else {
                    sound = false
                    break
                }
                read.records.append((row, entity, r, n))
                r += n
            }
            for _ in 0..<(sound ? listCount : 0) {
                guard stop - r >= listHeaderBytes else { sound = false; break }
                let number = Int(bytes.loadLE(UInt32.self, at: r)), n = Int(bytes.loadLE(UInt32.self, at: r + 4))
                r += listHeaderBytes
                guard number > 0, number < listsAfter, n <= (stop - r) / 4,
                      (0..<n).allSatisfy({ Int(bytes.loadLE(UInt32.self, at: r + 4 * $0)) < rowsAfter }) else {
                    sound = false
                    break
                }
                read.lists.append((number, r, n))
                r += 4 * n
            }
            guard sound, r == stop else {
                read.records.removeSubrange(firstRecord...)
                read.lists.removeSubrange(firstList...)
                break
            }
            read.frames.append(Frame(start: Int(start), end: Int(end), lines: lines, longestLine: longest, coveredCRC: coveredCRC,
                                     lastLineBytes: lastLineBytes, rowsAfter: rowsAfter, listsAfter: listsAfter,
                                     records: firstRecord..<read.records.count, lists: firstList..<read.lists.count, fileEnd: stop))
            covered = Int(end)
            rows = rowsAfter
            lists = listsAfter
            at = stop
        }
        return read
    }
}

extension Array where Element == UInt8 {
    mutating func appendLE<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}

extension UnsafeRawBufferPointer {
    func loadLE<T: FixedWidthInteger>(_ type: T.Type, at offset: Int) -> T {
        T(littleEndian: loadUnaligned(fromByteOffset: offset, as: T.self))
    }
}
