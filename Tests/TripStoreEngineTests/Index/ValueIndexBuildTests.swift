import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
import TripStoreModels

/// `ValueIndex.build` sorts only the distinct values and places rows by
/// rank: the same ordered form as sorting every entry by value, then row.
struct ValueIndexBuildTests {
    @Test func buildingByRankGivesTheOrderOfAFullSort() {
        let trip = TripSchema.schema.entity(named: "Trip")!
        let property = trip.property(named: "name")!
        var rng = SplitMix64(seed: 91)
        let pool: [IndexKey?] = [.string("Zürich"), .string("Zurich"), .string("zürich"), .string("Rome"), .string(""), .string("Ωμέγα"),
                                 .string("e\u{301}"), .string("é"), .integer(3), .integer(-7), .number(2.5), .number(-0.0), .number(0.0),
                                 .bool(true), .bool(false), nil]
        for round in 0..<40 {
            let count = [0, 1, 2, 17, 500, 3000][round % 6]
            // Rows shuffled: some callers hand entries in no row order.
            var rows = (0..<count).map { RowID($0) }
            for i in stride(from: rows.count - 1, to: 0, by: -1) { rows.swapAt(i, Int(rng.next() % UInt64(i + 1))) }
            let entries = rows.map { (pool[Int(rng.next() % UInt64(pool.count))], $0) }
            let index = ValueIndex(entity: trip.id, property: property)
            index.build(entries)

            var keyed = entries.compactMap { e in e.0.map { (key: $0, row: e.1) } }
            keyed.sort { $0.key == $1.key ? $0.row < $1.row : $0.key < $1.key }
            let expected = ValueIndex.Ordered(sorted: keyed)
            let built = index.ordered()
            #expect(built.keys == expected.keys, "round \(round)")
            #expect(built.flat == expected.flat, "round \(round)")
            #expect(built.counts == expected.counts, "round \(round)")
            #expect(index.nullRows == entries.filter { $0.0 == nil }.map(\.1).sorted(), "round \(round)")
        }
    }
}
