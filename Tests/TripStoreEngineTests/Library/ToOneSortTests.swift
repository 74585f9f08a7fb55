import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreModels

/// Sorting by a to-one path, as SwiftData sorts by
/// `SortDescriptor(\Trip.livingAccommodation?.name)`: nil first ascending,
/// last descending (as the query language sorts), ties by id.
@Suite struct ToOneSortTests {
    @Test(arguments: [false, true])
    func aToOnePathSortsAsAReferenceSortDoes(_ reverse: Bool) throws {
        let folder = TestFolders.make("to-one-sort")
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        let context = ModelContext(container)
        var g = TripDataGenerator(seed: 91)
        var tx = container.store.transaction()
        try container.store.stage(try EnvelopeInput.decode(g.jsonArray(trips: 300), schema: container.store.schema), mode: .insert, into: &tx)
        try container.store.commit(tx, author: "t")
        let sorted = try context.fetch(FetchDescriptor<Trip>(
            sortBy: [SortDescriptor(\Trip.livingAccommodation?.name, order: reverse ? .reverse : .forward)]))
        // The reference: every trip, its accommodation's name or nil, sorted apart from the engine.
        let all = try context.fetch(FetchDescriptor<Trip>())
        let keyed = all.map { (name: $0.livingAccommodation?.name, id: $0.persistentModelID) }
        let expected = keyed.sorted { a, b in
            switch (a.name, b.name) {
            case (nil, nil): return a.id < b.id
            case (nil, _): return !reverse
            case (_, nil): return reverse
            case (let x?, let y?): return x == y ? a.id < b.id : (reverse ? y < x : x < y)
            }
        }.map(\.id)
        #expect(keyed.contains { $0.name == nil } && keyed.contains { $0.name != nil }, "both kinds are there")
        #expect(sorted.map(\.persistentModelID) == expected)
    }
}
