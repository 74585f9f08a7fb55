import Foundation
import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A value as an index orders it: an `Int` attribute's values exactly,
/// doubles and dates as doubles (an integer and a double compare by their
/// exact values), strings by their Unicode scalars after NFC normalisation
/// (`textPrecedes`), false before true.
package enum IndexKey: Hashable, Comparable, Sendable {
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)

    package init?(_ v: Value) {
        switch v {
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .integer(i)
        case .double(let d): self = .number(d)
        case .date(let d): self = .number(d)
        case .string(let s): self = .string(s)
        default: return nil
        }
    }

    package static func < (a: IndexKey, b: IndexKey) -> Bool {
        switch (a, b) {
        case (.bool(let x), .bool(let y)): return !x && y
        case (.number(let x), .number(let y)): return x < y
        case (.integer(let x), .integer(let y)): return x < y
        case (.integer(let x), .number(let y)): return ExactNumbers.compare(x, y) < 0
        case (.number(let x), .integer(let y)): return ExactNumbers.compare(y, x) > 0
        case (.string(let x), .string(let y)): return textPrecedes(x, y)
        case (.bool, _): return true
        case (.number, .string), (.integer, .string): return true
        default: return false
        }
    }
}

extension IndexKey {
    /// Whether `x` comes before `y` as text: their Unicode scalars after NFC
    /// normalisation, compared one by one (as the bytes of that form in
    /// UTF-8). That is what Swift's `<` on `String` means, but Swift 6.3's
    /// `<` is not a strict weak order on strings that mix composed and
    /// decomposed characters: "e" + U+0301 + "ahov…ahov" and "é" + "ahov…ahovc"
    /// compare neither less nor equal either way, so a sort by it depended on
    /// the order the values came in, and an index could be saved out of
    /// order (found by a hostile review: `verify` then failed at random).
    static func textPrecedes(_ x: String, _ y: String) -> Bool {
        var x = x, y = y
        if let ascii = x.withUTF8({ a in y.withUTF8 { b in isASCII(a) && isASCII(b) ? bytesPrecede(a, b) : nil } }) { return ascii }
        let (nx, ny) = (normalizedText(x), normalizedText(y))
        return nx.withUnsafeBufferPointer { a in ny.withUnsafeBufferPointer { b in bytesPrecede(a, b) } }
    }

    /// The UTF-8 bytes of the NFC form of `s`, in whose byte order
    /// `textPrecedes` puts strings (ASCII is its own NFC form).
    static func normalizedText(_ s: String) -> [UInt8] {
        var s = s
        if s.withUTF8({ isASCII($0) }) { return Array(s.utf8) }
        return Array(CanonicalText.nfc(s).utf8)
    }

    private static func isASCII(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy { $0 < 0x80 }
    }

    private static func bytesPrecede(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
        let n = min(a.count, b.count)
        if n > 0, let pa = a.baseAddress, let pb = b.baseAddress {
            let c = memcmp(pa, pb, n)
            if c != 0 { return c < 0 }
        }
        return a.count < b.count
    }
}

/// Comparisons of an `Int64` with a `Double` by their exact values (converting
/// either way rounds: 2^53 + 1 as a Double is 2^53, `Int.max` is 2^63).
package enum ExactNumbers {
    /// -1, 0 or 1 as `i` is below, equal to or above the finite `d`.
    package static func compare(_ i: Int64, _ d: Double) -> Int {
        if d >= 9_223_372_036_854_775_808.0 { return -1 }
        if d < -9_223_372_036_854_775_808.0 { return 1 }
        let whole = d.rounded(.towardZero)
        let w = Int64(whole)
        if i != w { return i < w ? -1 : 1 }
        return d > whole ? -1 : d < whole ? 1 : 0
    }
}
