/// Bytes appended through a raw pointer, for a writer that appends millions
/// of small pieces (a snapshot's lines): `[UInt8].append` checks at each
/// piece that the array is unique and has room, and does not inline; here a
/// piece costs one capacity check and a copy.
///
/// Writes the same text as `JSONWriter`'s `append…` functions (they share
/// the encoders below).
package struct ByteOutput: ~Copyable {
    // Inlinable where other modules append a byte or a piece: a call each costs more than the copy.
    @usableFromInline var start: UnsafeMutablePointer<UInt8>
    package private(set) var count = 0
    @usableFromInline var capacity: Int

    package init(capacity: Int) {
        self.capacity = max(capacity, 64)
        start = .allocate(capacity: self.capacity)
    }

    deinit { start.deallocate() }

    /// The bytes written so far.
    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }

    /// Hands the bytes over to an owner that frees them.
    package consuming func finish() -> OwnedBytes {
        let owned = OwnedBytes(start: start, count: count)
        discard self
        return owned
    }

    /// Makes room for `n` more bytes.
    @inlinable @inline(__always) mutating func reserve(_ n: Int) {
        if capacity - count < n { grow(n) }
    }

    @usableFromInline @inline(never) mutating func grow(_ n: Int) {
        let bigger = max(capacity * 2, count + n)
        let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: bigger)
        moved.update(from: start, count: count)
        start.deallocate()
        start = moved
        capacity = bigger
    }

    @inlinable @inline(__always) package mutating func append(_ byte: UInt8) {
        reserve(1)
        start[count] = byte
        count += 1
    }

    @inlinable @inline(__always) package mutating func append(_ bytes: UnsafeRawBufferPointer) {
        reserve(bytes.count)
        if let from = bytes.baseAddress { UnsafeMutableRawPointer(start + count).copyMemory(from: from, byteCount: bytes.count) }
        count += bytes.count
    }

    /// `n` bytes that `write` puts in place (it writes all of them).
    @inlinable @inline(__always) package mutating func append(count n: Int, _ write: (UnsafeMutablePointer<UInt8>) -> Void) {
        reserve(n)
        write(start + count)
        count += n
    }

    package mutating func append(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { append($0) }
    }

    /// A string from its UTF-8 bytes, quoted and escaped.
    package mutating func appendQuoted(utf8: UnsafeRawBufferPointer) {
        // Nearly every string: one capacity check for its worst case, six bytes per byte.
        if utf8.count <= JSONEscaping.pieceSize {
            reserve(utf8.count * 6 + 2)
            start[count] = UInt8(ascii: "\"")
            count += 1 + JSONEscaping.write(utf8, to: start + count + 1)
            start[count] = UInt8(ascii: "\"")
            count += 1
            return
        }
        append(UInt8(ascii: "\""))
        var done = 0
        repeat {
            // A piece at a time: room for its worst case, six bytes per byte.
            let piece = UnsafeRawBufferPointer(rebasing: utf8[done..<min(utf8.count, done + JSONEscaping.pieceSize)])
            reserve(piece.count * 6)
            count += JSONEscaping.write(piece, to: start + count)
            done += piece.count
        } while done < utf8.count
        append(UInt8(ascii: "\""))
    }

    package mutating func appendInteger(_ v: Int64) {
        reserve(JSONEscaping.maxIntegerLength)
        count += JSONEscaping.writeInteger(v, to: start + count)
    }

    /// The shortest form that reads back to the same double (`100`, not `100.0`), as `JSONWriter.appendDouble`.
    package mutating func appendDouble(_ v: Double) {
        if let integer = JSONEscaping.integerForm(v) { return appendInteger(integer) }
        guard v.isFinite else { return append(JSONEscaping.null) }
        var text = v.description
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// A date as a quoted ISO 8601 string, as `JSONWriter.date`.
    package mutating func appendQuotedDate(_ seconds: Double) {
        reserve(ISODate.maxLength + 2)
        start[count] = UInt8(ascii: "\"")
        count += 1 + ISODate.write(seconds, to: start + count + 1)
        start[count] = UInt8(ascii: "\"")
        count += 1
    }
}

/// Bytes that free themselves: a finished `ByteOutput`, handed between threads whole.
package final class OwnedBytes: @unchecked Sendable {
    private let start: UnsafeMutablePointer<UInt8>
    package let count: Int

    init(start: UnsafeMutablePointer<UInt8>, count: Int) {
        self.start = start
        self.count = count
    }

    deinit { start.deallocate() }

    package var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: start, count: count) }
}

/// The text of strings and integers, written to memory the caller has made
/// room in: the one encoding that `JSONWriter` and `ByteOutput` share.
package enum JSONEscaping {
    /// Bytes of a string escaped at a time (up to six times as many written).
    static let pieceSize = 1 << 14
    static let maxIntegerLength = 20
    static let null: [UInt8] = Array("null".utf8)

    /// Writes `utf8` escaped for a JSON string (no quotes) at `out`, which
    /// has room for six bytes per byte; returns how many it wrote.
    @inline(__always)
    static func write(_ utf8: UnsafeRawBufferPointer, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var n = 0, i = 0
        while i < utf8.count {
            // Most strings need no escape: copy eight bytes at a time while none does.
            while i + 8 <= utf8.count {
                let word = utf8.loadUnaligned(fromByteOffset: i, as: UInt64.self)
                guard JSONReader.escapeMarks(word) == 0 else { break }
                UnsafeMutableRawPointer(out + n).storeBytes(of: word, as: UInt64.self)
                n += 8
                i += 8
            }
            guard i < utf8.count else { break }
            // The last few bytes, nothing escaped before them: the last eight
            // again (partly copied already), in one piece if none needs an escape.
            if n == i && i + 8 > utf8.count && utf8.count >= 8 {
                let word = utf8.loadUnaligned(fromByteOffset: utf8.count - 8, as: UInt64.self)
                if JSONReader.escapeMarks(word) == 0 {
                    UnsafeMutableRawPointer(out + utf8.count - 8).storeBytes(of: word, as: UInt64.self)
                    return utf8.count
                }
            }
            let b = utf8[i]
            i += 1
            if b >= 0x20 && b != 0x22 && b != 0x5C {
                out[n] = b
                n += 1
                continue
            }
            out[n] = 0x5C
            switch b {
            case 0x22: out[n + 1] = 0x22
            case 0x5C: out[n + 1] = 0x5C
            case 0x0A: out[n + 1] = UInt8(ascii: "n")
            case 0x0D: out[n + 1] = UInt8(ascii: "r")
            case 0x09: out[n + 1] = UInt8(ascii: "t")
            case 0x08: out[n + 1] = UInt8(ascii: "b")
            case 0x0C: out[n + 1] = UInt8(ascii: "f")
            default:
                out[n + 1] = UInt8(ascii: "u")
                out[n + 2] = 0x30
                out[n + 3] = 0x30
                out[n + 4] = hexDigit(b >> 4)
                out[n + 5] = hexDigit(b & 0xF)
                n += 4
            }
            n += 2
        }
        return n
    }

    @inline(__always) private static func hexDigit(_ v: UInt8) -> UInt8 {
        v < 10 ? 48 + v : 87 + v
    }

    /// Writes `v` in decimal at `out` (room for `maxIntegerLength`); returns how many bytes.
    static func writeInteger(_ v: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
        var magnitude = v.magnitude
        var n = 0
        if v < 0 {
            out[0] = UInt8(ascii: "-")
            n = 1
        }
        var digits = 1
        var probe = magnitude
        while probe >= 10 {
            probe /= 10
            digits += 1
        }
        var k = n + digits
        repeat {
            k -= 1
            out[k] = UInt8(truncatingIfNeeded: magnitude % 10) + 48
            magnitude /= 10
        } while k > n
        return n + digits
    }

    /// The integer a double is written as, when it is a whole number JSON
    /// holds exactly (`100`, not `100.0`): up to 2^53, past which Swift's
    /// `description` takes the exponent form (`1e+16`), itself the shortest;
    /// below it, from 10^16 on, `description` would add `.0`.
    @inline(__always) package static func integerForm(_ v: Double) -> Int64? {
        v.isFinite && v == v.rounded() && abs(v) <= 9_007_199_254_740_992.0 ? Int64(v) : nil
    }
}
