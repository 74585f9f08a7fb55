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
    /// format at once, then `lastCommit` (when the last transaction was
    /// committed, retained or since pruned, as a history line writes it), so
    /// that a reader that opens from the image learns both from the file's
    /// first bytes (`headerStart`) without parsing the schema or reading the
    /// history (after a bulk import, one line of hundreds of megabytes). In
    /// the header the trailer's checksum covers them, and a program that
    /// reads 3 refuses format 4 before anything else.
    package static func header(schema: Schema, token: Int64, objects: Int, oldestReachableCommit: Double? = nil,
                               lastCommit: Double? = nil) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("format"); w.int(Int64(written(oldestReachableCommit: oldestReachableCommit)))
        for (key, time) in [("oldestReachableCommit", oldestReachableCommit), ("lastCommit", lastCommit)] {
            guard let time else { continue }
            var text: [UInt8] = []
            ISODate.append(time, to: &text)
            w.key(key); w.string(String(decoding: text, as: UTF8.self))
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

    /// What `headerStart` reads of a header's first bytes.
    package struct HeaderStart: Equatable {
        package var format: Int
        /// Format 4's time of the oldest reachable state; nil when the
        /// header does not say it right after the format.
        package var oldestReachableCommit: Double?
        /// When the last transaction was committed, where the header says
        /// it right after those (snapshots written before it moved here from
        /// the trailer do not).
        package var lastCommit: Double?
    }

    /// How many of a header's first bytes `headerStart` needs at most.
    package static let headerStartBytes = 160

    /// The start of a header line (`{"format":N,`, in format 4
    /// `"oldestReachableCommit":"…",`, then `"lastCommit":"…",` where it
    /// is there), read from the file's first bytes. Nil when the bytes do not
    /// start with a format.
    package static func headerStart(_ bytes: [UInt8]) -> HeaderStart? {
        let formatKey = Array(#"{"format":"#.utf8)
        guard bytes.count > formatKey.count, bytes.prefix(formatKey.count).elementsEqual(formatKey) else { return nil }
        var i = formatKey.count, format = 0
        while i < bytes.count, bytes[i] >= 0x30, bytes[i] <= 0x39, i - formatKey.count < 9 {
            format = format * 10 + Int(bytes[i] - 0x30)
            i += 1
        }
        guard i > formatKey.count, i < bytes.count, bytes[i] == UInt8(ascii: ",") || bytes[i] == UInt8(ascii: "}") else { return nil }
        var start = HeaderStart(format: format)
        /// The time of `,"key":"…"` at `i`, moving past it; nil (and `i` kept) where it is not there.
        func time(_ key: String) -> Double? {
            let opening = Array(#","\#(key)":""#.utf8)
            let from = i + opening.count
            guard bytes.count >= from, bytes[i..<from].elementsEqual(opening),
                  let close = bytes[from...].firstIndex(of: UInt8(ascii: "\"")),
                  let value = bytes[from..<close].withUnsafeBufferPointer({ ISODate.parse(bytes: $0) }) else { return nil }
            i = close + 1
            return value
        }
        if format == 4 {
            start.oldestReachableCommit = time("oldestReachableCommit")
            guard start.oldestReachableCommit != nil else { return start }
        }
        start.lastCommit = time("lastCommit")
        return start
    }

    /// The trailer. Its checksum is the CRC-32C of exactly the bytes before
    /// it, `bodyCRC`, so that any reader can check it from that rule alone.
    package static func trailer(objects: Int, history: Int, bodyCRC: UInt32) -> [UInt8] {
        Array(#"{"end":{"objects":\#(objects),"history":\#(history),"crc32c":"\#(CRC32C.hex(bodyCRC))"}}"#.utf8) + [0x0A]
    }

    /// The checksum a trailer written by 0.9.0 holds when it says
    /// `lastCommit`: the body's, continued over that time's characters.
    /// Such snapshots keep being read; none is written so any more.
    package static func sealed(_ bodyCRC: UInt32, lastCommit text: [UInt8]) -> UInt32 {
        text.isEmpty ? bodyCRC : text.withUnsafeBytes { CRC32C.checksum($0, continuing: bodyCRC) }
    }
}
