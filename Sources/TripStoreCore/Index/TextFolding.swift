import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
import Foundation

/// Case- and diacritic-insensitive folding for `~` and `^=`, the same in
/// every locale: canonical decomposition, combining marks dropped, then
/// Unicode's full case folding, status C and F (`ß` and `ẞ` → `ss`; dotless
/// `ı` stays itself; `ø` and `æ` stay themselves).
package enum TextFolding {
    package static func fold(_ s: String) -> String {
        var ascii = true
        for b in s.utf8 where b >= 0x80 {
            ascii = false
            break
        }
        if ascii {
            return String(decoding: s.utf8.map { $0 >= 65 && $0 <= 90 ? $0 + 32 : $0 }, as: UTF8.self)
        }
        return foldLatin(s) ?? foldAnyText(s)
    }

    /// Where every scalar is below `latinEnd`, the folding of each one on
    /// its own, joined (none of them is a combining mark, so none reorders or
    /// merges with its neighbours); nil otherwise. Foundation's
    /// decomposition takes microseconds a value, and text indexes fold every
    /// distinct value (names with an accent are common).
    static func foldLatin(_ s: String) -> String? {
        var out: [UInt8] = []
        out.reserveCapacity(s.utf8.count)
        for scalar in s.unicodeScalars {
            let v = Int(scalar.value)
            guard v < latinEnd else { return nil }
            if v < 0x80 {
                out.append(UInt8(v >= 65 && v <= 90 ? v + 32 : v))
            } else {
                out += latinFolded[v - 0x80]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Scalars below this (Latin-1 Supplement and Latin Extended-A and B) fold through `latinFolded`.
    static let latinEnd = 0x250
    /// The folding of each scalar from U+0080 to `latinEnd`, as UTF-8.
    static let latinFolded: [[UInt8]] = (0x80..<latinEnd).map { v in
        Unicode.Scalar(UInt32(v)).map { Array(foldAnyText(String(Character($0))).utf8) } ?? []
    }

    /// The folding of any text, through Foundation's canonical decomposition.
    static func foldAnyText(_ s: String) -> String {
        var out = String.UnicodeScalarView()
        // Foundation's decomposition takes time quadratic in the string's
        // length, so a long value is decomposed a piece at a time, each cut
        // before a scalar that starts a new combining sequence (where
        // decomposition and reordering never reach across).
        // A run of thousands of combining marks (hostile input) is cut too:
        // the marks are dropped, so only their reordering among themselves,
        // which folding discards, could differ.
        var piece = String.UnicodeScalarView()
        for scalar in s.unicodeScalars {
            if piece.count >= 1024 && (scalar.properties.canonicalCombiningClass == .notReordered || piece.count >= 4096) {
                appendFolded(String(piece), to: &out)
                piece = String.UnicodeScalarView()
            }
            piece.append(scalar)
        }
        appendFolded(String(piece), to: &out)
        return String(out)
    }

    private static func appendFolded(_ s: String, to out: inout String.UnicodeScalarView) {
        for scalar in s.decomposedStringWithCanonicalMapping.unicodeScalars where !isMark(scalar) {
            guard let folded = caseFolding[scalar.value] else {
                out.append(scalar)
                continue
            }
            for f in folded where !isMark(f) { out.append(f) }
        }
    }

    /// Unicode's full case folding (C + F), from `CaseFoldingTable.swift`.
    static let caseFolding: [UInt32: [Unicode.Scalar]] = {
        var table: [UInt32: [Unicode.Scalar]] = [:]
        for entry in caseFoldingEntries.split(whereSeparator: { $0 == ";" || $0 == "\n" }) {
            let parts = entry.split(separator: ":")
            guard parts.count == 2, let code = UInt32(parts[0], radix: 16) else { continue }
            table[code] = parts[1].split(separator: " ").compactMap { UInt32($0, radix: 16).flatMap(Unicode.Scalar.init) }
        }
        return table
    }()

    static func isMark(_ s: Unicode.Scalar) -> Bool {
        switch s.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .spacingMark: return true
        default: return false
        }
    }

    /// Byte-level substring test on folded strings.
    package static func contains(_ haystack: String, _ needle: String) -> Bool {
        if needle.isEmpty { return true }
        var h = haystack
        var n = needle
        return h.withUTF8 { hb in
            n.withUTF8 { nb in
                let hc = hb.count, nc = nb.count
                if nc > hc { return false }
                let first = nb[0]
                var i = 0
                while i <= hc - nc {
                    if hb[i] == first {
                        var k = 1
                        while k < nc && hb[i + k] == nb[k] { k += 1 }
                        if k == nc { return true }
                    }
                    i += 1
                }
                return false
            }
        }
    }

    package static func hasPrefix(_ haystack: String, _ needle: String) -> Bool {
        haystack.utf8.starts(with: needle.utf8)
    }
}
