import Foundation
import TripStoreEngine

// Relationships declared without an inverse, as SwiftData allows
// (`@Relationship(deleteRule: .cascade) var books: [Book]` with no `inverse:`).

final class Shelf: PersistentModel {
    @Attribute var name = ""
    /// Owned books: deleting the shelf deletes them; no inverse.
    @Relationship var books: [Book] = []
    /// A book on any shelf, shown first; no inverse.
    @Relationship var favourite: Book?

    required init() { super.init() }
    init(name: String) {
        self.name = name
        super.init()
    }

    override class var properties: [ModelProperty] {
        [.attribute("name", \Shelf.name, options: [.preserveOnDeletion]),
         .toMany("books", \Shelf.books, deleteRule: .cascade),
         .toOne("favourite", \Shelf.favourite)]
    }
}

final class Book: PersistentModel {
    @Attribute var title = ""
    @Attribute var pages = 0

    required init() { super.init() }
    init(title: String, pages: Int = 100) {
        self.title = title
        self.pages = pages
        super.init()
    }

    override class var properties: [ModelProperty] {
        [.attribute("title", \Book.title), .attribute("pages", \Book.pages)]
    }
}

enum ShelfSchema {
    static let models: ModelSchema = try! ModelSchema([Shelf.self, Book.self])
    static var schema: Schema { models.schema }
}
