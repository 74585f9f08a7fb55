import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A value as an index orders it: an `Int` attribute's values exactly,
/// doubles and dates as doubles (an integer and a double compare by their
/// exact values), strings by Swift's `<` (Unicode scalars after NFC
/// normalisation), false before true.
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
        case (.string(let x), .string(let y)): return x < y
        case (.bool, _): return true
        case (.number, .string), (.integer, .string): return true
        default: return false
        }
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
