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
            out.varint(id.count)
            id.withUnsafeBytes { out.bytes($0) }
        }
        let (base, _) = out.release()
        defer { base.deallocate() }
        let records = RecordPointers(records: offsets.map { base + $0 })
        let keyed = ids.indices.map { g in (prefix: ObjectTable.prefix(records.id(g)), g: Int32(g)) }
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
}
