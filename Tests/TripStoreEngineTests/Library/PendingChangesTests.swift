import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// Fetches see the context's unsaved work, as SwiftData's do by default
/// (`includePendingChanges`): inserted objects, edited values, deletes.
@Suite struct PendingChangesTests {
    static func day(_ text: String) -> Date { Date(timeIntervalSinceReferenceDate: ISODate.parse(text)!) }

    func context() throws -> ModelContext {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("pending"), models: TripSchema.models))
        let rome = Trip(name: "Rome", destination: "Rome, Italy", startDate: Self.day("2026-03-02"), endDate: Self.day("2026-03-06"))
        rome.bucketList = [BucketListItem(title: "Colosseum"), BucketListItem(title: "Pantheon")]
        let oslo = BusinessTrip(name: "Oslo", destination: "Oslo, Norway", startDate: Self.day("2026-01-10"), endDate: Self.day("2026-01-12"),
                                purpose: "Sales", expenseCode: "EX-1", perDiemRate: 120)
        for t in [rome, oslo] as [Trip] { context.insert(t) }
        try context.save(author: "setup")
        return context
    }

    func names(_ context: ModelContext, _ d: FetchDescriptor<Trip>) throws -> [String] {
        try context.fetch(d).map(\.name)
    }

    @Test func anInsertedUnsavedObjectIsFetchedWhenItMatches() throws {
        let context = try context()
        let paris = BusinessTrip(name: "Paris", destination: "Paris, France", startDate: Self.day("2026-02-01"),
                                 endDate: Self.day("2026-02-03"), purpose: "Fair", expenseCode: "EX-9", perDiemRate: 200)
        context.insert(paris)
        #expect(context.hasChanges)
        let byDate = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.startDate)])
        #expect(try names(context, byDate) == ["Oslo", "Paris", "Rome"])
        #expect(try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip })).count == 2)
        #expect(try names(context, FetchDescriptor<Trip>(query: "perDiemRate > 150")) == ["Paris"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 3)
        // Paging applies to saved and pending objects together.
        var second = byDate
        second.fetchOffset = 1
        second.fetchLimit = 1
        #expect(try names(context, second) == ["Paris"])
        // The same instance, not a copy.
        #expect(try context.fetch(FetchDescriptor<Trip>(query: "name == \"Paris\"")).first === paris)
        try context.save(author: "me")
        #expect(try names(context, byDate) == ["Oslo", "Paris", "Rome"])
    }

    @Test func anEditedObjectIsTestedOnItsEditedValues() throws {
        let context = try context()
        let rome = try #require(try context.fetch(FetchDescriptor<Trip>(query: "name == \"Rome\"")).first)
        rome.destination = "Milan, Italy"
        let inRome = FetchDescriptor<Trip>(predicate: #Predicate { $0.destination.contains("Rome") })
        #expect(try context.fetch(inRome).isEmpty)
        #expect(try names(context, FetchDescriptor<Trip>(query: #"destination ~ "milan""#)) == ["Rome"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(query: #"destination ~ "rome""#)) == 0)
        // Sorting uses the edited value too.
        rome.startDate = Self.day("2025-12-31")
        #expect(try names(context, FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.startDate)])) == ["Rome", "Oslo"])
        context.rollback()
        #expect(try context.fetch(inRome).map(\.name) == ["Rome"])
    }

    @Test func aDeletedUnsavedObjectAndWhatItCascadesToAreNotFetched() throws {
        let context = try context()
        let rome = try #require(try context.fetch(FetchDescriptor<Trip>(query: "name == \"Rome\"")).first)
        context.delete(rome)
        #expect(try names(context, FetchDescriptor<Trip>()) == ["Oslo"])
        // Its bucket list goes with it (cascade), as Core Data propagates deletes before a fetch.
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 0)
        context.rollback()
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 2)
    }

    @Test func aRelationshipOnlyEditIsAChangeAndANewChildIsInsertedWithIt() throws {
        let context = try context()
        let rome = try #require(try context.fetch(FetchDescriptor<Trip>(query: "name == \"Rome\"")).first)
        #expect(!context.hasChanges)
        // Removing a child is a change of the relationship only; the child stays.
        let pantheon = try #require(rome.bucketList.last)
        rome.bucketList.removeLast()
        #expect(context.hasChanges)
        // A new object appended to a saved object's relationship is inserted with it.
        let gelato = BucketListItem(title: "Gelato")
        rome.bucketList.append(gelato)
        let titles = try context.fetch(FetchDescriptor<BucketListItem>(sortBy: [SortDescriptor(\BucketListItem.title)])).map(\.title)
        #expect(titles == ["Colosseum", "Gelato", "Pantheon"])
        let onATrip = try context.fetch(FetchDescriptor<BucketListItem>(query: "trip.name == \"Rome\""))
        #expect(Set(onATrip.map(\.title)) == ["Colosseum", "Gelato"])
        try context.save(author: "me")
        #expect(!context.hasChanges)
        #expect(pantheon.trip == nil && gelato.trip === rome)
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 3)
    }

    @Test func aFetchWithoutPendingChangesIsUnchanged() throws {
        let context = try context()
        #expect(!context.hasChanges)
        let plan = try context.explain(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip }))
        #expect(plan.query == "is BusinessTrip" && !plan.evaluatedCandidates)
        #expect(try names(context, FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.name, order: .reverse)])) == ["Rome", "Oslo"])
    }
}

/// A `Date` saved through the library reads back `==`, so a predicate that
/// captures it finds the object.
@Suite struct ExactDateTests {
    @Test func aSavedDateIsEqualWhenReadBackAndFoundByEquality() throws {
        let folder = TestFolders.make("dates")
        let captured = Date(timeIntervalSinceReferenceDate: 815_000_000.123_456_7)
        do {
            let context = ModelContext(try ModelContainer(folder: folder, models: TripSchema.models))
            context.insert(Trip(name: "Now", destination: "Here", startDate: captured, endDate: captured.addingTimeInterval(3600)))
            try context.save(author: "me")
        }
        let context = ModelContext(try ModelContainer(folder: folder, models: TripSchema.models))
        let found = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.startDate == captured }))
        #expect(found.map(\.name) == ["Now"])
        #expect(found.first?.startDate == captured)
        // The file keeps the digits the date needs.
        let journal = String(decoding: try FileIO.readFile(folder + "/journal-0.jsonl"), as: UTF8.self)
        #expect(journal.contains(#""startDate":"2026-10-29T20:53:20.1234567Z""#))
    }
}

/// The Trips sample's composition: a class predicate AND a search predicate,
/// each translated to the index plan.
@Suite struct ComposedPredicateTests {
    @Test func aKindPredicateAndASearchPredicateAreOneIndexedQuery() throws {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("composed"), models: TripSchema.models))
        let day = Date(timeIntervalSinceReferenceDate: 800_000_000)
        context.insert(BusinessTrip(name: "Summit", destination: "Rome, Italy", startDate: day, endDate: day,
                                    purpose: "Sales", expenseCode: "EX-1", perDiemRate: 100))
        context.insert(PersonalTrip(name: "Holiday", destination: "Rome, Italy", startDate: day, endDate: day, reason: .vacation))
        context.insert(BusinessTrip(name: "Audit", destination: "Oslo, Norway", startDate: day, endDate: day,
                                    purpose: "Audit", expenseCode: "EX-2", perDiemRate: 90))
        try context.save(author: "me")
        let searchText = "Rome"
        let kind = #Predicate<Trip> { $0 is BusinessTrip }
        let search = #Predicate<Trip> { $0.destination.contains(searchText) }
        let both = FetchDescriptor<Trip>(predicates: [kind, search])
        #expect(try context.fetch(both).map(\.name) == ["Summit"])
        let plan = try context.explain(both)
        #expect(plan.query == #"is BusinessTrip && destination ~ "Rome""#)
        #expect(plan.plan.description.contains("Trip.destination ~ \"Rome\""), "\(plan)")
        #expect(plan.evaluatedCandidates)  // ~ folds case; contains does not, so each candidate is checked
        let sum = FetchDescriptor<Trip>(predicate: kind) && FetchDescriptor<Trip>(predicate: search)
        #expect(try context.fetch(sum).map(\.name) == ["Summit"])
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicates: [search])) == 2)
    }
}
