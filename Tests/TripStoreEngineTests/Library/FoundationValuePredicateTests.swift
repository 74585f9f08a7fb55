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

    // An enum declared as the docs show it (`String, ModelEnum`, nothing
    // more) compares in `#Predicate`, through the index.
    @Test func aModelEnumComparesInAPredicateAsDeclared() throws {
        let context = ModelContext(try ModelContainer(folder: TestFolders.make("enum-predicates"), models: try ModelSchema([GenreShelf.self])))
        for (k, g) in [GenreShelf.Genre.science, .fiction, .science].enumerated() {
            let s = GenreShelf()
            s.name = "shelf \(k)"
            s.genre = g
            context.insert(s)
        }
        try context.save(author: "t")
        let science = GenreShelf.Genre.science
        let wanted = FetchDescriptor<GenreShelf>(predicate: #Predicate { $0.genre == science }, sortBy: [SortDescriptor(\GenreShelf.name)])
        #expect(try context.fetch(wanted).map(\.name) == ["shelf 0", "shelf 2"])
        #expect(try !context.explain(wanted).evaluatedCandidates)
        // `explain` reads as its plan wherever text is wanted.
        let explained = "plan: \(try context.explain(wanted))"
        #expect(explained.contains("genre"), "\(explained)")
    }
}

final class GenreShelf: PersistentModel {
    enum Genre: String, ModelEnum { case science, fiction }
    @Attribute var name = ""
    @Attribute var genre = Genre.fiction
    override class var properties: [ModelProperty] {
        [.attribute("name", \GenreShelf.name), .attribute("genre", \GenreShelf.genre, options: [.indexed])]
    }
}
