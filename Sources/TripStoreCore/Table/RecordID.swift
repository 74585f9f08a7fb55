/// How a record holds its id.
///
/// Nearly every id is a UUID in the form `UUID().uuidString` writes: 36
/// characters, uppercase hex digits in groups of 8-4-4-4-12. A record holds
/// such an id as a zero byte (a text id's length, the varint that otherwise
/// comes first, is never zero: ids are not empty) and its 16 bytes: 17 bytes
/// instead of 37, in memory and in the image, where an id is a large part of
/// every record. Any other id is kept as its text. Everywhere outside the
/// records (snapshot, journal, history, output) an id is its text.
///
/// Packed ids sort as their text does: hex digits keep their order as
/// nibbles, and the hyphens stand in the same places in every such id. A
/// packed id and a text one are compared through the packed one's text.
enum RecordID {
    /// The first byte of a record whose id is packed.
    static let packedMarker: UInt8 = 0
    static let packedCount = 16
    static let textCount = 36

    private static let ones: UInt64 = 0x0101_0101_0101_0101
    private static let highs: UInt64 = 0x8080_8080_8080_8080

    /// The 16 bytes of `text`, at `out`, when `text` is a UUID in canonical
    /// uppercase form; false (and `out` unspecified) when it is not.
    @inline(__always) static func pack(_ text: UnsafeRawBufferPointer, into out: UnsafeMutableRawPointer) -> Bool {
        guard text.count == textCount, let t = text.baseAddress else { return false }
        let dash = UInt8(ascii: "-")
        guard t.load(fromByteOffset: 8, as: UInt8.self) == dash, t.load(fromByteOffset: 13, as: UInt8.self) == dash,
              t.load(fromByteOffset: 18, as: UInt8.self) == dash, t.load(fromByteOffset: 23, as: UInt8.self) == dash else { return false }
        func four(_ at: Int) -> UInt64 { UInt64(UInt32(bigEndian: t.loadUnaligned(fromByteOffset: at, as: UInt32.self))) }
        func eight(_ at: Int) -> UInt64 { UInt64(bigEndian: t.loadUnaligned(fromByteOffset: at, as: UInt64.self)) }
        guard let a = nibbles(eight(0)), let b = nibbles(four(9) << 32 | four(14)),
              let c = nibbles(four(19) << 32 | four(24)), let d = nibbles(eight(28)) else { return false }
        out.storeBytes(of: a.bigEndian, as: UInt32.self)
        out.storeBytes(of: b.bigEndian, toByteOffset: 4, as: UInt32.self)
        out.storeBytes(of: c.bigEndian, toByteOffset: 8, as: UInt32.self)
        out.storeBytes(of: d.bigEndian, toByteOffset: 12, as: UInt32.self)
        return true
    }

    /// Eight hex digits ('0'–'9', 'A'–'F'; the first in the top byte) as
    /// the 32 bits they spell, eight at a time; nil when one is not such a digit.
    @inline(__always) private static func nibbles(_ w: UInt64) -> UInt32? {
        // Each test sets a byte's top bit: no byte carries into the next, since none has its top bit set.
        guard w & highs == 0 else { return nil }
        let atLeast0 = w &+ ones &* (0x80 - 0x30), past9 = w &+ ones &* (0x80 - 0x3A)
        let atLeastA = w &+ ones &* (0x80 - 0x41), pastF = w &+ ones &* (0x80 - 0x47)
        let digit = atLeast0 & ~past9 & highs, letter = atLeastA & ~pastF & highs
        guard digit | letter == highs else { return nil }
        // A letter's low four bits are 1–6: nine more make 10–15.
        var v = (w & (ones &* 0x0F)) &+ (letter >> 7) &* 9
        v = (v | v >> 4) & 0x00FF_00FF_00FF_00FF
        v = (v | v >> 8) & 0x0000_FFFF_0000_FFFF
        v = (v | v >> 16) & 0x0000_0000_FFFF_FFFF
        return UInt32(truncatingIfNeeded: v)
    }

    /// 32 bits as eight uppercase hex digits, the first in the top byte.
    @inline(__always) static func digits(_ x: UInt32) -> UInt64 {
        var v = UInt64(x)
        v = (v | v << 16) & 0x0000_FFFF_0000_FFFF
        v = (v | v << 8) & 0x00FF_00FF_00FF_00FF
        v = (v | v << 4) & 0x0F0F_0F0F_0F0F_0F0F
        // A nibble of 10 or more reaches the top bit when 0x76 is added: 'A' is seven past '9' + 1.
        let letters = ((v &+ ones &* 0x76) >> 7) & ones
        return v &+ ones &* 0x30 &+ letters &* 7
    }

    @inline(__always) private static func word(_ packed: UnsafeRawPointer, _ k: Int) -> UInt32 {
        UInt32(bigEndian: packed.loadUnaligned(fromByteOffset: 4 * k, as: UInt32.self))
    }

    /// The 36 characters of a packed id, at `out`.
    @inline(__always) static func unpack(_ packed: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
        let a = digits(word(packed, 0)), b = digits(word(packed, 1)), c = digits(word(packed, 2)), d = digits(word(packed, 3))
        let dash = UInt8(ascii: "-")
        out.storeBytes(of: a.bigEndian, toByteOffset: 0, as: UInt64.self)
        out.storeBytes(of: dash, toByteOffset: 8, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b >> 32).bigEndian, toByteOffset: 9, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 13, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: b).bigEndian, toByteOffset: 14, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 18, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c >> 32).bigEndian, toByteOffset: 19, as: UInt32.self)
        out.storeBytes(of: dash, toByteOffset: 23, as: UInt8.self)
        out.storeBytes(of: UInt32(truncatingIfNeeded: c).bigEndian, toByteOffset: 24, as: UInt32.self)
        out.storeBytes(of: d.bigEndian, toByteOffset: 28, as: UInt64.self)
    }

    /// A packed id's text in quotes, `quotedCount` bytes at `out` (it holds
    /// nothing JSON escapes): how the snapshot and history writers put one.
    @inline(__always) static func writeQuoted(packed: UnsafeRawPointer, into out: UnsafeMutableRawPointer) {
        out.storeBytes(of: UInt8(ascii: "\""), as: UInt8.self)
        unpack(packed, into: out + 1)
        out.storeBytes(of: UInt8(ascii: "\""), toByteOffset: textCount + 1, as: UInt8.self)
    }

    static let quotedCount = textCount + 2

    /// Whether packed id `a` sorts before `b` (as their text does).
    @inline(__always) static func less(packed a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool {
        let a0 = UInt64(bigEndian: a.loadUnaligned(as: UInt64.self)), b0 = UInt64(bigEndian: b.loadUnaligned(as: UInt64.self))
        if a0 != b0 { return a0 < b0 }
        return UInt64(bigEndian: a.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
            < UInt64(bigEndian: b.loadUnaligned(fromByteOffset: 8, as: UInt64.self))
    }

    /// `ObjectTable.prefix` of a packed id's text: its first eight characters.
    @inline(__always) static func prefix(packed: UnsafeRawPointer) -> UInt64 { digits(word(packed, 0)) }
}
