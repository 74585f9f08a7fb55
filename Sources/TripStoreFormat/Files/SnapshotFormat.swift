import TripStoreJSON
import TripStoreSystem
/// The snapshot file: a header line, one envelope per object sorted by id,
/// one line per history transaction, and a trailer whose CRC-32C covers
/// every byte before it.
package enum SnapshotFormat {
    /// 2 stores a run of inserts of one type in history as one change with
    /// `ids` (see `HistoryCoding.appendCompact`); 3 writes a reference to a
    /// destination without subclasses as `{"id":…}`; 4 is a snapshot whose
    /// trailer also says when the oldest state `--as-of` reaches was
    /// committed (`oldestReachableCommit`, once history was pruned). The
    /// newest format this program reads; formats 1 to 3 are still read.
    package static let version = 4

    /// The format a snapshot is written in: 3, or 4 when its trailer says
    /// `oldestReachableCommit` (a store that never pruned stays readable by
    /// the programs that read 3, as SQLite raises its file format only for
    /// a feature in use).
    package static func written(oldestReachableCommit: Double?) -> Int { oldestReachableCommit == nil ? 3 : 4 }

    package static func header(schema: Schema, token: Int64, objects: Int, format: Int) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("format"); w.int(Int64(format))
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
    /// history (after a bulk import, one line of hundreds of megabytes).
    /// `oldestReachableCommit`: when the newest transaction a prune dropped
    /// was committed, the state just before the oldest retained one, which
    /// `--as-of` reaches (format 4). The checksum covers `bodyCRC`'s bytes
    /// and then those times' characters (see `sealed`), so the values
    /// outside the body are checked too.
    package static func trailer(objects: Int, history: Int, lastCommit: Double?, oldestReachableCommit: Double? = nil,
                                bodyCRC: UInt32) -> (bytes: [UInt8], crc: UInt32) {
        var bytes = Array(#"{"end":{"objects":\#(objects),"history":\#(history),"#.utf8)
        var time: [UInt8] = [], oldest: [UInt8] = []
        if let lastCommit {
            ISODate.append(lastCommit, to: &time)
            bytes += Array(#""lastCommit":""#.utf8) + time + Array(#"","#.utf8)
        }
        if let oldestReachableCommit {
            ISODate.append(oldestReachableCommit, to: &oldest)
            bytes += Array(#""oldestReachableCommit":""#.utf8) + oldest + Array(#"","#.utf8)
        }
        let crc = sealed(bodyCRC, lastCommit: time, oldestReachableCommit: oldest)
        return (bytes + Array(#""crc32c":"\#(CRC32C.hex(crc))"}}"#.utf8) + [0x0A], crc)
    }

    /// The trailer's checksum from the body's: continued over the
    /// `lastCommit` text, then the `oldestReachableCommit` text, where the
    /// trailer has them.
    package static func sealed(_ bodyCRC: UInt32, lastCommit text: [UInt8], oldestReachableCommit oldest: [UInt8] = []) -> UInt32 {
        var crc = bodyCRC
        for t in [text, oldest] where !t.isEmpty { crc = t.withUnsafeBytes { CRC32C.checksum($0, continuing: crc) } }
        return crc
    }
}
