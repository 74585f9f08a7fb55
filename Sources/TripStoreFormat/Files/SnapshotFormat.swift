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

    /// `lastCommit`: the time of the last history line, written as that line
    /// writes it, so a writer learns it without reading the history (after a
    /// bulk import, one line of hundreds of megabytes).
    package static func trailer(objects: Int, history: Int, lastCommit: Double?, crc: UInt32) -> [UInt8] {
        var bytes = Array(#"{"end":{"objects":\#(objects),"history":\#(history),"#.utf8)
        if let lastCommit {
            bytes += Array(#""lastCommit":""#.utf8)
            ISODate.append(lastCommit, to: &bytes)
            bytes += Array(#"","#.utf8)
        }
        return bytes + Array(#""crc32c":"\#(CRC32C.hex(crc))"}}"#.utf8) + [0x0A]
    }
}
