import TripStoreJSON
import TripStoreSystem

/// `schema.json`, the store's record of its schema from its first commit:
/// one line, `{"format":1,"fingerprint":…,"entities":[…],"crc32c":"…"}`
/// (format 2 where it names original names),
/// checksummed as a journal line is. It is written before the first journal
/// line or snapshot of a store, and replaced (atomically) only when a program
/// whose schema adds to it writes to the store.
package enum SchemaRecordFormat {
    package static let fileName = "schema.json"
    /// Where a migration writes the new record before its snapshot commits it.
    package static let pendingFileName = "schema-next.json"
    /// The newest format this program reads. 2 is a record that names
    /// original names: each rename it names was applied and applies no
    /// more, which 0.9.0 (format 1) did not know and would apply again, so
    /// it refuses such a store by this number; a record without them stays
    /// in format 1, which every version reads.
    package static let version: Int64 = 2

    /// The format `schema`'s record is written in.
    package static func written(_ schema: Schema) -> Int64 { schema.hasOriginalNames ? 2 : 1 }

    /// The file's bytes for `schema`.
    package static func bytes(_ schema: Schema) -> [UInt8] {
        var w = JSONWriter()
        w.beginObject()
        w.key("format"); w.int(written(schema))
        SchemaCoding.writeMembers(schema, to: &w)
        w.endObject()
        return JournalFormat.seal(w.bytes)
    }

    /// What a record's bytes fail, if anything.
    package enum Problem: Error {
        /// A cut or altered file, or one that is not a record.
        case damaged(String)
        /// Written by a newer version of the program.
        case newerFormat(Int)
    }

    /// The schema a record describes.
    package static func read(_ bytes: [UInt8]) throws(Problem) -> Schema {
        var body = bytes
        guard body.last == 0x0A else { throw .damaged("it does not end with a newline (a cut write)") }
        body.removeLast()
        let intact = body.withUnsafeBufferPointer { JournalFormat.isIntact($0) }
        guard intact else { throw .damaged("checksum mismatch") }
        let value: JSONValue
        do {
            value = try body.withUnsafeBufferPointer { buf in
                var r = JSONReader(buffer: buf)
                return try r.parseDocument()
            }
        } catch {
            throw .damaged("\(error)")
        }
        guard case .int(let format)? = value["format"], format >= 1 else { throw .damaged("it has no format version") }
        guard format <= version else { throw .newerFormat(Int(format)) }
        let schema: Schema
        do {
            schema = try SchemaFile.read(value: value, extraKeys: ["format", "crc32c"])
        } catch {
            throw .damaged("\(error)")
        }
        guard case .string(schema.fingerprint)? = value["fingerprint"] else {
            throw .damaged("its fingerprint is not the fingerprint of the schema it describes")
        }
        return schema
    }
}
