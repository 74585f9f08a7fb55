import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore

/// A `#Predicate` comparing a UUID, URL or Decimal attribute for equality
/// translates as strings and numbers do: the index answers, no candidate
/// is evaluated with Foundation. Order on a Decimal is left to Foundation.
@Suite struct FoundationValuePredicateTests {
    @Test func equalityOnUUIDURLAndDecimalTranslates() throws {
        let models = try ModelSchema([Parcel.self])
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("parcel-predicates"), models: models))
        var ids: [UUID] = []
        for k in 0..<20 {
            let p = Parcel()
            p.tracking = UUID()
            p.label = URL(string: "https://example.com/\(k)")
            p.price = Decimal(k) + Decimal(string: "0.5")!
            ids.append(p.tracking)
            context.insert(p)
        }
        try context.save(author: "t")
        let wanted = ids[7]
        let byUUID = FetchDescriptor<Parcel>(predicate: #Predicate { $0.tracking == wanted })
        #expect(try context.fetch(byUUID).map(\.tracking) == [wanted])
        let plan = try context.explain(byUUID)
        #expect(!plan.evaluatedCandidates && plan.query.contains(wanted.uuidString), "\(plan)")
        #expect("\(plan.plan)".contains("index"), "\(plan)")

        let url = URL(string: "https://example.com/3")
        let byURL = FetchDescriptor<Parcel>(predicate: #Predicate { $0.label == url })
        #expect(try context.fetch(byURL).count == 1)
        #expect(try !context.explain(byURL).evaluatedCandidates)

        let price = Decimal(string: "4.5")!
        let byPrice = FetchDescriptor<Parcel>(predicate: #Predicate { $0.price == price })
        #expect(try context.fetch(byPrice).count == 1)
        #expect(try !context.explain(byPrice).evaluatedCandidates)
        // "10.5" < "4.5" as text: order is Foundation's to answer.
        let cheap = FetchDescriptor<Parcel>(predicate: #Predicate { $0.price < price })
        #expect(try context.fetch(cheap).count == 4)
        #expect(try context.explain(cheap).evaluatedCandidates)
    }
}
