import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A value as an index orders it: numbers and dates as doubles, strings by
/// Swift's `<` (Unicode scalars after NFC normalisation), false before true.
package enum IndexKey: Hashable, Comparable, Sendable {
    case bool(Bool)
    case number(Double)
    case string(String)

    package init?(_ v: Value) {
        switch v {
        case .bool(let b): self = .bool(b)
        case .int(let i): self = .number(Double(i))
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
        case (.string(let x), .string(let y)): return x < y
        case (.bool, _): return true
        case (.number, .string): return true
        default: return false
        }
    }
}
