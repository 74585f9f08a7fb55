import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreModels

/// A background importer, as `@ModelActor` would make it.
actor TripImporter: ModelActor {
    let modelContainer: ModelContainer
    let modelContext: ModelContext

    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelContext = ModelContext(modelContainer)
    }

    func add(_ prefix: String, count: Int) throws -> Int {
        let day = Date(timeIntervalSinceReferenceDate: 800_000_000)
        for i in 0..<count {
            let t = Trip(name: "\(prefix) \(i)", destination: prefix, startDate: day, endDate: day)
            t.bucketList = [BucketListItem(title: "see \(i)")]
            modelContext.insert(t)
            if i % 10 == 9 { try modelContext.save(author: prefix) }
        }
        try modelContext.save(author: prefix)
        return try modelContext.fetchCount(FetchDescriptor<Trip>(query: "destination == \"\(prefix)\""))
    }
}

@Suite struct ModelActorTests {
    @Test func actorsOnOneContainerSaveSideBySide() async throws {
        let container = try ModelContainer(folder: TestFolders.make("actors"), models: TripSchema.models)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for name in ["north", "south", "east", "west"] {
                group.addTask { try await TripImporter(modelContainer: container).add(name, count: 60) }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts == [60, 60, 60, 60])
        let context = ModelContext(container)
        #expect(try context.fetchCount(FetchDescriptor<Trip>()) == 240)
        #expect(try context.fetchCount(FetchDescriptor<BucketListItem>()) == 240)
        #expect(container.withStore { $0.checkInvariants() } == [])
        #expect(container.withStore { $0.lastToken } == 4 * 6)  // six saves each; the last save has nothing to write
    }
}
