import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// Writes through `ModelContext` as a SwiftData developer makes them: two
/// contexts on one container, relationships without an inverse, moved children.
@Suite struct ContextWriteTests {
    static func day(_ text: String) -> Date { Date(timeIntervalSinceReferenceDate: ISODate.parse(text)!) }

    func tripContainer(_ folder: String = TestFolders.make("contexts")) throws -> ModelContainer {
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        let setup = ModelContext(container)
        let trip = Trip(name: "Rome", destination: "Rome, Italy", startDate: Self.day("2026-03-02"), endDate: Self.day("2026-03-06"))
        trip.persistentModelID = "t1"
        trip.bucketList = [BucketListItem(title: "Colosseum")]
        setup.insert(trip)
        try setup.save(author: "setup")
        return container
    }

    func trip(_ context: ModelContext) throws -> Trip {
        try #require(try context.fetch(FetchDescriptor<Trip>()).first { $0.persistentModelID == "t1" })
    }

    func conflicts(_ body: () throws -> Void) -> [StoreConflict] {
        do {
            try body()
        } catch StoreError.conflict(let cs) {
            return cs
        } catch {
            Issue.record("expected a conflict, got \(error)")
        }
        return []
    }

    @Test func twoContextsChangingDifferentPropertiesKeepBothChanges() throws {
        let container = try tripContainer()
        let a = ModelContext(container), b = ModelContext(container)
        try trip(a).name = "Rome 2026"
        try trip(b).destination = "Roma"
        try a.save(author: "a")
        let saved = try #require(try b.save(author: "b"))
        #expect(saved.changes.map { $0.values.map(\.name) } == [["destination"]])
        let check = ModelContext(container)
        #expect(try trip(check).name == "Rome 2026")
        #expect(try trip(check).destination == "Roma")
    }

    @Test func twoContextsChangingTheSamePropertyConflictAndRefreshSettlesIt() throws {
        let container = try tripContainer()
        let a = ModelContext(container), b = ModelContext(container)
        try trip(a).name = "A's name"
        try trip(b).name = "B's name"
        try trip(b).destination = "Roma"
        let first = try #require(try a.save(author: "a")).token
        let found = conflicts { try b.save(author: "b") }
        #expect(found == [StoreConflict(type: "Trip", id: "t1", reason: .changed(property: "name"), token: first, stagedOn: first - 1)])
        #expect(b.hasChanges)
        #expect(try trip(b).name == "B's name")
        #expect(container.store.lastToken == first)
        #expect(try trip(ModelContext(container)).name == "A's name")
        // Take in what A saved, keep B's pending changes, save again: B's value wins, knowingly.
        b.refreshAll()
        #expect(try trip(b).name == "B's name")
        try b.save(author: "b")
        let check = ModelContext(container)
        #expect(try trip(check).name == "B's name")
        #expect(try trip(check).destination == "Roma")
    }

    @Test func refreshTakesInAnotherContextsChangeOfAPropertyLeftAlone() throws {
        let container = try tripContainer()
        let a = ModelContext(container), b = ModelContext(container)
        try trip(a).destination = "Roma"
        try trip(b).name = "Pending"
        try a.save(author: "a")
        #expect(try trip(b).destination == "Rome, Italy")
        b.refresh(try trip(b))
        #expect(try trip(b).destination == "Roma")
        #expect(try trip(b).name == "Pending")
        #expect(b.hasChanges)
    }

    @Test func updatingAnObjectAnotherContextDeletedIsAConflict() throws {
        let container = try tripContainer()
        let a = ModelContext(container), b = ModelContext(container)
        let mine = try trip(a)
        b.delete(try trip(b))
        let deletedBy = try #require(try b.save(author: "b")).token
        mine.name = "Still here?"
        #expect(conflicts { try a.save(author: "a") } == [StoreConflict(type: "Trip", id: "t1", reason: .deleted, token: deletedBy, stagedOn: deletedBy - 1)])
        #expect(container.store.object(id: "t1") == nil)
        // After a refresh the context forgets the deleted object and its pending change.
        a.refreshAll()
        #expect(!a.hasChanges)
        #expect(try a.save(author: "a") == nil)
    }

    @Test func linkingANewChildToAnObjectAnotherContextDeletedIsAConflictAndDoesNotBringItBack() throws {
        let container = try tripContainer()
        let a = ModelContext(container), b = ModelContext(container)
        let mine = try trip(a)
        b.delete(try trip(b))
        try b.save(author: "b")
        mine.bucketList.append(BucketListItem(title: "Trevi Fountain"))
        // The trip was deleted by B (its bucket list, still a fault here, loads as empty).
        let found = conflicts { try a.save(author: "a") }
        #expect(found.map(\.reason) == [.deleted])
        #expect(found.map(\.type) == ["Trip"])
        #expect(container.store.object(id: "t1") == nil)
        #expect(container.store.table.count == 0)
        #expect(container.store.checkInvariants() == [])
    }

    @Test func deletingAnObjectHeldWithoutAnInverseThenCompactingKeepsTheStoreOpenable() throws {
        let folder = TestFolders.make("no-inverse")
        var container = try ModelContainer(folder: folder, models: ShelfSchema.models)
        var context = ModelContext(container)
        let home = Shelf(name: "Home"), office = Shelf(name: "Office")
        let dune = Book(title: "Dune"), emma = Book(title: "Emma")
        home.books = [dune, emma]
        office.favourite = dune
        context.insert(home)
        context.insert(office)
        try context.save(author: "me")
        context.delete(dune)
        try context.save(author: "me")
        #expect(home.books.map(\.title) == ["Emma"])
        #expect(office.favourite == nil)
        try container.store.compact()
        container.store.close()
        container = try ModelContainer(folder: folder, models: ShelfSchema.models)
        context = ModelContext(container)
        let shelves = try context.fetch(FetchDescriptor<Shelf>(sortBy: [SortDescriptor(\Shelf.name)]))
        #expect(shelves.map(\.name) == ["Home", "Office"])
        #expect(shelves[0].books.map(\.title) == ["Emma"])
        #expect(shelves[1].favourite == nil)
        // The cascade without an inverse deletes the owned books.
        context.delete(shelves[0])
        try context.save(author: "me")
        #expect(try context.fetchCount(FetchDescriptor<Book>()) == 0)
        #expect(container.store.checkInvariants() == [])
    }

    @Test func movingChildrenBetweenParentsKeepsEveryOne() throws {
        let container = try ModelContainer(folder: TestFolders.make("move"), models: TripSchema.models)
        let context = ModelContext(container)
        let from = Trip(name: "From", destination: "A", startDate: Self.day("2026-01-01"), endDate: Self.day("2026-01-02"))
        let to = Trip(name: "To", destination: "B", startDate: Self.day("2026-01-01"), endDate: Self.day("2026-01-02"))
        from.bucketList = (0..<20).map { BucketListItem(title: "item \($0)") }
        context.insert(from)
        context.insert(to)
        try context.save(author: "me")
        to.bucketList = from.bucketList
        from.bucketList = []
        try context.save(author: "me")
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 20)
        #expect(to.bucketList.count == 20 && from.bucketList.isEmpty)
        #expect(to.bucketList.allSatisfy { $0.trip === to })
        // Removing a child from the array keeps the child, with no owner.
        let last = to.bucketList.removeLast()
        try context.save(author: "me")
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 20)
        #expect(last.trip == nil)
        #expect(container.store.checkInvariants() == [])
    }
}

/// Context habits a hostile review tried, each kept fixed.
@Suite struct ContextReviewTests {
    @Test func theRetryPatternNeverBringsBackAnObjectAnotherContextDeleted() throws {
        let container = try ModelContainer(folder: TestFolders.make("retry"), models: ShelfSchema.models)
        let a = ModelContext(container), b = ModelContext(container)
        let shelf = Shelf(name: "Home")
        shelf.books = [Book(title: "b1"), Book(title: "b2")]
        a.insert(shelf)
        try a.save(author: "a")
        shelf.books.append(Book(title: "b3"))
        let doomed = try #require(try b.fetch(FetchDescriptor<Book>(query: "title == \"b2\"")).first)
        b.delete(doomed)
        try b.save(author: "b")
        #expect(throws: StoreError.self) { try a.save(author: "a") }
        a.refreshAll()
        #expect(shelf.books.map(\.title) == ["b1", "b3"])
        try a.save(author: "a")
        let titles = try ModelContext(container).fetch(FetchDescriptor<Book>()).map(\.title).sorted()
        #expect(titles == ["b1", "b3"])
        #expect(container.store.checkInvariants() == [])
    }

    @Test func twoContextsMovingTheSameChildConflict() throws {
        let container = try ModelContainer(folder: TestFolders.make("move-two"), models: TripSchema.models)
        let setup = ModelContext(container)
        let day = ContextWriteTests.day("2026-01-01")
        let trips = (1...3).map { Trip(name: "t\($0)", destination: "d", startDate: day, endDate: day) }
        trips[0].bucketList = [BucketListItem(title: "item")]
        for t in trips { setup.insert(t) }
        try setup.save(author: "setup")
        let a = ModelContext(container), b = ModelContext(container)
        func trip(_ c: ModelContext, _ name: String) throws -> Trip {
            try #require(try c.fetch(FetchDescriptor<Trip>()).first { $0.name == name })
        }
        let itemA = try #require(try trip(a, "t1").bucketList.first)
        let itemB = try #require(try trip(b, "t1").bucketList.first)
        try trip(a, "t2").bucketList.append(itemA)
        try trip(b, "t3").bucketList.append(itemB)
        try a.save(author: "a")
        #expect(throws: StoreError.self) { try b.save(author: "b") }
        #expect(try trip(ModelContext(container), "t2").bucketList.map(\.title) == ["item"])
    }

    @Test func aCascadeDeleteOverAChildChangedSinceIsAConflict() throws {
        let container = try ModelContainer(folder: TestFolders.make("cascade-conflict"), models: ShelfSchema.models)
        let a = ModelContext(container), b = ModelContext(container)
        let shelf = Shelf(name: "Home")
        shelf.books = [Book(title: "b1")]
        a.insert(shelf)
        try a.save(author: "a")
        try #require(try b.fetch(FetchDescriptor<Book>()).first).pages = 999
        try b.save(author: "b")
        a.delete(shelf)
        #expect(throws: StoreError.self) { try a.save(author: "a") }
        #expect(try ModelContext(container).fetch(FetchDescriptor<Book>()).map(\.pages) == [999])
    }

    @Test func twoContextsAddingChildrenByTheirToOneSideBothSucceed() throws {
        let container = try ModelContainer(folder: TestFolders.make("in-step"), models: TripSchema.models)
        let setup = ModelContext(container)
        let day = ContextWriteTests.day("2026-01-01")
        setup.insert(Trip(name: "t", destination: "d", startDate: day, endDate: day))
        try setup.save(author: "setup")
        let a = ModelContext(container), b = ModelContext(container)
        for (context, title) in [(a, "from a"), (b, "from b")] {
            let trip = try #require(try context.fetch(FetchDescriptor<Trip>()).first)
            let item = BucketListItem(title: title)
            item.trip = trip
            context.insert(item)
        }
        try a.save(author: "a")
        try b.save(author: "b")
        let trip = try #require(try ModelContext(container).fetch(FetchDescriptor<Trip>()).first)
        #expect(trip.bucketList.map(\.title).sorted() == ["from a", "from b"])
    }
}
