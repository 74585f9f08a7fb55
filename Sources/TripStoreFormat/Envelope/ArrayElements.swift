import TripStoreJSON
import TripStoreSystem
/// Finds where each element of a top-level JSON array starts and ends by
/// following only strings and brackets, so the elements can be decoded apart.
package enum ArrayElements {
    /// The byte ranges of the elements of the array whose `[` is at `open`;
    /// nil when the structure is not that of one array (the strict reader then
    /// says what is wrong).
    package static func split(_ buf: UnsafeBufferPointer<UInt8>, openingAt open: Int) -> [Range<Int>]? {
        var ranges: [Range<Int>] = []
        guard case .closed(let after)? = scan(buf, from: open + 1, hadElements: false, into: &ranges),
              isBlank(buf, after..<buf.count) else { return nil }
        return ranges
    }

    /// Where a scan of part of an array stopped.
    package enum ScanEnd: Equatable {
        /// The bytes ran out inside the element that starts here: the next
        /// scan starts here, with more bytes.
        case open(resumeAt: Int)
        /// The array's `]` is just before `after`.
        case closed(after: Int)
    }

    /// Appends to `ranges` the elements of an array that start at `start`
    /// (just after its `[` or a comma between its elements) and end within
    /// `buf`; nil when the structure is not that of an array. `hadElements`:
    /// whether elements came before `start` (a blank last element is then a
    /// trailing comma). Scanning from an element's start needs no other state,
    /// so an input can be split a window at a time.
    package static func scan(_ buf: UnsafeBufferPointer<UInt8>, from startIndex: Int, hadElements: Bool,
                             into ranges: inout [Range<Int>]) -> ScanEnd? {
        var i = startIndex
        var start = i
        var depth = 0
        var sawElement = hadElements
        let n = buf.count
        while i < n {
            let b = buf[i]
            switch b {
            case UInt8(ascii: "\""):
                i += 1
                // Eight bytes at a time to the next quote or backslash (most bytes are in strings).
                while i + 8 <= n {
                    let v = UInt64(littleEndian: UnsafeRawPointer(buf.baseAddress! + i).loadUnaligned(as: UInt64.self))
                    let marks = zeroBytes(v ^ 0x2222_2222_2222_2222) | zeroBytes(v ^ 0x5C5C_5C5C_5C5C_5C5C)
                    if marks == 0 {
                        i += 8
                        continue
                    }
                    i += marks.trailingZeroBitCount / 8
                    break
                }
                while i < n {
                    let c = buf[i]
                    if c == UInt8(ascii: "\\") {
                        i += 2
                        continue
                    }
                    if c == UInt8(ascii: "\"") { break }
                    i += 1
                }
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
            case UInt8(ascii: "}"):
                depth -= 1
                if depth < 0 { return nil }
            case UInt8(ascii: "]"):
                if depth == 0 {
                    if !isBlank(buf, start..<i) { ranges.append(start..<i) } else if sawElement { return nil }
                    return .closed(after: i + 1)
                }
                depth -= 1
            case UInt8(ascii: ","):
                if depth == 0 {
                    guard !isBlank(buf, start..<i) else { return nil }
                    ranges.append(start..<i)
                    sawElement = true
                    start = i + 1
                }
            default:
                break
            }
            i += 1
        }
        return .open(resumeAt: start)
    }

    /// The high bit of each byte of `v` that is zero (and maybe of bytes
    /// above one that is: only the lowest mark is exact).
    @inline(__always) private static func zeroBytes(_ v: UInt64) -> UInt64 {
        (v &- 0x0101_0101_0101_0101) & ~v & 0x8080_8080_8080_8080
    }

    package static func isBlank(_ buf: UnsafeBufferPointer<UInt8>, _ r: Range<Int>) -> Bool {
        for k in r {
            switch buf[k] {
            case 0x20, 0x0A, 0x0D, 0x09: continue
            default: return false
            }
        }
        return true
    }
}
