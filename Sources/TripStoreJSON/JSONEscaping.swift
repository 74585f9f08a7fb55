/// The text of strings and integers, written to memory the caller has made
/// room in: the one encoding that `JSONWriter` and `ByteOutput` share.
package enum JSONEscaping {
    /// Bytes of a string escaped at a time (up to six times as many written).
    package static let pieceSize = 1 << 14
    package static let maxIntegerLength = 20
    package static let null: [UInt8] = Array("null".utf8)

    /// Writes `utf8` escaped for a JSON string (no quotes) at `out`, which
    /// has room for six bytes per byte; returns how many it wrote.
    @inline(__always)
    package static func write(_ utf8: UnsafeRawBufferPointer, to out: UnsafeMutablePointer<UInt8>) -> Int {
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
    package static func writeInteger(_ v: Int64, to out: UnsafeMutablePointer<UInt8>) -> Int {
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
