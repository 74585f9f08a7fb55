// A catalogue app written as a user of the package writes one, from the
// README and docs/library.md alone, and built against a tagged clone of
// the repository by version (scripts/check-consumer-app). It checks what
// the docs promise and exits 1 naming the first promise that failed.
import Foundation
import TripStoreEngine

enum Genre: String, ModelEnum { case fantasy, scienceFiction, poetry }

class Book: PersistentModel {
    @Attribute var title = ""
    @Attribute var genre = Genre.fantasy
    @Attribute var published = Date(timeIntervalSince1970: 0)
    @Relationship var author: Author?
    override class var properties: [ModelProperty] {
        [.attribute("title", \Book.title, options: [.preserveOnDeletion, .indexed]),
         .attribute("genre", \Book.genre, options: [.indexed]),
         .attribute("published", \Book.published),
         .toOne("author", \Book.author, inverse: "books")]
    }
}
final class EBook: Book {
    @Attribute var megabytes = 0.0
    override class var properties: [ModelProperty] { [.attribute("megabytes", \EBook.megabytes)] }
}
final class AudioBook: Book {
    @Attribute var narrator = ""
    override class var properties: [ModelProperty] { [.attribute("narrator", \AudioBook.narrator)] }
}
final class Author: PersistentModel {
    @Attribute var name = ""
    @Relationship var books: [Book] = []
    override class var properties: [ModelProperty] {
        [.attribute("name", \Author.name), .toMany("books", \Author.books, inverse: "author", deleteRule: .cascade)]
    }
}

actor Shelver: ModelActor {
    let modelContainer: ModelContainer
    let modelContext: ModelContext
    init(modelContainer: ModelContainer) {
        self.modelContainer = modelContainer
        self.modelContext = ModelContext(modelContainer)
    }
    func add(_ titles: [String]) throws {
        for t in titles { let b = Book(); b.title = t; modelContext.insert(b) }
        try modelContext.save(author: "shelver")
    }
}

func require(_ ok: Bool, _ promise: String) {
    if !ok {
        FileHandle.standardError.write(Data("catalogue: broken promise: \(promise)\n".utf8))
        exit(1)
    }
    print("ok: \(promise)")
}

let folder = CommandLine.arguments.count > 1 ? CommandLine.arguments[1] : NSTemporaryDirectory() + "catalogue-\(UUID().uuidString)"
let models = try ModelSchema([Book.self, EBook.self, AudioBook.self, Author.self])
let container = try ModelContainer(folder: folder, models: models)
let context = ModelContext(container)

let leGuin = Author()
leGuin.name = "Ursula K. Le Guin"
let earthsea = EBook(), dispossessed = AudioBook()
earthsea.title = "A Wizard of Earthsea"
dispossessed.title = "The Dispossessed"
dispossessed.genre = .scienceFiction
leGuin.books = [earthsea, dispossessed]
context.insert(leGuin)
try context.save(author: "librarian")
require(earthsea.author === leGuin, "inverses are kept in step")

// 1. An enum in #Predicate, as declared.
let wanted = Genre.scienceFiction
let scienceFiction = FetchDescriptor<Book>(predicate: #Predicate { $0.genre == wanted })
require(try context.fetch(scienceFiction).map(\.title) == ["The Dispossessed"], "a ModelEnum compares in #Predicate")
require(try context.fetch(scienceFiction).first is AudioBook, "each result is its concrete class")

// 2. explain in string interpolation.
let plan = "plan: \(try context.explain(scienceFiction))"
require(plan.contains("genre"), "explain prints its plan")

// 3. A tombstone value by key, and history that prints.
context.delete(earthsea)
try context.save(author: "librarian")
let deletes = context.history(types: [Book.self], kinds: [.delete])
let tombstone = deletes.last?.changes.first { $0.kind == .delete }?.preservedValue("title")
require(tombstone.map { "\($0)" } == "A Wizard of Earthsea", "a tombstone value by key prints as the value")
require(deletes.last.map { "\($0)" }?.contains("delete EBook") == true, "a transaction prints as the audit view")
require(deletes.last.map { abs($0.date.timeIntervalSinceNow) < 3600 } == true, "transaction.date is a Date")

// 4. A changed object of the past makes the save throw, naming it.
let past = try context.fetch(FetchDescriptor<Book>(), asOf: 1)
past.first?.title = "Rewritten"
do {
    try context.save()
    require(false, "a save with a changed object of the past throws")
} catch StoreError.pastModel(_, let id, let token, _) {
    require(token == 1 && id == past.first?.persistentModelID, "a save with a changed object of the past throws, naming it")
}
require(context.hasChanges, "the pending change stays")
context.rollback()
require(!context.hasChanges, "rollback() drops it")

// 5. Several tasks save through one container at once.
try await withThrowingTaskGroup(of: Void.self) { group in
    for k in 0..<8 {
        group.addTask { try await Shelver(modelContainer: container).add((0..<5).map { "Shelf \(k) book \($0)" }) }
    }
    try await group.waitForAll()
}
require(try context.fetchCount(FetchDescriptor<Book>()) == 41, "eight tasks' saves all land")

// 6. close() releases the store: another writer may open it.
container.close()
require((try? context.fetchCount(FetchDescriptor<Book>())) == nil, "a closed container's context refuses")
let next = try ModelContainer(folder: folder, models: models)
require(try ModelContext(next).fetchCount(FetchDescriptor<Book>()) == 41, "a new container opens the closed store")
next.close()
print("catalogue: every promise kept")
