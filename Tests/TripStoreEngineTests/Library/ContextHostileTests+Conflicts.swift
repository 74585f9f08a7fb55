import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreJSON
import TripStoreModels

/// Two contexts saving over each other, and what a save writes.
extension ContextHostileTests {
    // MARK: saves / conflicts

    @Test func sameAttributeTwoContextsSecondThrows() throws {
        let container = try seeded(["a"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let t1 = try trips(c1)[0], t2 = try trips(c2)[0]
        t1.name = "one"; t2.name = "two"
        try c1.save(author: "1")
        #expect(throws: StoreError.self) { try c2.save(author: "2") }
        #expect(t2.name == "two" && c2.hasChanges)
        c2.refresh(t2)
        try c2.save(author: "2")
        #expect(try trips(ModelContext(container)).map(\.name) == ["two"])
    }

    @Test func differentAttributesNoConflict() throws {
        let container = try seeded(["a"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let t1 = try trips(c1)[0], t2 = try trips(c2)[0]
        t1.name = "one"; t2.destination = "two"
        try c1.save(author: "1")
        try c2.save(author: "2")
        let f = try trips(ModelContext(container))[0]
        #expect(f.name == "one" && f.destination == "two")
    }

    /// Writing the to-many side itself in two contexts conflicts (Core Data's
    /// default); setting the children's to-one side merges (see ContextWriteTests).
    @Test func bothContextsAppendingToTheSameToManyConflict() throws {
        let container = try seeded(["a"], items: ["x"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let t1 = try trips(c1)[0], t2 = try trips(c2)[0]
        t1.bucketList.append(BucketListItem(title: "one"))
        t2.bucketList.append(BucketListItem(title: "two"))
        try c1.save(author: "1")
        #expect(throws: StoreError.self) { try c2.save(author: "2") }
        // After a refresh the pending list is written over the other's, knowingly; "one" stays, unlisted.
        c2.refreshAll()
        try c2.save(author: "2")
        #expect(try trips(ModelContext(container))[0].bucketList.map(\.title).sorted() == ["two", "x"])
        #expect(try ModelContext(container).fetch(FetchDescriptor<BucketListItem>()).count == 3)
        #expect(container.store.checkInvariants() == [])
    }

    @Test func faultLoadedAfterOtherSaveIsNotAConflict() throws {
        let container = try seeded(["a"], items: ["x"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        var d = FetchDescriptor<Trip>()
        d.propertiesToFetch = [\Trip.name]
        let t1 = try #require(try c1.fetch(d).first) // destination is a fault, read at token N
        let t2 = try trips(c2)[0]
        t2.destination = "by c2"
        try c2.save(author: "2")
        #expect(t1.destination == "by c2") // c1 has now seen c2's value
        t1.destination = t1.destination + "+c1"
        try c1.save(author: "1") // the property was read after c2's save: no conflict
        #expect(try trips(ModelContext(container))[0].destination == "by c2+c1")
    }

    @Test func relationshipFaultLoadedAfterOtherSaveIsNotAConflict() throws {
        let container = try seeded(["a"], items: ["x"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let t1 = try trips(c1)[0] // bucketList is a fault
        let t2 = try trips(c2)[0]
        t2.bucketList.removeAll()
        try c2.save(author: "2")
        #expect(t1.bucketList.isEmpty) // loads c2's state
        t1.bucketList = [BucketListItem(title: "c1")]
        try c1.save(author: "1")
        #expect(try trips(ModelContext(container))[0].bucketList.map(\.title) == ["c1"])
    }

    @Test func changeOnDeletedElsewhereThrows() throws {
        let container = try seeded(["a"], items: ["x"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let t1 = try trips(c1)[0]
        c2.delete(try trips(c2)[0])
        try c2.save(author: "2")
        t1.name = "zombie"
        #expect(throws: StoreError.self) { try c1.save(author: "1") }
        #expect(try trips(ModelContext(container)).isEmpty)
    }

    @Test func twoContextsMoveSameChildSecondThrows() throws {
        let container = try seeded(["a", "b", "c"], items: ["x"])
        let c1 = ModelContext(container), c2 = ModelContext(container)
        let x1 = try items(c1)[0], x2 = try items(c2)[0]
        let ts1 = try trips(c1), ts2 = try trips(c2)
        x1.trip = ts1[1]
        ts2[2].bucketList.append(x2) // move via the to-many side
        try c1.save(author: "1")
        #expect(throws: StoreError.self) { try c2.save(author: "2") }
        #expect(container.store.checkInvariants() == [])
    }

    @Test func savedTwiceWritesOnce() throws {
        let container = try seeded(["a"])
        let c = ModelContext(container)
        try trips(c)[0].name = "z"
        let t1 = try c.save(author: "1")
        let t2 = try c.save(author: "2")
        #expect(t1 != nil && t2 == nil)
        #expect(!c.hasChanges)
    }

    @Test func reopenReadsWhatWasSaved() throws {
        let folder = TestFolders.make("reopen")
        do {
            let container = try ModelContainer(folder: folder, models: TripSchema.models)
            let c = ModelContext(container)
            let t = trip("a")
            c.insert(t)
            t.bucketList = [BucketListItem(title: "x"), BucketListItem(title: "y")]
            t.livingAccommodation = LivingAccommodation(name: "h", address: "")
            try c.save(author: "s")
            t.bucketList[0].trip = nil
            t.name = "a2"
            try c.save(author: "s2")
        }
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        #expect(container.store.checkInvariants() == [])
        let c = ModelContext(container)
        let t = try trips(c)[0]
        #expect(t.name == "a2")
        #expect(t.bucketList.map(\.title) == ["y"])
        #expect(t.livingAccommodation?.name == "h")
        #expect(try items(c).count == 2)
    }
}
