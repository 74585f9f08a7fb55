import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreFormat
import TripStoreSystem

@Suite struct SnapshotHeaderTests {
    @Test func aFingerprintThatIsNotTheDescribedSchemasIsDamage() throws {
        let folder = TestFolders.make("fingerprint")
        let store = try TestStores.filmStudio(folder, id: "s")
        try store.compact()
        let path = folder + "/snapshot-\(store.snapshotToken).jsonl"
        store.close()
        var lines = String(decoding: try FileIO.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
        let fp = FilmSchema.schema.fingerprint
        let forged = String(fp.dropLast()) + (fp.last == "0" ? "1" : "0")
        lines[0] = lines[0].replacingOccurrences(of: fp, with: forged)
        lines.removeLast()
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        try Data(body + SnapshotFormat.trailer(objects: 1, history: 1, lastCommit: nil, bodyCRC: CRC32C.checksum(body)).bytes).write(to: URL(fileURLWithPath: path))
        FileIO.unlink(path.replacingOccurrences(of: ".jsonl", with: ".image"))
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let detail, _) = error else { return false }
            return line == 1 && detail.contains("is not the fingerprint of the schema it describes")
        }
    }
}
