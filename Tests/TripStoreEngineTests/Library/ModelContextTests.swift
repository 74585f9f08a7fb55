import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// Mirrors the examples of SwiftData's "Adopting inheritance in SwiftData".
@Suite struct ModelContextTests {
    static func day(_ text: String) -> Date { Date(timeIntervalSinceReferenceDate: ISODate.parse(text)!) }

    /// A context over a new store with three trips of each kind.
    func context() throws -> ModelContext {
        let container = try ModelContainer(folder: TestFolders.make("models"), models: TripSchema.models)
        let context = ModelContext(container)
        let rome = BusinessTrip(name: "Q3 summit", destination: "Rome, Italy", startDate: Self.day("2026-03-02"),
                                endDate: Self.day("2026-03-06"), purpose: "Sales", expenseCode: "EX-1", perDiemRate: 150)
        rome.businessMeals = [BusinessMeal(restaurant: "Trattoria da Mario", date: Self.day("2026-03-03"), cost: 86.4)]
        rome.itinerary = MeetingItinerary(agenda: ["Kickoff"], location: "Via del Corso")
        let audit = BusinessTrip(name: "Audit", destination: "Romeoville, USA", startDate: Self.day("2026-05-11"),
                                 endDate: Self.day("2026-05-12"), purpose: "Audit", expenseCode: "EX-2", perDiemRate: 80)
        let family = PersonalTrip(name: "Visiting Abuela", destination: "Málaga, Spain", startDate: Self.day("2026-07-01"),
                                  endDate: Self.day("2026-07-15"), reason: .family, notes: "Photos")
        family.familyMembers = [FamilyMember(name: "Carmen", relationship: "grandmother")]
        let spa = PersonalTrip(name: "Spa weekend", destination: "Zürich, Switzerland", startDate: Self.day("2026-09-18"),
                               endDate: Self.day("2026-09-20"), reason: .wellness)
        let plain = Trip(name: "Weekend in Rome", destination: "rome", startDate: Self.day("2025-01-10"), endDate: Self.day("2025-01-12"))
        plain.bucketList = [BucketListItem(title: "See the Colosseum")]
        for t in [rome, audit, family, spa, plain] { context.insert(t) }
        try context.save(author: "alice")
        return context
    }

    @Test func deepFetchReturnsEachObjectAsItsConcreteClass() throws {
        let context = try context()
        let trips = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.startDate)]))
        #expect(trips.map(\.name) == ["Weekend in Rome", "Q3 summit", "Audit", "Visiting Abuela", "Spa weekend"])
        #expect(trips.map { "\(type(of: $0))" } == ["Trip", "BusinessTrip", "BusinessTrip", "PersonalTrip", "PersonalTrip"])
        let rome = try #require(trips[1] as? BusinessTrip)
        #expect(rome.perDiemRate == 150)
        #expect(rome.itinerary == MeetingItinerary(agenda: ["Kickoff"], location: "Via del Corso"))
        #expect(rome.businessMeals.map(\.restaurant) == ["Trattoria da Mario"])
        #expect(rome.businessMeals.first?.trip === rome)
        #expect(try context.fetch(FetchDescriptor<Trip>()).first === (try context.fetch(FetchDescriptor<Trip>())).first)
    }

    @Test func typeCheckPredicateIsADeepTypeQuery() throws {
        let context = try context()
        let business = try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip }))
        #expect(Set(business.map(\.name)) == ["Q3 summit", "Audit"])
        let plan = try context.explain(FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip }))
        #expect(plan.query == "is BusinessTrip")
        #expect(!plan.evaluatedCandidates)
        #expect(plan.plan.operations.first == "type index")
    }

    @Test func conditionalCastPredicateReadsASubclassProperty() throws {
        let context = try context()
        let family = PersonalTrip.Reason.family
        let descriptor = FetchDescriptor<Trip>(predicate: #Predicate {
            if let p = $0 as? PersonalTrip { p.reason == family } else { false }
        })
        #expect(try context.fetch(descriptor).map(\.name) == ["Visiting Abuela"])
        let plan = try context.explain(descriptor)
        #expect(plan.query == #"(is PersonalTrip && reason == "family")"#)
        #expect(!plan.evaluatedCandidates)
    }

    @Test func searchTextAndKindPredicateKeepsContainsCaseSensitive() throws {
        let context = try context()
        let searchText = "Rome"
        let descriptor = FetchDescriptor<Trip>(predicate: #Predicate { trip in
            (trip.name.contains(searchText) || trip.destination.contains(searchText)) && trip is BusinessTrip
        }, sortBy: [SortDescriptor(\Trip.name)])
        // "Romeoville" contains "Rome"; the plain trip's lower-case "rome" does not, and it is no BusinessTrip.
        #expect(try context.fetch(descriptor).map(\.name) == ["Audit", "Q3 summit"])
        let all = FetchDescriptor<Trip>(predicate: #Predicate { trip in trip.destination.contains(searchText) })
        #expect(Set(try context.fetch(all).map(\.name)) == ["Q3 summit", "Audit"])
        let plan = try context.explain(all)
        #expect(plan.evaluatedCandidates)
        #expect(plan.plan.operations.first == "text index")
    }

    @Test func translatedPredicateUsesTheSameIndexPathAsTheQueryString() throws {
        let context = try context()
        let start = Self.day("2026-06-01")
        let family = PersonalTrip.Reason.family
        let translated = try context.explain(FetchDescriptor<Trip>(predicate: #Predicate {
            if let p = $0 as? PersonalTrip { p.reason == family && p.startDate >= start } else { false }
        }))
        let written = try context.explain(FetchDescriptor<Trip>(query: #"is PersonalTrip && reason == "family" && startDate >= 2026-06-01T00:00:00Z"#))
        #expect(translated.plan.operations == written.plan.operations)
        #expect(translated.plan.steps.map(\.detail) == written.plan.steps.map(\.detail))
        #expect(translated.plan.steps.map(\.actual) == written.plan.steps.map(\.actual))
    }

    @Test func sortLimitOffsetCountAndPropertiesToFetch() throws {
        let context = try context()
        var d = FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.startDate, order: .reverse)])
        d.fetchLimit = 2
        d.fetchOffset = 1
        d.propertiesToFetch = [\Trip.name, \Trip.startDate]
        let page = try context.fetch(d)
        #expect(page.map(\.name) == ["Visiting Abuela", "Audit"])
        #expect(page[0].destination == "Málaga, Spain")
        #expect(try context.fetchCount(FetchDescriptor<Trip>(predicate: #Predicate { $0 is PersonalTrip })) == 2)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 5)
    }

    @Test func changesSaveAsOneTransactionWithOldAndNewValues() throws {
        let context = try context()
        let rome = try #require(try context.fetch(FetchDescriptor<BusinessTrip>(query: "expenseCode == \"EX-1\"")).first)
        rome.perDiemRate = 175
        rome.businessMeals.append(BusinessMeal(restaurant: "Café Ñandú", date: Self.day("2026-03-04"), cost: 32))
        let t = try #require(try context.save(author: "bob"))
        try #require(t.changes.map { "\($0.kind.rawValue) \($0.type)" } == ["insert BusinessMeal", "update BusinessTrip"])
        #expect(t.changes[1].values.map(\.name) == ["perDiemRate", "businessMeals"])
        #expect(t.changes[1].values.first == ValueChange(name: "perDiemRate", old: .int(150), new: .int(175)))
        #expect(rome.businessMeals.last?.trip === rome)
        #expect(try context.save() == nil)
    }

    @Test func deleteFollowsRulesAndLeavesTombstones() throws {
        let context = try context()
        let rome = try #require(try context.fetch(FetchDescriptor<Trip>(query: "name == \"Q3 summit\"")).first)
        context.delete(rome)
        let t = try #require(try context.save(author: "carol"))
        #expect(t.changes.map { "\($0.kind.rawValue) \($0.type)" } == ["delete BusinessMeal", "delete BusinessTrip"])
        let deletes = context.history(types: [Trip.self], kinds: [.delete])
        let tombstone = try #require(deletes.last?.changes.first)
        #expect(tombstone.preservedValue("name") == .string("Q3 summit"))
        #expect(tombstone.preservedValue("startDate") == .string("2026-03-02T00:00:00Z"))
        #expect(deletes.last?.author == "carol")
        #expect(try context.fetchCount(FetchDescriptor<BusinessMeal>()) == 0)
    }

    @Test func oneObjectsTimelineAcrossACompaction() throws {
        let context = try context()
        let trip = Trip(name: "A", destination: "x", startDate: Self.day("2026-01-01"), endDate: Self.day("2026-01-02"))
        context.insert(trip)
        try context.save(author: "ann")
        trip.name = "B"
        try context.save(author: "ben")
        // Its insert and first update are now in the snapshot, found through its history index.
        try context.container.store.compact()
        trip.name = "C"
        try context.save(author: "cy")
        let id = trip.persistentModelID
        context.delete(trip)
        try context.save(author: "dee")
        let timeline = context.history(forID: id)
        #expect(timeline.map(\.author) == ["ann", "ben", "cy", "dee"])
        #expect(timeline.flatMap(\.changes).map(\.kind) == [.insert, .update, .update, .delete])
        #expect(timeline.allSatisfy { $0.changes.allSatisfy { $0.id == id } })
        #expect(context.history(forID: "no-such-trip").isEmpty)
    }

    @Test func rollbackForgetsUnsavedWork() throws {
        let context = try context()
        let trips = try context.fetch(FetchDescriptor<Trip>())
        trips[0].name = "Changed"
        context.insert(Trip(name: "Never saved", destination: "x", startDate: Date(), endDate: Date()))
        #expect(context.hasChanges)
        context.rollback()
        #expect(!context.hasChanges)
        #expect(trips[0].name != "Changed")
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 5)
    }

    @Test func theModelSchemaIsTheTripSchema() throws {
        #expect(TripSchema.schema.entities.map(\.name) == ["Trip", "BusinessTrip", "PersonalTrip", "LivingAccommodation", "BucketListItem",
                                                         "BusinessMeal", "DailyMileageRecord", "ConferenceSession", "Attraction", "FamilyMember"])
        #expect(TripSchema.models.propertyName(\PersonalTrip.reason) == "reason")
        #expect(TripSchema.models.propertyName(\Trip.startDate) == "startDate")
    }
}
