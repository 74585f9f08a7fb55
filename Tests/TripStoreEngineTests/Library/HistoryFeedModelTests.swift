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

    // SwiftData's habit: change what a fetch returned, then save the
    // context that fetched it. An object of the past is not saved, and the
    // save says so rather than doing nothing.
    @Test func aChangedObjectOfThePastMakesTheSaveThrowUntilRolledBack() throws {
        let container = try container()
        let context = ModelContext(container)
        let now = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        now.destination = "Milan"
        try context.save(author: "ann")
        let past = try #require(try context.fetch(FetchDescriptor<Trip>(), asOf: 1).first)
        past.destination = "Paris"
        #expect(context.hasChanges)  // the past's change counts
        now.name = "Kept"
        do {
            try context.save(author: "bob")
            Issue.record("a save with a changed object of the past succeeded")
        } catch StoreError.pastModel(let type, let id, let token, let action) {
            #expect(type == "Trip" && id == "t1" && token == 1 && action == "changed")
        }
        #expect(past.destination == "Paris" && context.hasChanges)  // the pending changes stay
        #expect(container.withStore { $0.lastToken } == 2)  // nothing was written
        context.rollback()
        #expect(past.destination == "Rome, Italy" && now.name != "Kept")
        now.name = "Saved"
        #expect(try context.save(author: "bob")?.token == 3)
        // A context on the past names the object too.
        let then = ModelContext(try container.asOf(1))
        let old = try #require(try then.fetch(FetchDescriptor<Trip>()).first)
        then.delete(old)
        let error = #expect(throws: StoreError.self) { try then.save() }
        #expect("\(error.map { "\($0)" } ?? "")".hasPrefix("Trip 't1' was deleted, but it was read as the store was at token 1"))
    }

    @Test func historyPrintsAsTheAuditViewReadsIt() throws {
        let container = try container()
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        trip.destination = "Milan"
        try context.save(author: "ann")
        context.delete(trip)
        try context.save(author: "bob")
        let history = context.history(since: 1)
        let update = try #require(history.first), delete = try #require(history.last)
        #expect("\(update)" == "#2 \(ISODate.format(update.timestamp)) ann\n  update Trip t1: destination: \"Rome, Italy\" → \"Milan\"")
        let deleted = try #require(delete.changes.first { $0.kind == .delete && $0.type == "Trip" })
        #expect("\(deleted)".hasPrefix("delete Trip t1 {\"name\":"))
        // A tombstone value by key prints as the value, as a `String` would.
        let name = try #require(deleted.preservedValue("name"))
        #expect("\(name)" == trip.name && name.stringValue == trip.name)
        #expect(String(describing: deleted.preservedValue("name")) == "Optional(\"\(trip.name)\")")
        #expect("\(JSONValue.array([.int(1), .null, .bool(true)]))" == "[1,null,true]")
    }

    @Test func aClosedContainerReleasesTheStore() throws {
        let folder = TestFolders.make("close-container")
        let container = try ContextWriteTests().tripContainer(folder)
        // Another container on the folder shares the store: closing it
        // leaves this one working.
        let other = try ModelContainer(folder: folder, models: TripSchema.models)
        other.close()
        #expect(throws: StoreError.self) { try ModelContext(other).fetch(FetchDescriptor<Trip>()) }
        let trip = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        trip.destination = "Still open"
        #expect(try trip.modelContext?.save(author: "t") != nil)
        container.close()
        #expect(throws: StoreError.self) { try ModelContext(container).fetchCount(FetchDescriptor<Trip>()) }
        container.close()  // twice is nothing
        let late = ModelContext(container)
        late.insert(Trip(name: "Late", destination: "Oslo", startDate: .now, endDate: .now))
        #expect(throws: StoreError.self) { try late.save(author: "x") }
        // The lock is free: another writer opens the folder.
        let writer = try Store.open(folder, schema: TripSchema.models.schema, access: .write)
        #expect(writer.objectCount > 0)
        writer.close()
    }

    // The history index is a cache like the image: damaged while a context
    // works, it changes no answer, and it is built again.
    @Test func aDamagedHistoryIndexFoundInTheMiddleOfWorkChangesNoAnswer() throws {
        let first = try container()
        let setup = ModelContext(first)
        let saved = try #require(try setup.fetch(FetchDescriptor<Trip>()).first)
        for k in 0..<3 {
            saved.destination = "Stop \(k)"
            try setup.save(author: "ann")
        }
        try first.withStore { try $0.compact() }
        let folder = first.withStore { $0.files.folder }
        first.close()
        // Opened afresh, the snapshot's history is read through its index.
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        let context = ModelContext(container)
        let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
        trip.name = "Pending"  // work in the middle: a change not yet saved
        let before = context.history(forID: "t1")
        let index = container.withStore { $0.historyIndexPath }
        #expect(FileIO.exists(index) && before.count == 4)
        var bytes = try FileIO.readFile(index)
        for k in stride(from: 0, to: bytes.count, by: 97) { bytes[k] ^= 0x5A }
        try bytes.withUnsafeBytes { raw in
            let out = try OutputFile(creating: index)
            try out.write(Array(raw))
        }
        #expect(context.history(forID: "t1") == before)
        #expect(context.history(of: trip) == before)
        #expect(trip.name == "Pending" && context.hasChanges)
        try context.save(author: "bob")
        #expect(context.history(forID: "t1").count == 5)
    }
}
