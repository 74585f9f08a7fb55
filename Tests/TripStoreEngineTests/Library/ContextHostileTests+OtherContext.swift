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
