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
    ])
    func parsesAndWritesUTC(_ input: String, _ output: String) throws {
        let d = try #require(ISODate.parse(input))
        #expect(ISODate.format(d) == output)
    }

    @Test(arguments: ["2026-02-30", "2026-13-01", "tomorrow", "2026-03-02T25:00:00Z", "2026-03-02T09:30", "2026-3-2", ""])
    func rejectsBadDates(_ input: String) {
        #expect(ISODate.parse(input) == nil)
    }
}
