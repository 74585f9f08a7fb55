import Foundation
import TripStoreSystem

/// A snapshot file edited as a person would by hand: its lines changed by
/// `edit` (the trailer is the last), then the trailer's checksum computed
/// again by the format's rule (the CRC-32C of the bytes before it).
enum SnapshotEdit {
    static func resealed(_ path: String, _ edit: (inout [String]) throws -> Void) throws {
        var lines = String(decoding: try FileIO.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
        try edit(&lines)
        let body = Array((lines.dropLast().joined(separator: "\n") + "\n").utf8)
        let trailer = lines[lines.count - 1].replacingOccurrences(
            of: #""crc32c":"[0-9a-f]+""#, with: #""crc32c":"\#(CRC32C.hex(CRC32C.checksum(body)))""#, options: .regularExpression)
        try Data(body + Array((trailer + "\n").utf8)).write(to: URL(fileURLWithPath: path))
    }
}
