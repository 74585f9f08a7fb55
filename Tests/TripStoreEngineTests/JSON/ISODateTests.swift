import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

@Suite struct ISODateTests {
    @Test(arguments: [
        ("2026-03-02", "2026-03-02T00:00:00Z"),
        ("2026-03-02T09:30:00Z", "2026-03-02T09:30:00Z"),
        ("2026-03-02T09:30:00.250Z", "2026-03-02T09:30:00.250Z"),
        ("2026-03-02T11:30:00+02:00", "2026-03-02T09:30:00Z"),
        ("2026-03-02T00:30:00-01:00", "2026-03-02T01:30:00Z"),
        ("1969-12-31T23:59:59Z", "1969-12-31T23:59:59Z"),
        ("2024-02-29T12:00:00Z", "2024-02-29T12:00:00Z"),
        ("2001-01-01T00:00:00.5Z", "2001-01-01T00:00:00.500Z"),
        ("2000-12-31T23:59:59.999Z", "2000-12-31T23:59:59.999Z"),
        ("2026-03-02T09:30:00.1234Z", "2026-03-02T09:30:00.1234Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00Z"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
    ])
    func parsesAndWritesUTC(_ input: String, _ output: String) throws {
        let d = try #require(ISODate.parse(input))
        #expect(ISODate.format(d) == output)
    }

    @Test(arguments: ["2026-02-30", "2026-13-01", "tomorrow", "2026-03-02T25:00:00Z", "2026-03-02T09:30", "2026-3-2", ""])
    func rejectsBadDates(_ input: String) {
        #expect(ISODate.parse(input) == nil)
    }

    /// Any `Date` is written with the digits it needs and reads back `==`:
    /// milliseconds where they suffice, more only where they do not.
    @Test func everyDateReadsBackExactly() {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 11
        }
        var longer = 0
        for k in 0..<20_000 {
            // Whole milliseconds, then arbitrary Doubles within years 1970-2100.
            let seconds = k % 2 == 0 ? Double(Int64(next() % 4_102_444_800_000) - 978_307_200_000) / 1000
                                     : Double(next() % 4_102_444_800_000_000) / 1_000_000 - 978_307_200
            let date = Date(timeIntervalSinceReferenceDate: seconds)
            let text = ISODate.format(date.timeIntervalSinceReferenceDate)
            #expect(ISODate.parse(text) == date.timeIntervalSinceReferenceDate, "\(text)")
            let fraction = text.split(separator: ".").dropFirst().first?.dropLast() ?? ""
            if k % 2 == 0 { #expect(fraction.isEmpty || fraction.count == 3, "\(text)") }
            if fraction.count > 3 { longer += 1 }
        }
        #expect(longer > 0)
        let now = Date()
        #expect(Date(timeIntervalSinceReferenceDate: ISODate.parse(ISODate.format(now.timeIntervalSinceReferenceDate))!) == now)
    }
}
