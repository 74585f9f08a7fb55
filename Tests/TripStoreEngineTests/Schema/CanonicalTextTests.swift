import Testing
@testable import TripStoreFormat

/// `CanonicalText.nfc` gives Unicode's NFC, including the Hangul case
/// Foundation's composition leaves undone on Linux.
@Suite struct CanonicalTextTests {
    func scalars(_ s: String) -> [UInt32] { s.unicodeScalars.map(\.value) }

    @Test func hangulSyllablesComposeWithTheirTrailingConsonant() {
        #expect(scalars(CanonicalText.nfc("\u{AC00}\u{11A8}")) == [0xAC01])
        #expect(scalars(CanonicalText.nfc("\u{1100}\u{1161}\u{11A8}")) == [0xAC01])
        #expect(scalars(CanonicalText.nfc("\u{D788}\u{11C2}")) == [0xD7A3])
        #expect(scalars(CanonicalText.nfc("x\u{AC00}\u{11A8}\u{AC00}\u{11A8}y")) == [0x78, 0xAC01, 0xAC01, 0x79])
        // Already an LVT syllable, a trailing consonant alone, or one that a mark comes before: nothing composes.
        #expect(scalars(CanonicalText.nfc("\u{AC01}\u{11A8}")) == [0xAC01, 0x11A8])
        #expect(scalars(CanonicalText.nfc("\u{11A8}")) == [0x11A8])
        #expect(scalars(CanonicalText.nfc("\u{AC00}\u{302}\u{11A8}")) == [0xAC00, 0x302, 0x11A8])
        #expect(scalars(CanonicalText.nfc("\u{AC00}\u{11A7}")) == [0xAC00, 0x11A7])
    }

    @Test func otherTextIsFoundationsNFC() {
        #expect(scalars(CanonicalText.nfc("cafe\u{301}")) == [0x63, 0x61, 0x66, 0xE9])
        #expect(scalars(CanonicalText.nfc("\u{2126}")) == [0x3A9])
        #expect(CanonicalText.nfc("plain") == "plain")
        #expect(scalars(CanonicalText.nfc("H\u{1ED9}i An")) == scalars("H\u{1ED9}i An"))
    }
}
