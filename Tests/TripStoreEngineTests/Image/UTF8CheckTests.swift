import Testing
@testable import TripStoreCore
import TripStoreModels

/// `UTF8Check` against the standard library's decoder, written apart.
@Suite struct UTF8CheckTests {
    func reference(_ bytes: [UInt8]) -> Bool {
        String(validating: bytes, as: UTF8.self) != nil
    }

    func check(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { UTF8Check.isValid($0) }
    }

    @Test func knownForms() {
        #expect(check([]))
        #expect(check(Array("Zürich, Ōmiya, 東京, 🎉".utf8)))
        #expect(!check([0xFF]))
        #expect(!check([0xC0, 0x80]))  // overlong
        #expect(!check([0xED, 0xA0, 0x80]))  // a surrogate
        #expect(!check([0xF4, 0x90, 0x80, 0x80]))  // past U+10FFFF
        #expect(!check(Array("abcdefgh".utf8) + [0xE2, 0x82]))  // cut after the ASCII run
    }

    /// Random bytes weighted towards UTF-8's shapes (fixed seeds): the same verdict as the standard library's.
    @Test(arguments: [1, 2, 3] as [UInt64]) func randomBytesAgreeWithTheStandardLibrary(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        let pieces: [[UInt8]] = [Array("plain ascii text".utf8), Array("é".utf8), Array("東".utf8), Array("🎉".utf8),
                                 [0x80], [0xC3], [0xE6, 0x9D], [0xF0, 0x9F, 0x8E], [0xFF], [0xED, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF]]
        for _ in 0..<4_000 {
            var bytes: [UInt8] = []
            for _ in 0..<Int(random.next() % 8) {
                if random.next() % 4 == 0 {
                    bytes.append(UInt8(truncatingIfNeeded: random.next()))
                } else {
                    bytes += pieces[Int(random.next() % UInt64(pieces.count))]
                }
            }
            #expect(check(bytes) == reference(bytes), "\(bytes)")
        }
    }
}
