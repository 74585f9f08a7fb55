import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
import Foundation

/// Case- and diacritic-insensitive folding for `~` and `^=`, the same in
/// every locale: canonical decomposition, combining marks dropped, then full
/// case folding (`ß` → `ss`; `ø` and `æ` stay themselves).
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
        var out = String.UnicodeScalarView()
        for scalar in s.decomposedStringWithCanonicalMapping.unicodeScalars where !isMark(scalar) {
            // Upper then lower case approximates full case folding (ß → SS → ss).
            for u in scalar.properties.uppercaseMapping.unicodeScalars {
                for l in u.properties.lowercaseMapping.decomposedStringWithCanonicalMapping.unicodeScalars where !isMark(l) {
                    out.append(l)
                }
            }
        }
        return String(out)
    }

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
