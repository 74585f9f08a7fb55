import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

    /// `scan` for an array written one element to a line (as `export`, the
    /// data generator and most tools write one): only newlines are looked
    /// for, and each line from `startIndex` taken as one element (`{…}`)
    /// with its comma, the `]` alone on the last line or after the last
    /// element. Nil when a line is not shaped so: `scan` then reads the
    /// bytes. A line may still hold part of an element only (`{"a":{},` of
    /// an element written over several lines): the caller must read each
    /// range as exactly one whole element and give up otherwise, which
    /// proves the guess, since a JSON text cut into whole values between
    /// commas is that array.
    package static func scanLines(_ buf: UnsafeBufferPointer<UInt8>, from startIndex: Int, atEnd: Bool, hadElements: Bool,
                                  into ranges: inout [Range<Int>]) -> ScanEnd? {
        let n = buf.count
        var i = startIndex
        // After an element without a comma only the `]` may come.
        var closing = false
        var found: [Range<Int>] = []
        var sawElement = hadElements
        var resume = n
        while i < n {
            let lineStart = i
            var lineEnd = n
            if let newline = memchr(buf.baseAddress! + i, 0x0A, n - i) {
                lineEnd = buf.baseAddress!.distance(to: newline.assumingMemoryBound(to: UInt8.self))
            } else if !atEnd {
                // A line longer than the window is left to `scan`, which can cut it.
                guard lineStart > startIndex else { return nil }
                resume = lineStart
                break
            }
            i = lineEnd + 1
            var a = lineStart, b = lineEnd
            while a < b && isBlankByte(buf[a]) { a += 1 }
            while b > a && isBlankByte(buf[b - 1]) { b -= 1 }
            if a == b { continue }
            if buf[a] == UInt8(ascii: "]") {
                // A comma before it is a trailing comma: `scan` says no.
                guard b == a + 1, closing || !sawElement else { return nil }
                ranges += found
                return .closed(after: a + 1)
            }
            guard !(closing || buf[a] != UInt8(ascii: "{")) else { return nil }
            switch buf[b - 1] {
            case UInt8(ascii: ","):
                guard b - 2 > a, buf[b - 2] == UInt8(ascii: "}") else { return nil }
                found.append(lineStart..<(b - 1))
            case UInt8(ascii: "}"):
                found.append(lineStart..<b)
                closing = true
            case UInt8(ascii: "]"):
                guard b - 2 > a, buf[b - 2] == UInt8(ascii: "}") else { return nil }
                ranges += found
                ranges.append(lineStart..<(b - 1))
                return .closed(after: b)
            default:
                return nil
            }
            sawElement = true
        }
        // An element without its comma is read again with what follows it, so
        // that the next window cannot miss a comma between them.
        if closing, let last = found.popLast() {
            ranges += found
            return .open(resumeAt: last.lowerBound)
        }
        ranges += found
        return .open(resumeAt: resume)
    }

    /// The ranges `scan` finds over the bytes that `ranges` (from `scanLines`
    /// or `scan`) cover, up to the comma or `]` after the last: the same
    /// ranges where the cut was right; nil where those bytes do not end in
    /// whole elements there.
    package static func recut(_ buf: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> [Range<Int>]? {
        guard let first = ranges.first, let last = ranges.last else { return nil }
        var k = last.upperBound
        while k < buf.count && isBlankByte(buf[k]) { k += 1 }
        guard k < buf.count, buf[k] == UInt8(ascii: ",") || buf[k] == UInt8(ascii: "]") else { return nil }
        let end = k + 1
        var exact: [Range<Int>] = []
        let stop = scan(UnsafeBufferPointer(rebasing: buf[0..<end]), from: first.lowerBound, hadElements: true, into: &exact)
        guard stop == (buf[k] == UInt8(ascii: ",") ? .open(resumeAt: end) : .closed(after: end)) else { return nil }
        return exact
    }

    @inline(__always) private static func isBlankByte(_ b: UInt8) -> Bool {
        b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09
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
