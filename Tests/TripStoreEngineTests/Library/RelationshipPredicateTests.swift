import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreJSON
import TripStoreModels

/// Relationship predicates as SwiftData apps write them become index plans,
/// not scans: to-one paths, `!rel.isEmpty`, `rel.count`, `rel.contains { … }`.
@Suite struct RelationshipPredicateTests {
    static let day = Date(timeIntervalSinceReferenceDate: ISODate.parse("2026-05-01")!)

    func context() throws -> ModelContext {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("rel-predicates"), models: TripSchema.models))
        func trip(_ name: String, stay: String?, items: [(String, Bool)]) -> Trip {
            let t = Trip(name: name, destination: "d", startDate: Self.day, endDate: Self.day)
            t.livingAccommodation = stay.map { LivingAccommodation(name: $0, address: "") }
            t.bucketList = items.map { BucketListItem(title: $0.0, isCompleted: $0.1) }
            return t
        }
        for t in [trip("Rome", stay: "Hilton", items: [("Colosseum", true), ("Trevi", false)]),
                  trip("Oslo", stay: "Hostel", items: []),
                  trip("Bern", stay: nil, items: [("Bears", false)])] {
            context.insert(t)
        }
        try context.save(author: "setup")
        return context
    }

    func check(_ context: ModelContext, _ predicate: Predicate<Trip>, query: String, names: [String]) throws {
        let d = FetchDescriptor<Trip>(predicate: predicate, sortBy: [SortDescriptor(\Trip.name)])
        #expect(try context.fetch(d).map(\.name) == names)
        let plan = try context.explain(d)
        #expect(plan.query == query)
        #expect(!plan.evaluatedCandidates)
    }

    @Test func aToOnePathIsAPath() throws {
        let hilton = "Hilton"
        try check(try context(), #Predicate { $0.livingAccommodation?.name == hilton },
                  query: #"livingAccommodation.name == "Hilton""#, names: ["Rome"])
    }

    @Test func notIsEmptyIsACount() throws {
        try check(try context(), #Predicate { !$0.bucketList.isEmpty }, query: "!count(bucketList) == 0", names: ["Bern", "Rome"])
        try check(try context(), #Predicate { $0.bucketList.isEmpty }, query: "count(bucketList) == 0", names: ["Oslo"])
        try check(try context(), #Predicate { $0.bucketList.count >= 2 }, query: "count(bucketList) >= 2", names: ["Rome"])
    }

    @Test func containsWhereIsAny() throws {
        let trevi = "Trevi"
        try check(try context(), #Predicate { $0.bucketList.contains { $0.title == trevi } },
                  query: #"any bucketList.title == "Trevi""#, names: ["Rome"])
        try check(try context(), #Predicate { $0.bucketList.contains { $0.isCompleted } },
                  query: "any bucketList.isCompleted == true", names: ["Rome"])
        try check(try context(), #Predicate { $0.bucketList.allSatisfy { !$0.isCompleted } && !$0.bucketList.isEmpty },
                  query: "(all bucketList.isCompleted == false && !count(bucketList) == 0)", names: ["Bern"])
    }

    @Test func aClosureThatReadsTheOuterObjectIsEvaluatedNotTranslated() throws {
        let context = try context()
        let d = FetchDescriptor<Trip>(predicate: #Predicate { trip in trip.bucketList.contains { _ in trip.name == "Rome" } })
        #expect(try context.fetch(d).map(\.name) == ["Rome"])
        #expect(try context.explain(d).evaluatedCandidates)
    }
}
