import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The query language lists `in` among the comparisons `any` and `all` take.
@Suite struct QuantifiedInTests {
    @Test func anyAndAllTakeIn() throws {
        let store = try TestStores.sampleTrips("quantified-in")
        func ids(_ q: String) throws -> Set<String> { Set(try store.run(Query(q)).rows.compactMap { store.id(at: $0) }) }
        // `any p in [a, b]` is `any p == a || any p == b`; `all p in [a, b]` has every element one of them.
        #expect(try ids(#"any frequentFlyerCodes in ["EK-26529624", "KL-81829801"]"#)
                == ids(#"any frequentFlyerCodes == "EK-26529624" || any frequentFlyerCodes == "KL-81829801""#))
        #expect(try !ids(#"any frequentFlyerCodes in ["EK-26529624", "KL-81829801"]"#).isEmpty)
        #expect(try ids(#"any bucketList.title in ["See the cathedral", "Watch the sunrise"]"#)
                == ids(#"any bucketList.title == "See the cathedral" || any bucketList.title == "Watch the sunrise""#))
        #expect(try ids(#"all bucketList.title in ["See the cathedral"]"#)
                == ids(#"!(any bucketList.title != "See the cathedral")"#))
        #expect(try ids("any frequentFlyerCodes in []").isEmpty)
    }
}

/// A conjunction of many indexed comparisons is planned in time linear in
/// them: a few bitsets are intersected, the rest tested on the rows left.
@Suite struct ManyConjunctsTests {
    @Test func manyIndexedConjunctsIntersectAFewBitsetsAndAgree() throws {
        let store = try TestStores.sampleTrips("many-conjuncts")
        let one = #"destination == "Rome, Italy""#
        let many = (0..<40).map { k in k % 2 == 0 ? one : #"name != "nothing \#(k)""# }
            + (0..<40).map { _ in #"destination ^= "Rome""# }
        let expected = try store.run(Query(one)).rows
        let result = try store.run(Query(many.joined(separator: " && ")))
        #expect(Set(result.rows) == Set(expected) && !expected.isEmpty)
        let intersect = result.plan.steps.first { $0.operation == "intersect" }
        let bitsets = intersect.map { $0.detail.components(separatedBy: " & ").count } ?? 0
        #expect(bitsets <= QueryPlanner.maximumBitsets, "\(result.plan)")
    }
}
