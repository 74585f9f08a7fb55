import Foundation

/// Persistent identifiers as docs/format.md settles them: compared as Swift compares
/// strings, so canonically equivalent ids (NFC `café`, NFD `café`) are one id,
/// stored in NFC; an id is non-empty and holds no control characters.
public enum Identifier {
    /// The id in NFC (unchanged, and cheap, when it is ASCII).
    @inline(__always) public static func normalized(_ id: String) -> String {
        if isASCII(id) { return id }
        return CanonicalText.nfc(id)
    }

    /// Whether every byte is ASCII, read through the string's own storage
    /// where it has one (ids are checked on every lookup; the generic view is slow).
    @inline(__always) static func isASCII(_ s: String) -> Bool {
        if let answer = s.utf8.withContiguousStorageIfAvailable({ bytes -> Bool in
            var any: UInt8 = 0
            for b in bytes { any |= b }
            return any < 0x80
        }) { return answer }
        return s.utf8.allSatisfy { $0 < 0x80 }
    }

    /// What is wrong with an id, if anything.
    public static func problem(_ id: String) -> String? {
        if id.isEmpty { return "an id must not be empty" }
        var ascii = true
        for b in id.utf8 {
            if b < 0x20 || b == 0x7F { return "an id must not hold control characters" }
            if b >= 0x80 { ascii = false }
        }
        if !ascii, id.unicodeScalars.contains(where: { (0x80...0x9F).contains($0.value) }) {
            return "an id must not hold control characters"
        }
        return nil
    }

    /// An id read back from history: in NFC (a store written before ids were
    /// normalised may hold another form), or nil when it is no id at all.
    package static func stored(_ id: String) -> String? {
        problem(id) == nil ? normalized(id) : nil
    }
}
