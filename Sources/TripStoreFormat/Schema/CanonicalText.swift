import Foundation

/// Text in NFC, the form a store keeps ids in (docs/format.md) and indexes order text by.
///
/// Foundation's composition, with the one case it leaves undone on Linux
/// (swift-corelibs-foundation of Swift 6.3, checked against every canonical
/// decomposition): a Hangul LV syllable followed by a trailing consonant
/// jamo stays two characters instead of composing into one LVT syllable,
/// although Swift compares the two forms equal. Left so, `가` + `ᆨ` and `각`
/// were two ids, and two keys of an index whose answers then depended on
/// whether the image or the JSON was read.
package enum CanonicalText {
    /// The NFC form of `s` (unchanged, and cheap, when it is ASCII).
    package static func nfc(_ s: String) -> String {
        if s.utf8.allSatisfy({ $0 < 0x80 }) { return s }
        return composingHangulTrailingConsonants(s.precomposedStringWithCanonicalMapping)
    }

    private static let syllables: ClosedRange<UInt32> = 0xAC00...0xD7A3
    private static let trailingConsonants: ClosedRange<UInt32> = 0x11A8...0x11C2
    /// Syllables per leading-and-vowel pair: one without a trailing consonant, 27 with one.
    private static let trailingCount: UInt32 = 28

    /// `s` with each LV syllable that a trailing consonant follows composed
    /// with it (Unicode's Hangul composition: LV + (T - 0x11A7)). A trailing
    /// consonant is a starter, so only one right after the syllable composes.
    static func composingHangulTrailingConsonants(_ s: String) -> String {
        guard s.unicodeScalars.contains(where: { trailingConsonants.contains($0.value) }) else { return s }
        var out = String.UnicodeScalarView()
        var pending: Unicode.Scalar?
        for scalar in s.unicodeScalars {
            if let lv = pending, trailingConsonants.contains(scalar.value),
               let lvt = Unicode.Scalar(lv.value + scalar.value - (trailingConsonants.lowerBound - 1)) {
                out.append(lvt)
                pending = nil
                continue
            }
            if let p = pending { out.append(p) }
            let isLV = syllables.contains(scalar.value) && (scalar.value - syllables.lowerBound) % trailingCount == 0
            pending = isLV ? scalar : nil
            if !isLV { out.append(scalar) }
        }
        if let p = pending { out.append(p) }
        return String(out)
    }
}
