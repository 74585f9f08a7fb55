import Testing
@testable import TripStoreCLI
import TripStoreModels

/// `apply -` reads standard input as lines of bytes (`readLineBytes`):
/// random bytes, cut into random pieces as a pipe delivers them, against a
/// split written apart. A line ends at LF (a CR before it is dropped); a
/// last line without LF is a line as it is.
@Suite struct InputLinesFuzzTests {
    static func reference(_ bytes: [UInt8]) -> [[UInt8]] {
        var lines: [[UInt8]] = [], line: [UInt8] = []
        for b in bytes {
            if b == 0x0A {
                if line.last == 0x0D { line.removeLast() }
                lines.append(line)
                line = []
            } else {
                line.append(b)
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    @Test func linesOfRandomBytesInRandomPiecesAreTheReferenceSplit() {
        var random = SplitMix64(seed: 4242)
        let alphabet: [UInt8] = [0x0A, 0x0D, 0x61, 0x7B, 0x00, 0xFF, 0x20]
        for k in 0..<300 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 400) { bytes.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            if k % 50 == 7 {
                // A line past the size handed over in its own buffer, then more lines.
                bytes += [UInt8](repeating: 0x62, count: (1 << 20) + Int(random.next() % 5000)) + [0x0D, 0x0A, 0x63, 0x0A, 0x64]
            }
            var pieces: [[UInt8]] = [], at = 0
            while at < bytes.count {
                let n = min(bytes.count - at, 1 + Int(random.next() % (k % 3 == 0 ? 3 : 700_000)))
                pieces.append(Array(bytes[at..<(at + n)]))
                at += n
            }
            let source = InputSource.arriving(pieces)
            var read: [[UInt8]] = []
            while let line = source.readLineBytes() { read.append(line) }
            #expect(read == Self.reference(bytes), "case \(k): \(bytes.count) bytes in \(pieces.count) pieces")
            #expect(source.readLineBytes() == nil, "case \(k): the end stays the end")
        }
    }
}
