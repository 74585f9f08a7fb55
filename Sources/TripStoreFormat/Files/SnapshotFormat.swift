import TripStoreJSON
import TripStoreSystem
/// The snapshot file: a header line, one envelope per object sorted by id,
/// one line per history transaction, and a trailer whose CRC-32C covers
/// every byte before it.
package enum SnapshotFormat {
    /// 2 stores a run of inserts of one type in history as one change with
    /// `ids` (see `HistoryCoding.appendCompact`); 3 writes a reference to a
    /// destination without subclasses as `{"id":…}`. Formats 1 and 2 are still read.
    package static let version = 3

    package static func header(schema: Schema, token: Int64, objects: Int) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("format"); w.int(Int64(version))
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
