import Foundation
import Testing
@testable import TripStoreEngine
import TripStoreCore
import TripStoreJSON

// SwiftData's film example: a fetch fills only `propertiesToFetch`, and the
// objects behind relationships load on first access (faults).

class Film: PersistentModel {
    @Attribute var title = ""
    @Attribute var releaseDate = Date(timeIntervalSinceReferenceDate: 0)
    @Attribute var synopsis = ""
    @Relationship var director: Director?
    required init() { super.init() }
    init(title: String, year: Int, synopsis: String = "") {
        self.title = title
        self.releaseDate = Date(timeIntervalSinceReferenceDate: ISODate.parse("\(year)-06-01")!)
        self.synopsis = synopsis
        super.init()
    }
    override class var properties: [ModelProperty] {
        [.attribute("title", \Film.title, options: [.indexed]), .attribute("releaseDate", \Film.releaseDate, options: [.indexed]),
         .attribute("synopsis", \Film.synopsis), .toOne("director", \Film.director, inverse: "films")]
    }
}

final class Documentary: Film {
    @Attribute var subject = ""
    override class var properties: [ModelProperty] { [.attribute("subject", \Documentary.subject)] }
}

final class Director: PersistentModel {
    @Attribute var name = ""
    @Relationship var films: [Film] = []
    override class var properties: [ModelProperty] {
        [.attribute("name", \Director.name), .toMany("films", \Director.films, inverse: "director")]
    }
}

@Suite struct LazyLoadingTests {
    static let models = try! ModelSchema([Film.self, Documentary.self, Director.self])

    /// A store with one director of `count` films (one a documentary).
    func store(films count: Int = 3) throws -> ModelContainer {
        let container = try ModelContainer(folder: TestFolders.make("lazy"), models: Self.models)
        let context = ModelContext(container)
        let varda = Director()
        varda.name = "Agnès Varda"
        for i in 0..<count {
            let film = i == 0 ? Documentary(title: "The Gleaners", year: 2000, synopsis: "Gleaning.") : Film(title: "Film \(i)", year: 1960 + i % 60)
            (film as? Documentary)?.subject = "gleaning"
            varda.films.append(film)
        }
        context.insert(varda)
        try context.save(author: "setup")
        return container
    }

    func slot(_ name: String, of m: PersistentModel, in context: ModelContext) throws -> ModelProperty {
        let e = try #require(context.models.entityID(of: m))
        return try #require(context.models.properties[e].first { $0.name == name })
    }

    @Test func propertiesToFetchFillsOnlyThoseAndReadingAnotherLoadsIt() throws {
        let container = try store()
        let context = ModelContext(container)
        var d = FetchDescriptor<Film>(predicate: #Predicate { $0.title == "The Gleaners" })
        d.propertiesToFetch = [\Film.title]
        let film = try #require(try context.fetch(d).first as? Documentary)
        #expect(!context.isFault(film, try slot("title", of: film, in: context)))
        #expect(context.isFault(film, try slot("synopsis", of: film, in: context)))
        #expect(context.isFault(film, try slot("subject", of: film, in: context)))
        // Another context changes the synopsis before it is read here.
        let other = ModelContext(container)
        try #require(try other.fetch(FetchDescriptor<Film>(predicate: #Predicate { $0.title == "The Gleaners" })).first).synopsis = "Gleaners and I."
        try other.save(author: "editor")
        #expect(film.synopsis == "Gleaners and I.")
        #expect(film.subject == "gleaning")
        #expect(!context.isFault(film, try slot("synopsis", of: film, in: context)))
        #expect(!context.hasChanges)
    }

    @Test func aFetchedObjectsRelationshipsAreFaultsUntilRead() throws {
        let container = try store(films: 50)
        let context = ModelContext(container)
        let film = try #require(try context.fetch(FetchDescriptor<Film>(predicate: #Predicate { $0.title == "Film 7" })).first)
        #expect(context.identity.values.count == 1)  // not the director, not her 49 other films
        #expect(context.isFault(film, try slot("director", of: film, in: context)))
        #expect(film.director?.name == "Agnès Varda")
        #expect(context.identity.values.count == 2)
        #expect(film.director?.films.count == 50)
        #expect(context.identity.values.count == 51)
        #expect(film.director?.films.contains { $0 === film } == true)
    }

    @Test func prefetchingLoadsTheNamedRelationships() throws {
        let container = try store()
        let context = ModelContext(container)
        var d = FetchDescriptor<Film>()
        d.relationshipKeyPathsForPrefetching = [\Film.director]
        let films = try context.fetch(d)
        #expect(films.allSatisfy { !context.isFault($0, try! slot("director", of: $0, in: context)) })
    }

    @Test func aSaveVisitsOnlyWhatChanged() throws {
        let container = try store(films: 200)
        let context = ModelContext(container)
        let films = try context.fetch(FetchDescriptor<Film>(sortBy: [SortDescriptor(\Film.title)]))
        films[5].title = "Renamed"
        #expect(context.changed.count == 1)
        let t = try #require(try context.save(author: "editor"))
        #expect(t.changes.map(\.id) == [films[5].persistentModelID])
        #expect(context.changed.isEmpty)
        #expect(!context.hasChanges)
        #expect(try ModelContext(container).fetchCount(FetchDescriptor<Film>(predicate: #Predicate { $0.title == "Renamed" })) == 1)
    }

    @Test func writingTheSameValueBackIsNoChange() throws {
        let context = ModelContext(try store())
        let film = try #require(try context.fetch(FetchDescriptor<Film>()).first)
        let title = film.title
        film.title = "x"
        film.title = title
        #expect(!context.hasChanges)
        #expect(try context.save(author: "nobody") == nil)
    }

    @Test func objectsTheProgramLetsGoOfAreFreed() throws {
        let container = try store(films: 20)
        let context = ModelContext(container)
        do {
            let films = try context.fetch(FetchDescriptor<Film>())
            #expect(films.count == 20)
            #expect(context.identity.values.count == 20)
        }
        #expect(context.identity.values.isEmpty)
        // A changed object is kept until it is saved.
        try #require(try context.fetch(FetchDescriptor<Film>()).first).title = "kept"
        #expect(context.identity.values.count == 1)
        #expect(context.hasChanges)
        try context.save(author: "editor")
        #expect(context.identity.values.isEmpty)
    }

    @Test func aTemporaryContextsObjectsStillLoadTheirFaults() throws {
        let container = try store()
        func firstFilm() throws -> Film? { try ModelContext(container).fetch(FetchDescriptor<Film>(sortBy: [SortDescriptor(\Film.title)])).first }
        let film = try #require(try firstFilm())
        #expect(film.director?.films.count == 3)
    }
}
