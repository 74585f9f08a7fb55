import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
import TripStoreModels

/// The text index narrows `~` and `^=` to candidates and never loses a match.
struct TextIndexTests {
    /// Random values over a small alphabet (so trigrams repeat and buckets are
    /// shared), random needles: every value that holds the needle is a candidate.
    @Test func candidatesHoldEveryMatch() {
        var rng = SplitMix64(seed: 77)
        let alphabet = ["a", "b", "c", "d", "e", "é", " "]
        func word(_ n: Int) -> String { (0..<n).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] }.joined() }
        let values = (0..<3000).map { _ in word(Int(rng.next() % 12)) }
        let buckets = TrigramBuckets(folded: values.map { Array($0.utf8) })
        #expect(buckets.bucketCount >= 256 && buckets.bucketCount & (buckets.bucketCount - 1) == 0)
        var found = 0
        for _ in 0..<300 {
            let needle = word(2 + Int(rng.next() % 4))
            let candidates = Set(buckets.candidates(Array(needle.utf8)) ?? Array(values.indices))
            for (i, v) in values.enumerated() where TextFolding.contains(v, needle) {
                found += 1
                #expect(candidates.contains(i), "\(needle) in \(v)")
            }
        }
        #expect(found > 1000)
        #expect(buckets.candidates(Array("ab".utf8)) == nil)
    }

    /// An index with more values than the threshold answers through the text
    /// index exactly as a test of every value does.
    @Test func aLargeIndexMatchesAsAScanDoes() {
        let property = TripSchema.schema.entity(named: "Trip")!.property(named: "name")!
        let index = ValueIndex(entity: TripSchema.schema.entity(named: "Trip")!.id, property: property)
        var rng = SplitMix64(seed: 78)
        let words = ["Rome", "Zürich", "MÁLAGA", "office", "Straße", "summit", "Q1", "draft", "ROMEO", "naïve"]
        var names: [String] = []
        for row in 0..<4000 {
            let name = (0..<3).map { _ in words[Int(rng.next() % UInt64(words.count))] }.joined(separator: " ") + " \(row % 977)"
            names.append(name)
        }
        index.build(names.enumerated().map { (IndexKey.string($1), RowID($0)) })
        #expect(index.distinctKeys > ValueIndex.textIndexThreshold)
        for needle in ["rome", "zurich", "malaga", "strasse", "ss", "q1 d", "eo na", "977", "1 ", "x", "", "summit summit"] {
            for prefix in [false, true] {
                let folded = TextFolding.fold(needle)
                let expected = Set(names.filter {
                    prefix ? TextFolding.hasPrefix(TextFolding.fold($0), folded) : TextFolding.contains(TextFolding.fold($0), folded)
                }).map { IndexKey.string($0) }.sorted()
                #expect(index.textMatches(folded, prefix: prefix) == expected, "\(needle) prefix \(prefix)")
            }
        }
    }

    /// A long value is folded a piece at a time (Foundation's decomposition is
    /// quadratic in length): the same result as folding its words one by one.
    @Test func aLongValueFoldsAsItsWordsDo() {
        let words = ["Ze\u{301}bre", "STRAẞE", "o\u{308}\u{323}l", "한국어", "ǅungla", "Ωμέγα", "x\u{334}\u{301}\u{302}"]
        var rng = SplitMix64(seed: 79)
        let picked = (0..<3000).map { _ in words[Int(rng.next() % UInt64(words.count))] }
        #expect(TextFolding.fold(picked.joined(separator: " ")) == picked.map(TextFolding.fold).joined(separator: " "))
    }

    /// Text whose scalars are all Latin (below U+0250) folds a scalar at a
    /// time through a table: exactly as Foundation's decomposition folds it,
    /// for every such scalar and for random mixes with ASCII (fixed seed).
    @Test func latinTextFoldsAsTheDecompositionFoldsIt() {
        for v in 0x80..<TextFolding.latinEnd {
            guard let scalar = Unicode.Scalar(UInt32(v)) else { continue }
            let s = "Ab" + String(Character(scalar)) + "Zz"
            // Bytes, not `==` (which would take canonically equivalent text as equal): trigrams are bytes.
            #expect(Array(TextFolding.fold(s).utf8) == Array(TextFolding.foldAnyText(s).utf8), "U+\(String(v, radix: 16))")
        }
        var rng = SplitMix64(seed: 83)
        for _ in 0..<2000 {
            let s = String(String.UnicodeScalarView((0..<Int(rng.next() % 24)).compactMap { _ in
                Unicode.Scalar(UInt32(rng.next() % 2 == 0 ? 0x20 + rng.next() % 0x5F : 0x80 + rng.next() % UInt64(TextFolding.latinEnd - 0x80)))
            }))
            #expect(Array(TextFolding.fold(s).utf8) == Array(TextFolding.foldAnyText(s).utf8), "\(s.unicodeScalars.map { String($0.value, radix: 16) })")
        }
        // Past Latin, or with a combining mark, the decomposition folds it.
        #expect(TextFolding.foldLatin("Ze\u{301}bre") == nil && TextFolding.fold("Ze\u{301}bre") == "zebre")
        #expect(TextFolding.fold("São Paulo, Kraków, Straße") == "sao paulo, krakow, strasse")
    }

    /// A long run of combining marks (hostile input) folds in linear time:
    /// before, it was one piece for Foundation's quadratic decomposition
    /// (minutes for a few MB), and the image writer folds every string key.
    @Test func aLongRunOfCombiningMarksFoldsAway() {
        let value = "x" + String(repeating: "\u{301}", count: 200_000) + "NEEDLE"
        #expect(TextFolding.fold(value) == "xneedle")
        #expect(TextFolding.contains(TextFolding.fold(value), "xneedle"))
    }
}
