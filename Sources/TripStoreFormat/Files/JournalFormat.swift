import TripStoreJSON
import TripStoreSystem
/// One journal line per committed transaction:
/// `{"token":…,"timestamp":…,"author":…,"changes":[…],"crc32c":"…"}` where
/// the checksum covers every byte of the line before `,"crc32c"`.
package enum JournalFormat {
    static let checksumSuffixLength = 21  // ,"crc32c":"xxxxxxxx"}
    static let checksumKey = Array(#","crc32c":""#.utf8)

    /// The complete line, newline included.
    package static func line(_ t: HistoryTransaction, schema: Schema,
                            inserted: [StoredObject], lookup: some ObjectLookup) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256 + inserted.count * 256)
        var k = 0
        let encoder = EnvelopeFastEncoder(schema: schema)
        var w = JSONWriter()
        // The inserts are usually in `inserted`'s order; a replayed feed line
        // may list them in another, and each must get its own object's data.
        var byID: [String: Int]?
        HistoryCoding.appendCompact(t, to: &bytes) { i, out in
            let id = t.changes[i].id
            if k < inserted.count && inserted[k].id == id {
                k += 1
            } else {
                if byID == nil { byID = Dictionary(inserted.enumerated().map { ($1.id, $0) }, uniquingKeysWith: { a, _ in a }) }
                guard let at = byID?[id] else { return }
                k = at + 1
            }
            let o = inserted[k - 1]
            swap(&w.bytes, &out)
            encoder.writeData(o, entity: schema.entities[o.entity], lookup: lookup, storedSidesOnly: false, to: &w)
            swap(&w.bytes, &out)
        }
        return seal(bytes)
    }

    /// Replaces the final `}` of a JSON object with the checksum member and a newline.
    static func seal(_ object: [UInt8]) -> [UInt8] {
        var bytes = object
        bytes.removeLast()
        let crc = bytes.withUnsafeBytes { CRC32C.checksum($0) }
        bytes.append(contentsOf: checksumKey)
        bytes.append(contentsOf: CRC32C.hex(crc).utf8)
        bytes.append(contentsOf: Array("\"}\n".utf8))
        return bytes
    }

    /// True when a line (without its newline) carries a correct checksum.
    package static func isIntact(_ line: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = line.count
        guard n > checksumSuffixLength + 2 else { return false }
        let s = n - checksumSuffixLength
        for (k, b) in checksumKey.enumerated() where line[s + k] != b { return false }
        guard line[n - 2] == UInt8(ascii: "\""), line[n - 1] == UInt8(ascii: "}") else { return false }
        let hex = String(decoding: UnsafeBufferPointer(rebasing: line[(s + checksumKey.count)..<(n - 2)]), as: UTF8.self)
        guard let stored = UInt32(hex, radix: 16) else { return false }
        return CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(line)[0..<s])) == stored
    }
}
