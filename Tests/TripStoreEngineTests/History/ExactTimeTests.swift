import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
import TripStoreModels

/// `--as-of TIME` compares the time's text with each commit's time exactly,
/// digit for digit, never after rounding both to a `Double`.
@Suite struct ExactTimeTests {
    /// Text for `whole` seconds since the reference date and 18 fraction digits.
    static func text(_ whole: Int, _ digits18: Int64) -> String {
        let base = ISODate.format(Double(whole))  // …:SSZ
        var d = String(digits18)
        d = String(repeating: "0", count: 18 - d.count) + d
        return base.dropLast() + "." + d + "Z"
    }

    @Test func everySubMillisecondBoundaryAroundACommitIsExact() throws {
        let folder = TestFolders.make("exact-time")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        let times: [Double] = [1000.25, 1001.954, 1002.0000001, 1003.1 + 1e-7, 817_473_481.334_401_1, 817_473_482.999_999_9]
        for (k, t) in times.enumerated() {
            var tx = store.transaction()
            try tx.insert("Trip", id: "t\(k)", values: ["name": .string("n"), "destination": .string("d"),
                                                       "startDate": .date(0), "endDate": .date(0)])
            #expect(try store.commit(tx, author: "a", timestamp: t)?.timestamp == t)
        }
        for (k, t) in times.enumerated() {
            let token = Int64(k + 1)
            let parts = ISODate.textParts(t)
            var digits = parts.fraction
            for _ in parts.places..<18 { digits *= 10 }
            let printed = try #require(ISOTime(ISODate.format(t)))
            #expect(try store.token(at: printed) == token, "the commit's own text, \(ISODate.format(t))")
            #expect(try store.token(at: #require(ISOTime(Self.text(parts.whole, digits)))) == token)
            let justAfter = digits == 999_999_999_999_999_999 ? Self.text(parts.whole + 1, 0) : Self.text(parts.whole, digits + 1)
            #expect(try store.token(at: #require(ISOTime(justAfter))) == token, "\(justAfter)")
            let justBefore = digits == 0 ? Self.text(parts.whole - 1, 999_999_999_999_999_999) : Self.text(parts.whole, digits - 1)
            #expect(try store.token(at: #require(ISOTime(justBefore))) == (k == 0 ? nil : token - 1), "\(justBefore)")
            // Both round to the commit's Double, yet one is before it.
            if let before = ISOTime(justBefore), before.approximateSeconds == t {
                #expect(try store.token(at: before) != token)
            }
        }
        // A Double is compared as a Double.
        #expect(try store.token(at: 1001.954) == 2)
    }

    @Test func theIssuesExampleNamesTheEarlierToken() throws {
        let folder = TestFolders.make("exact-time-issue")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        let t1 = try #require(ISODate.parse("2026-11-16T09:00:00Z")), t2 = try #require(ISODate.parse("2026-11-16T09:00:01.954Z"))
        for (k, t) in [t1, t2].enumerated() {
            var tx = store.transaction()
            try tx.insert("Trip", id: "t\(k)", values: ["name": .string("n"), "destination": .string("d"),
                                                       "startDate": .date(0), "endDate": .date(0)])
            try store.commit(tx, author: "a", timestamp: t)
        }
        #expect(try store.token(at: #require(ISOTime("2026-11-16T09:00:01.95399999Z"))) == 1)
        #expect(try store.token(at: #require(ISOTime("2026-11-16T09:00:01.954Z"))) == 2)
        let past = try store.past(at: .time(#require(ISOTime("2026-11-16T09:00:01.95399999Z"))))
        #expect(past.object(id: "t1") == nil && past.object(id: "t0") != nil)
        // `history --after` keeps timestamps > TIME, `--before` those < TIME, digit for digit too.
        func tokens(after: String? = nil, before: String? = nil) throws -> [Int64] {
            var f = HistoryFilter()
            f.after = after.flatMap(ISOTime.init)
            f.before = before.flatMap(ISOTime.init)
            return f.apply(to: try store.checkedHistory()).map(\.token)
        }
        #expect(try tokens(after: "2026-11-16T09:00:01.95399999Z") == [2])
        #expect(try tokens(after: "2026-11-16T09:00:01.954Z") == [])
        #expect(try tokens(before: "2026-11-16T09:00:01.95400000000000001Z") == [1, 2])
        #expect(try tokens(before: "2026-11-16T09:00:01.954Z") == [1])
    }
}
