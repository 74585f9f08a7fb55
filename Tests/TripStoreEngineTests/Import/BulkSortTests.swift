import Testing
@testable import TripStoreCore
import TripStoreModels

/// `BulkObjects.sortedByID`, the bulk import's id sort, against a plain sort
/// of the ids' bytes, on id families that take each of its paths: random ids
/// (dealt out by their top bits first), ids that share their first bytes or
/// their whole eight-byte prefix (ties sorted by the whole id), and inputs
/// below the size where it deals them out.
@Suite struct BulkSortTests {
    /// The order `sortedByID` gives `ids`, as ids.
    static func sorted(_ ids: [[UInt8]]) -> [[UInt8]] {
        var out = RecordBuffer(capacity: ids.reduce(0) { $0 + $1.count + 10 })
        var offsets: [Int] = []
        for id in ids {
            offsets.append(out.count)
            // As the decoders write them: a UUID in canonical form packed (see `RecordID`).
            id.withUnsafeBytes { out.id($0) }
        }
        let (base, _) = out.release()
        defer { base.deallocate() }
        let records = RecordPointers(records: offsets.map { base + $0 })
        let keyed = ids.indices.map { g in (prefix: records.idPrefix(g), g: Int32(g)) }
        return BulkObjects.sortedByID(keyed, records: records).map { ids[Int($0.g)] }
    }

    /// The first place where `sortedByID` and a plain sort of the bytes differ, as text; nil when they agree.
    static func firstDifference(_ ids: [[UInt8]]) -> String? {
        let got = sorted(ids), expected = ids.sorted { $0.lexicographicallyPrecedes($1) }
        guard got != expected else { return nil }
        let i = got.indices.first { $0 >= expected.count || got[$0] != expected[$0] } ?? got.count
        return i < got.count && i < expected.count ? "at \(i) of \(got.count): \(got[i]) where \(expected[i]) belongs" : "\(got.count) ids, not \(expected.count)"
    }

    static func uuid(_ rng: inout SplitMix64) -> [UInt8] {
        let hex = Array("0123456789ABCDEF".utf8)
        return (0..<36).map { i in [8, 13, 18, 23].contains(i) ? UInt8(ascii: "-") : hex[Int(rng.next() & 15)] }
    }

    @Test(arguments: [1_000, BulkObjects.msdFrom + 7_000])
    func randomIDsComeOutInByteOrder(count: Int) {
        var rng = SplitMix64(seed: 16)
        let ids = (0..<count).map { _ in BulkSortTests.uuid(&rng) }
        #expect(BulkSortTests.firstDifference(ids) == nil)
    }

    @Test(arguments: [1_000, BulkObjects.msdFrom + 7_000])
    func idsThatShareTheirFirstBytesComeOutInByteOrder(count: Int) {
        var rng = SplitMix64(seed: 17)
        // Two families with one 16-bit top each; the long ones tie on all eight prefix bytes.
        let ids = (0..<count).map { i -> [UInt8] in
            let n = rng.next() % 1_000_000
            return Array((i % 3 == 0 ? "trip-\(n)" : "Attraction-\(n)-\(rng.next() % 7)").utf8)
        }
        #expect(BulkSortTests.firstDifference(ids) == nil)
    }

    @Test func shortIDsAndIDsThatArePrefixesOfOthersComeOutInByteOrder() {
        var rng = SplitMix64(seed: 18)
        // Ids shorter than eight bytes pad their prefix with zeros: "a" must still come before "a\u{1}".
        let ids = (0..<(BulkObjects.msdFrom + 500)).map { _ -> [UInt8] in
            (0..<Int(1 + rng.next() % 9)).map { _ in UInt8(rng.next() % 3) + (rng.next() % 5 == 0 ? 0 : 0x61) }
        }
        let unique = Array(Set(ids))
        #expect(BulkSortTests.firstDifference(unique) == nil)
    }

    /// Packed ids among text ones that share their prefix or all but their
    /// end with them: a lowercase digit, a character more, one less, a
    /// letter past F. Packed and text ids sort by their text alike.
    @Test func packedAndTextIDsComeOutInByteOrderTogether() {
        var rng = SplitMix64(seed: 19)
        var ids: [[UInt8]] = []
        for _ in 0..<(BulkObjects.msdFrom + 300) {
            var id = BulkSortTests.uuid(&rng)
            // A few share their first eight characters, so ties are sorted by the whole id.
            if rng.next() % 4 == 0 { id.replaceSubrange(0..<8, with: Array("0A1B2C3D".utf8)) }
            switch rng.next() % 6 {
            case 0: id[35] = UInt8(ascii: "a")
            case 1: id.append(UInt8(ascii: "0"))
            case 2: id.removeLast()
            case 3: id[20] = UInt8(ascii: "G")
            default: break
            }
            ids.append(id)
        }
        #expect(BulkSortTests.firstDifference(Array(Set(ids))) == nil)
    }
}
