import TripStoreJSON
import TripStoreSystem
/// The snapshot file: a header line, one envelope per object sorted by id,
/// one line per history transaction, and a trailer whose CRC-32C covers
/// every byte before it.
package enum SnapshotFormat {
    /// 2 stores a run of inserts of one type in history as one change with
    /// `ids` (see `HistoryCoding.appendCompact`); 3 writes a reference to a
    /// destination without subclasses as `{"id":…}`; 4 is a snapshot whose
    /// header says when the oldest state `--as-of` reaches was committed
    /// (`oldestReachableCommit`, once history was pruned). The newest
    /// format this program reads; formats 1 to 3 are still read.
    package static let version = 4

    /// The format a snapshot is written in: 3, or 4 when its header says
    /// `oldestReachableCommit` (a store that never pruned stays readable by
    /// the programs that read 3, as SQLite raises its file format only for
    /// a feature in use).
    package static func written(oldestReachableCommit: Double?) -> Int { oldestReachableCommit == nil ? 3 : 4 }

    /// The header line. `oldestReachableCommit` (format 4) follows the
    /// format at once, so that a reader that opens from the image learns it
    /// from the file's first bytes (`headerStart`) without parsing the schema;
    /// in the header, the body's checksum covers it, and a program that
    /// reads 3 refuses the format before anything else.
    package static func header(schema: Schema, token: Int64, objects: Int, oldestReachableCommit: Double? = nil) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("format"); w.int(Int64(written(oldestReachableCommit: oldestReachableCommit)))
        if let oldestReachableCommit {
            var time: [UInt8] = []
            ISODate.append(oldestReachableCommit, to: &time)
            w.key("oldestReachableCommit"); w.string(String(decoding: time, as: UTF8.self))
        }
        w.key("schema")
        w.beginObject()
        SchemaCoding.writeMembers(schema, to: &w)
        w.endObject()
        w.key("token"); w.int(token)
        w.key("objects"); w.int(Int64(objects))
        w.endObject()
        w.bytes.append(0x0A)
        return w.bytes
    }

    /// The start of a header line (`{"format":N,` and, in format 4,
    /// `"oldestReachableCommit":"…",`), read from the file's first bytes:
    /// the format, and in format 4 the time (nil when it is not there as
    /// `header` writes it). Nil when the bytes do not start with a format.
    package static func headerStart(_ bytes: [UInt8]) -> (format: Int, oldestReachableCommit: Double?)? {
        let formatKey = Array(#"{"format":"#.utf8), oldestKey = Array(#","oldestReachableCommit":""#.utf8)
        guard bytes.count > formatKey.count, bytes.prefix(formatKey.count).elementsEqual(formatKey) else { return nil }
        var i = formatKey.count, format = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, i - formatKey.count < 9 {
            format = format * 10 + Int(bytes[i] - 0x30)
            i += 1
        }
        guard i > formatKey.count, i < bytes.count, bytes[i] == UInt8(ascii: ",") || bytes[i] == UInt8(ascii: "}") else { return nil }
        guard format == 4 else { return (format, nil) }
        let from = i + oldestKey.count
        guard bytes.count >= from, bytes[i..<from].elementsEqual(oldestKey),
              let close = bytes[from...].firstIndex(of: UInt8(ascii: "\"")) else { return (format, nil) }
        let time = bytes[from..<close].withUnsafeBufferPointer { ISODate.parse(bytes: $0) }
        return (format, time)
    }

    /// The trailer, and the checksum it holds. `lastCommit`: when the last
    /// transaction was committed (retained or since pruned), written as a
    /// history line writes it, so a writer learns it without reading the
    /// history (after a bulk import, one line of hundreds of megabytes). The
    /// checksum covers `bodyCRC`'s bytes and then that time's characters
    /// (see `sealed`), so the one value outside the body is checked too.
    package static func trailer(objects: Int, history: Int, lastCommit: Double?, bodyCRC: UInt32) -> (bytes: [UInt8], crc: UInt32) {
        var bytes = Array(#"{"end":{"objects":\#(objects),"history":\#(history),"#.utf8)
        var time: [UInt8] = []
        if let lastCommit {
            ISODate.append(lastCommit, to: &time)
            bytes += Array(#""lastCommit":""#.utf8) + time + Array(#"","#.utf8)
        }
        let crc = sealed(bodyCRC, lastCommit: time)
        return (bytes + Array(#""crc32c":"\#(CRC32C.hex(crc))"}}"#.utf8) + [0x0A], crc)
    }

    /// The trailer's checksum from the body's: continued over the
    /// `lastCommit` text when the trailer has one.
    package static func sealed(_ bodyCRC: UInt32, lastCommit text: [UInt8]) -> UInt32 {
        text.isEmpty ? bodyCRC : text.withUnsafeBytes { CRC32C.checksum($0, continuing: bodyCRC) }
    }
}
