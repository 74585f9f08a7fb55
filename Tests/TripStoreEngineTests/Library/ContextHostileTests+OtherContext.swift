import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreJSON
import TripStoreModels

/// Objects of another context, and starting a context over.
extension ContextHostileTests {
    @Test func insertingOrDeletingAnotherContextsObjectIsAnErrorThatNamesIt() throws {
        let container = try seeded(["a", "b"])
        let mine = ModelContext(container), theirs = ModelContext(container)
        let theirTrip = try #require(try trips(theirs).first)
        mine.delete(theirTrip)
        do {
            try mine.save(author: "me")
            Issue.record("a delete of another context's object was saved")
        } catch StoreError.modelOfAnotherContext(let type, let id, let action) {
            #expect(type == "Trip" && id == theirTrip.persistentModelID && action == "deleted")
        }
        #expect(try !theirTrip.isDeleted && trips(ModelContext(container)).count == 2, "nothing was deleted")
        mine.rollback()
        #expect(try mine.save(author: "me") == nil, "rollback drops the refused call")

        let other = try #require(try trips(theirs).last)
        mine.insert(other)
        #expect(throws: StoreError.self) { try mine.save(author: "me") }
        #expect(other.modelContext === theirs)
    }

    // Core Data refuses a relationship between objects of two contexts;
    // without the check, a to-one silently mixed them and a to-many failed
    // as a conflict whose advice (refresh, save again) could not help.
    @Test func relatingAnotherContextsObjectIsAnErrorThatNamesIt() throws {
        let container = try seeded(["a", "b"])
        let mine = ModelContext(container), theirs = ModelContext(container)
        let myTrip = try #require(try trips(mine).first)
        let theirItem = BucketListItem(title: "theirs")
        theirs.insert(theirItem)
        try theirs.save(author: "them")
        myTrip.bucketList.append(theirItem)  // a to-many
        // Fetches in this context never hand out the other context's object.
        let id = theirItem.persistentModelID
        let fetched = try mine.fetch(FetchDescriptor<BucketListItem>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(fetched.count == 1 && fetched.allSatisfy { $0 !== theirItem && $0.modelContext === mine })
        do {
            try mine.save(author: "me")
            Issue.record("a link to another context's object was saved")
        } catch StoreError.modelOfAnotherContext(let type, let id, let action) {
            #expect(type == "BucketListItem" && id == theirItem.persistentModelID && action == "linked")
        }
        mine.rollback()
        let again = try mine.fetch(FetchDescriptor<BucketListItem>(predicate: #Predicate { $0.persistentModelID == id }))
        #expect(again.count == 1 && again[0] !== theirItem)
        let item = BucketListItem(title: "mine")
        let theirTrip: Trip = try #require(try trips(theirs).first)
        item.trip = theirTrip  // a to-one, from a new object
        mine.insert(item)
        #expect(throws: StoreError.self) { try mine.save(author: "me") }
        mine.rollback()
        #expect(try mine.save(author: "me") == nil)
        // A link undone before the save is no link.
        myTrip.bucketList.append(theirItem)
        myTrip.bucketList.removeAll { $0 === theirItem }
        myTrip.name = "renamed"
        #expect(try mine.save(author: "me") != nil)
    }

    @Test func resetForgetsChangesAndObjects() throws {
        let container = try seeded(["a", "b"])
        let c = ModelContext(container)
        let a = try #require(try trips(c).first)
        a.name = "changed"
        c.insert(trip("new"))
        c.reset()
        #expect(c.registeredModels.isEmpty && !c.hasChanges)
        #expect(a.modelContext == nil)
        #expect(try c.save(author: "me") == nil)
        #expect(try trips(c).map(\.name) == ["a", "b"], "the store is as it was, read afresh")
    }
}
