#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thrown by the byte-level decoders (envelopes on import, snapshot lines on
/// load) at anything they do not handle; the caller then decodes that record
/// the slow way, which either reads it or names exactly what is wrong.
@usableFromInline
package struct FastPathGiveUp: Error {
    @inlinable package init() {}
}

/// The scanning steps the byte-level decoders share, inlinable so that the
/// decoders in other targets (envelopes, snapshot records) inline them.
extension JSONReader {
    /// The next byte after white space, not consumed.
    @inlinable @inline(__always) package mutating func peekByte() -> UInt8? {
        skipWhitespace()
        return index < buffer.count ? buffer[index] : nil
    }

    @inlinable @inline(__always) package mutating func expectByte(_ c: UInt8) throws(FastPathGiveUp) {
        guard peekByte() == c else { throw FastPathGiveUp() }
        index += 1
    }

    /// `,` then more, or the closing bracket: true when there is another member.
    @inlinable @inline(__always) package mutating func moreMembers(close: UInt8) throws(FastPathGiveUp) -> Bool {
        guard let c = peekByte() else { throw FastPathGiveUp() }
        index += 1
        if c == UInt8(ascii: ",") { return true }
        if c == close { return false }
        throw FastPathGiveUp()
    }

    /// A string of printable ASCII without escapes (keys, ids, type names,
    /// dates, enum cases), as the byte range of its contents.
    @inlinable @inline(__always) package mutating func plainString() throws(FastPathGiveUp) -> Range<Int> {
        guard peekByte() == UInt8(ascii: "\"") else { throw FastPathGiveUp() }
        let start = index + 1
        var i = start
        // Eight bytes at a time while none ends the string or is one it may not hold.
        while i + 8 <= buffer.count {
            let word = UInt64(littleEndian: UnsafeRawPointer(buffer.baseAddress! + i).loadUnaligned(as: UInt64.self))
            let plain = JSONReader.plainPrefix(word)
            i += plain
            if plain < 8 { break }
        }
        while i < buffer.count {
            let b = buffer[i]
            if b == UInt8(ascii: "\"") { break }
            if b == UInt8(ascii: "\\") || b < 0x20 || b >= 0x80 { throw FastPathGiveUp() }
            i += 1
        }
        guard i < buffer.count else { throw FastPathGiveUp() }
        index = i + 1
        return start..<i
    }

    /// The high bit of the bytes of `word` that are a control character,
    /// `"` or `\\`, and maybe of bytes above one that is (so: zero exactly
    /// when there is none).
    @inlinable @inline(__always) package static func escapeMarks(_ word: UInt64) -> UInt64 {
        let ones: UInt64 = 0x0101_0101_0101_0101, high: UInt64 = 0x8080_8080_8080_8080
        let quote = word ^ (ones &* 0x22), backslash = word ^ (ones &* 0x5C)
        let below = (word &- ones &* 0x20) & ~word
        let zeroQuote = (quote &- ones) & ~quote
        let zeroBackslash = (backslash &- ones) & ~backslash
        return (below | zeroQuote | zeroBackslash) & high
    }

    /// How many of the eight bytes of `word` (loaded little-endian: the
    /// first byte lowest) come before the first that is not ASCII a JSON
    /// string holds as it is; 8 where all are. `escapeMarks` may mark bytes
    /// after a marked one, never before it, so its lowest mark is exact.
    @inlinable @inline(__always) package static func plainPrefix(_ word: UInt64) -> Int {
        ((escapeMarks(word) | word) & 0x8080_8080_8080_8080).trailingZeroBitCount >> 3
    }

    /// Whether `byte` is among the bytes in `range`: eight at a time (an
    /// import asks it of every id), the last eight again for the rest.
    @inlinable @inline(__always) package func contains(_ byte: UInt8, in range: Range<Int>) -> Bool {
        guard let base = buffer.baseAddress, range.count >= 8 else { return buffer[range].contains(byte) }
        let ones: UInt64 = 0x0101_0101_0101_0101
        @inline(__always) func has(_ at: Int) -> Bool {
            let word = UnsafeRawPointer(base + at).loadUnaligned(as: UInt64.self) ^ (ones &* UInt64(byte))
            return (word &- ones) & ~word & (ones &* 0x80) != 0
        }
        var i = range.lowerBound
        while i + 8 <= range.upperBound {
            if has(i) { return true }
            i += 8
        }
        return i < range.upperBound && has(range.upperBound - 8)
    }

    /// Whether the bytes in `range` are `name`.
    @inlinable @inline(__always) package func bytes(_ range: Range<Int>, equal name: [UInt8]) -> Bool {
        guard range.count == name.count else { return false }
        guard range.count > 0 else { return true }
        return name.withUnsafeBufferPointer { n in
            memcmp(buffer.baseAddress! + range.lowerBound, n.baseAddress!, range.count) == 0
        }
    }
}
