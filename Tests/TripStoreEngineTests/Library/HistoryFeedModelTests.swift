import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// The library's side of the audit trail: `container.changes(since:)` and
/// `context.fetch(_:asOf:)`.
@Suite struct HistoryFeedModelTests {
    /// A trip store with trip "t1" (one bucket-list item), saved as token 1.
    func container() throws -> ModelContainer {
        try ContextWriteTests().tripContainer(TestFolders.make("feed-models"))
    }

    // A feed that misses a save would wait for ever: the limit makes that a failure.
    @Test(.timeLimit(.minutes(1))) func changesDeliversEachSaveOnceInOrder() async throws {
        let container = try container()
        let feed = Task {
            var seen: [(Int64, String)] = []
            for try await t in container.changes(since: 1) {
                seen.append((t.token, t.author))
                if seen.count == 3 { break }
            }
            return seen
        }
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        for (k, who) in ["ann", "bob", "cy"].enumerated() {
            trip.destination = "Stop \(k)"
            try context.save(author: who)
        }
        let seen = try await feed.value
        // Each commit's time as a `Date`, the instant its `timestamp` counts.
        let saved = try #require(context.history(since: 1).last)
        #expect(saved.date == Date(timeIntervalSinceReferenceDate: saved.timestamp))
        #expect(abs(saved.date.timeIntervalSinceNow) < 600)
        #expect(seen.map(\.0) == [2, 3, 4])
        #expect(seen.map(\.1) == ["ann", "bob", "cy"])
        // From the beginning, the setup's insert comes first.
        var first: HistoryTransaction?
        for try await t in container.changes(since: 0) { first = t; break }
        #expect(first?.token == 1 && first?.changes.contains { $0.kind == .insert && $0.id == "t1" } == true)
    }

    @Test func fetchAsOfReturnsThePastReadOnly() throws {
        let container = try container()
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        trip.destination = "Milan"
        trip.bucketList.append(BucketListItem(title: "Duomo"))
        try context.save(author: "ann")
        context.delete(trip)
        try context.save(author: "bob")
        #expect(try context.fetch(FetchDescriptor<Trip>()).isEmpty)
        let then = try context.fetch(FetchDescriptor<Trip>(), asOf: 1)
        #expect(then.map(\.destination) == ["Rome, Italy"])
        #expect(then.first?.bucketList.map(\.title) == ["Colosseum"])  // relationships load from the same past
        let later = try context.fetch(FetchDescriptor<Trip>(), asOf: 2)
        #expect(later.first.map { Set($0.bucketList.map(\.title)) } == ["Colosseum", "Duomo"])
        let past = try #require(then.first)
        past.destination = "Paris"
        #expect(throws: StoreError.self) { try past.modelContext?.save(author: "x") }
        #expect(throws: StoreError.self) { try context.fetch(FetchDescriptor<Trip>(), asOf: 9) }
    }
}
