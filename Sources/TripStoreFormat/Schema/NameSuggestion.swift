import TripStoreJSON
import TripStoreSystem
/// Finds the closest known name to a misspelt one, for "did you mean" hints.
public enum NameSuggestion {
    /// The candidate with the smallest edit distance (case-insensitive), if it is close enough.
    public static func closest(to name: String, in candidates: [String]) -> String? {
        // A name the start of exactly one candidate is that one (`hist` for `history`), as git suggests.
        let lowered = name.lowercased()
        let started = candidates.filter { $0.lowercased().hasPrefix(lowered) }
        if lowered.count >= 2, started.count == 1 { return started[0] }
        let target = Array(lowered.unicodeScalars)
        var best: (String, Int)?
        for c in candidates {
            let d = distance(target, Array(c.lowercased().unicodeScalars))
            if best == nil || d < best!.1 { best = (c, d) }
        }
        guard let (candidate, d) = best, d <= max(2, target.count / 2) else { return nil }
        return candidate
    }

    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var prev = Array(0...b.count)
        var cur = Array(repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            cur[0] = i
            for j in 1...b.count {
                cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&prev, &cur)
        }
        return prev[b.count]
    }

    /// " (did you mean 'x'?)" or "".
    public static func hint(for name: String, in candidates: [String]) -> String {
        closest(to: name, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }
}
