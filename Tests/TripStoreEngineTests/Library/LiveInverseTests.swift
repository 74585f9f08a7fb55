import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreJSON
import TripStoreModels

/// Setting one side of a relationship updates the other side at once, before
/// any save, as SwiftData's inverse maintenance does.
@Suite struct LiveInverseTests {
    static let day = Date(timeIntervalSinceReferenceDate: ISODate.parse("2026-05-01")!)

    func saved(_ names: [String], items: [String] = []) throws -> (ModelContext, [Trip]) {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("inverse"), models: TripSchema.models))
        let trips = names.map { Trip(name: $0, destination: "d", startDate: Self.day, endDate: Self.day) }
        trips.first?.bucketList = items.map { BucketListItem(title: $0) }
        for t in trips { context.insert(t) }
        try context.save(author: "setup")
        let fetched = try context.fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.name)]))
        return (context, fetched)
    }

    @Test func settingTheToOneSideAddsToTheToManySideAtOnce() throws {
        let (context, trips) = try saved(["a", "b"], items: ["x"])
        let item = try #require(trips[0].bucketList.first)
        item.trip = trips[1]
        #expect(trips[0].bucketList.isEmpty)
        #expect(trips[1].bucketList.map(\.title) == ["x"])
        #expect(context.hasChanges)
        try context.save(author: "move")
        let fresh = try ModelContext(context.container).fetch(FetchDescriptor<Trip>(sortBy: [SortDescriptor(\Trip.name)]))
        #expect(fresh.map { $0.bucketList.map(\.title) } == [[], ["x"]])
    }

    @Test func appendingToTheToManySideSetsTheToOneSideAndLeavesTheOldOwner() throws {
        let (_, trips) = try saved(["a", "b"], items: ["x", "y"])
        let y = trips[0].bucketList[1]
        trips[1].bucketList.append(y)
        #expect(y.trip === trips[1])
        #expect(trips[0].bucketList.map(\.title) == ["x"])
    }

    @Test func removingAChildSetsItsInverseToNilAndKeepsIt() throws {
        let (context, trips) = try saved(["a"], items: ["x", "y"])
        let x = trips[0].bucketList[0]
        trips[0].bucketList.removeAll { $0 === x }
        #expect(x.trip == nil)
        try context.save(author: "remove")
        let items = try ModelContext(context.container).fetch(FetchDescriptor<BucketListItem>(sortBy: [SortDescriptor(\BucketListItem.title)]))
        #expect(items.map(\.title) == ["x", "y"])
        #expect(items.map { $0.trip?.name } == [nil, "a"])
    }

    @Test func aNewObjectAppendedToAStoredOneIsInsertedWithItsInverse() throws {
        let (context, trips) = try saved(["a"])
        let item = BucketListItem(title: "new")
        trips[0].bucketList.append(item)
        #expect(item.modelContext === context)
        #expect(item.trip === trips[0])
        #expect(try context.fetch(FetchDescriptor<BucketListItem>()).map(\.title) == ["new"])
        try context.save(author: "add")
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<BucketListItem>()).map { $0.trip?.name } == ["a"])
    }

    @Test func aNewObjectGivenAStoredOwnerIsInsertedAndListed() throws {
        let (context, trips) = try saved(["a"])
        let stay = LivingAccommodation(name: "Hotel", address: "Via Roma 1")
        context.insert(stay)
        stay.trip = trips[0]
        #expect(trips[0].livingAccommodation === stay)
        let other = LivingAccommodation(name: "Hostel", address: "Via Po 2")
        trips[0].livingAccommodation = other
        // A to-one pair: the displaced object lets go of its side too.
        #expect(stay.trip == nil)
        #expect(other.trip === trips[0])
        #expect(other.modelContext === context)
    }

    @Test func insertingAGraphSetsEveryInverse() throws {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("inverse-insert"), models: TripSchema.models))
        let trip = Trip(name: "a", destination: "d", startDate: Self.day, endDate: Self.day)
        let item = BucketListItem(title: "x")
        trip.bucketList = [item]
        #expect(item.trip == nil)  // not in a context yet: a plain property
        context.insert(trip)
        #expect(item.trip === trip)
        #expect(item.modelContext === context)
    }

    @Test func rollbackUndoesBothSides() throws {
        let (context, trips) = try saved(["a", "b"], items: ["x"])
        let item = trips[0].bucketList[0]
        item.trip = trips[1]
        context.rollback()
        #expect(!context.hasChanges)
        #expect(trips[0].bucketList.map(\.title) == ["x"])
        #expect(trips[1].bucketList.isEmpty)
        #expect(item.trip === trips[0])
    }

    @Test func deletingAnUnsavedInsertTakesItOutOfItsOwnersList() throws {
        let (context, trips) = try saved(["a"])
        let item = BucketListItem(title: "x")
        trips[0].bucketList.append(item)
        context.delete(item)
        #expect(trips[0].bucketList.isEmpty)
        try context.save(author: "none")
        #expect(try ModelContext(context.container).fetch(FetchDescriptor<BucketListItem>()).isEmpty)
    }
}
