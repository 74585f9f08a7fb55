import TripStoreModels
import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// Two contexts and stale raw transactions interleaved over a few hundred
/// seeded operations, with compactions and reopenings: every commit leaves a
/// sound store, every conflict is the one a simple model predicts, and the
/// final state is what the model gets by applying the accepted operations.
@Suite struct ConcurrentWritesModelTests {
    /// The store as the model sees it, and when each property last changed.
    struct Model {
        var names: [String: String] = [:]
        var books: [String: [String]] = [:]
        var favourite: [String: String] = [:]
        var pages: [String: Int] = [:]
        var token: Int64 = 0
        var changedAt: [String: Int64] = [:]
        var deletedAt: [String: Int64] = [:]

        func changedSince(_ id: String, _ property: String, _ token: Int64) -> Bool {
            (deletedAt[id] ?? 0) > token || (changedAt[id + "." + property] ?? 0) > token
        }
        func anyChangeSince(_ id: String, _ token: Int64) -> Bool {
            (deletedAt[id] ?? 0) > token || changedAt.contains { $0.key.hasPrefix(id + ".") && $0.value > token }
        }
        /// Deleting a book also clears the favourites that name it (a to-one:
        /// a conflict when another save changed it since); the shelves' book
        /// lists merge.
        func bookDeleteConflicts(_ b: String, _ t: Int64) -> Bool {
            anyChangeSince(b, t) || favourite.contains { $0.value == b && changedSince($0.key, "favourite", t) }
        }
        func shelfDeleteConflicts(_ s: String, _ t: Int64) -> Bool {
            anyChangeSince(s, t) || (books[s] ?? []).contains { bookDeleteConflicts($0, t) }
        }

        mutating func deleteBook(_ b: String, at t: Int64) {
            guard pages.removeValue(forKey: b) != nil else { return }
            deletedAt[b] = t
            for s in books.keys where books[s]!.contains(b) {
                books[s]!.removeAll { $0 == b }
                changedAt[s + ".books"] = t
            }
            for (s, f) in favourite where f == b {
                favourite[s] = nil
                changedAt[s + ".favourite"] = t
            }
        }

        mutating func deleteShelf(_ s: String, at t: Int64) {
            guard names.removeValue(forKey: s) != nil else { return }
            deletedAt[s] = t
            for b in books.removeValue(forKey: s) ?? [] { deleteBook(b, at: t) }
            favourite[s] = nil
        }
    }

    /// One pending edit of a context: what it touches (for the conflict
    /// prediction) and what it does to the model once saved.
    struct Edit {
        var conflicts: (Model, Int64) -> Bool
        var apply: (inout Model, Int64) -> Void
    }

    final class Writer {
        var context: ModelContext
        var readToken: Int64
        var edits: [Edit] = []
        var deleting = Set<String>()
        init(_ container: ModelContainer) throws {
            context = ModelContext(container)
            readToken = container.store.lastToken
            try fetchAll()
        }
        /// What the writer read: held, so the context keeps each instance (and
        /// the token it was read at) as an app holding its objects would.
        var held: [PersistentModel] = []
        func fetchAll() throws {
            held = try context.fetch(FetchDescriptor<Shelf>()) + context.fetch(FetchDescriptor<Book>())
        }
        func known<T: PersistentModel>(_ type: T.Type) throws -> [T] {
            try context.fetch(FetchDescriptor<T>()).filter { !deleting.contains($0.persistentModelID) }
                .sorted { $0.persistentModelID < $1.persistentModelID }
        }
    }

    @Test func interleavedContextsAndStaleTransactionsMatchAModel() throws {
        let folder = TestFolders.make("concurrent")
        var container = try ModelContainer(folder: folder, models: ShelfSchema.models)
        var rng = RandomQueries(state: 11_2026)
        var model = Model()
        var nextID = 0
        func newID(_ prefix: String) -> String {
            nextID += 1
            return "\(prefix)\(nextID)"
        }
        // A first shelf with books, so there is something to change.
        let seed = ModelContext(container)
        for _ in 0..<3 {
            let shelf = Shelf(name: "shelf")
            shelf.persistentModelID = newID("s")
            for _ in 0..<3 {
                let book = Book(title: "t", pages: 1)
                book.persistentModelID = newID("b")
                shelf.books.append(book)
                model.pages[book.persistentModelID] = 1
            }
            seed.insert(shelf)
            model.names[shelf.persistentModelID] = "shelf"
            model.books[shelf.persistentModelID] = shelf.books.map(\.persistentModelID)
        }
        try seed.save(author: "seed")
        model.token = container.store.lastToken
        var writers = [try Writer(container), try Writer(container)]
        var staged: (tx: TransactionBuilder, book: String, pages: Int, token: Int64)?
        var accepted = 0, refused = 0

        func afterCommit() {
            #expect(container.store.checkInvariants() == [])
            #expect(container.store.lastToken == model.token)
        }

        for _ in 0..<300 {
            let w = writers[rng.int(writers.count)]
            switch rng.int(12) {
            case 0, 1:  // change a book's pages
                guard let book = try w.known(Book.self).randomElement(using: &rng.random) else { continue }
                let id = book.persistentModelID, value = rng.int(1_000_000) + 2
                book.pages = value
                w.edits.append(Edit(conflicts: { m, t in m.changedSince(id, "pages", t) }, apply: { m, t in
                    if m.pages[id] != value { m.pages[id] = value; m.changedAt[id + ".pages"] = t }
                }))
            case 2:  // rename a shelf
                guard let shelf = try w.known(Shelf.self).randomElement(using: &rng.random) else { continue }
                let id = shelf.persistentModelID, value = "name \(rng.int(1_000_000))"
                shelf.name = value
                w.edits.append(Edit(conflicts: { m, t in m.changedSince(id, "name", t) }, apply: { m, t in
                    if m.names[id] != value { m.names[id] = value; m.changedAt[id + ".name"] = t }
                }))
            case 3:  // point a shelf's favourite at a book (no inverse)
                guard let shelf = try w.known(Shelf.self).randomElement(using: &rng.random),
                      let book = try w.known(Book.self).randomElement(using: &rng.random) else { continue }
                let id = shelf.persistentModelID, target = book.persistentModelID
                let before = shelf.favourite?.persistentModelID
                shelf.favourite = book
                guard before != target else { continue }
                w.edits.append(Edit(conflicts: { m, t in
                    m.changedSince(id, "favourite", t) || (m.deletedAt[target] ?? 0) > t
                }, apply: { m, t in
                    if m.favourite[id] != target { m.favourite[id] = target; m.changedAt[id + ".favourite"] = t }
                }))
            case 4:  // a new book on a shelf
                guard let shelf = try w.known(Shelf.self).randomElement(using: &rng.random) else { continue }
                let id = shelf.persistentModelID, book = Book(title: "new", pages: 5)
                book.persistentModelID = newID("b")
                let bookID = book.persistentModelID
                shelf.books.append(book)
                w.edits.append(Edit(conflicts: { m, t in m.changedSince(id, "books", t) }, apply: { m, t in
                    m.pages[bookID] = 5
                    m.books[id, default: []].append(bookID)
                    m.changedAt[id + ".books"] = t
                }))
            case 5:  // delete a book (or, rarely, a shelf with its books)
                if rng.int(4) == 0, let shelf = try w.known(Shelf.self).randomElement(using: &rng.random) {
                    let id = shelf.persistentModelID
                    w.context.delete(shelf)
                    w.deleting.insert(id)
                    w.edits.append(Edit(conflicts: { m, t in m.shelfDeleteConflicts(id, t) }, apply: { m, t in m.deleteShelf(id, at: t) }))
                } else if let book = try w.known(Book.self).randomElement(using: &rng.random) {
                    let id = book.persistentModelID
                    w.context.delete(book)
                    w.deleting.insert(id)
                    w.edits.append(Edit(conflicts: { m, t in m.bookDeleteConflicts(id, t) }, apply: { m, t in m.deleteBook(id, at: t) }))
                }
            case 6, 7, 8:  // save
                let expectConflict = w.edits.contains { $0.conflicts(model, w.readToken) }
                do {
                    let t = try w.context.save(author: "ctx")
                    #expect(!expectConflict, "a save went through where the model expected a conflict")
                    if let t {
                        model.token = t.token
                        for e in w.edits { e.apply(&model, t.token) }
                        accepted += 1
                    }
                } catch StoreError.conflict {
                    #expect(expectConflict, "a conflict the model did not expect")
                    refused += 1
                    w.context.rollback()
                }
                w.edits = []
                w.deleting = []
                // A save re-reads only what it wrote (as Core Data's): take in the others' saves too.
                w.context.refreshAll()
                w.readToken = container.store.lastToken
                try w.fetchAll()
                afterCommit()
            case 9:  // a raw transaction staged now and committed a few steps later
                if let s = staged {
                    let conflict = model.changedSince(s.book, "pages", s.token)
                    do {
                        if let t = try container.store.commit(s.tx, author: "raw") {
                            model.token = t.token
                            model.pages[s.book] = s.pages
                            model.changedAt[s.book + ".pages"] = t.token
                        }
                        #expect(!conflict, "a stale transaction went through over a later change")
                    } catch StoreError.conflict {
                        #expect(conflict, "a stale transaction was refused with no later change")
                    }
                    staged = nil
                    afterCommit()
                } else if let book = model.pages.keys.sorted().randomElement(using: &rng.random),
                          let row = container.store.table.row(for: book) {
                    var tx = container.store.transaction()
                    var pages = rng.int(1_000_000) + 2
                    if pages == model.pages[book] { pages += 1 }
                    tx.setAttribute(row, slot: ShelfSchema.schema.entity(named: "Book")!.property(named: "pages")!.slot, to: .int(Int64(pages)))
                    staged = (tx, book, pages, container.store.lastToken)
                }
            case 10:
                try container.store.compact()
            default:  // reopen: contexts and staged transactions of the old store are gone
                container.store.close()
                container = try ModelContainer(folder: folder, models: ShelfSchema.models)
                writers = [try Writer(container), try Writer(container)]
                staged = nil
                #expect(container.store.checkInvariants() == [])
            }
        }
        #expect(accepted > 20 && refused > 5)
        let check = ModelContext(container)
        let shelves = try check.fetch(FetchDescriptor<Shelf>())
        #expect(Dictionary(uniqueKeysWithValues: shelves.map { ($0.persistentModelID, $0.name) }) == model.names)
        #expect(Dictionary(uniqueKeysWithValues: shelves.map { ($0.persistentModelID, $0.books.map(\.persistentModelID)) }) == model.books)
        #expect(Dictionary(uniqueKeysWithValues: shelves.compactMap { s in s.favourite.map { (s.persistentModelID, $0.persistentModelID) } }) == model.favourite)
        let books = try check.fetch(FetchDescriptor<Book>())
        #expect(Dictionary(uniqueKeysWithValues: books.map { ($0.persistentModelID, $0.pages) }) == model.pages)
    }
}
