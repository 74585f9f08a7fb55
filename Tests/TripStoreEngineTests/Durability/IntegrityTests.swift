import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// Referential integrity and optimistic concurrency in the engine, on a
/// schema whose relationships declare no inverse.
@Suite struct IntegrityTests {
    static let shelves = #"""
    [{"type":"Shelf","id":"s1","data":{"name":"Home","books":[{"type":"Book","id":"b1","data":{"title":"A","pages":1}},{"type":"Book","id":"b2","data":{"title":"B","pages":2}}]}},
     {"type":"Shelf","id":"s2","data":{"name":"Office","books":[{"type":"Book","id":"b3","data":{"title":"C","pages":3}}],"favourite":{"id":"b1"}}}]
    """#

    func store(_ folder: String = TestFolders.make("integrity")) throws -> Store {
        let store = try Store.open(folder, schema: ShelfSchema.schema, access: .write)
        if store.lastToken == 0 {
            var tx = store.transaction()
            try store.stage(try EnvelopeInput.decode(Array(Self.shelves.utf8), schema: store.schema), mode: .insert, into: &tx)
            try store.commit(tx, author: "test", timestamp: 1_800_000_000)
        }
        return store
    }

    func row(_ store: Store, _ id: String) throws -> RowID { try #require(store.table.row(for: id)) }
    func slot(_ store: Store, _ type: String, _ name: String) -> Int { store.schema.entity(named: type)!.property(named: name)!.slot }
    func ids(_ store: Store, _ id: String, _ property: String) -> [String] {
        guard let o = store.object(id: id) else { return [] }
        return o.values[slot(store, store.schema.entities[o.entity].name, property)].rows.compactMap { store.table.id(at: $0) }
    }

    @Test func deletingATargetOfOneWayRelationshipsRemovesEveryReferenceAndTheStoreReopens() throws {
        let folder = TestFolders.make("one-way")
        var store = try store(folder)
        var tx = store.transaction()
        try tx.delete(try row(store, "b1"))
        let t = try #require(try store.commit(tx, author: "test"))
        #expect(ids(store, "s1", "books") == ["b2"])
        #expect(ids(store, "s2", "favourite") == [])
        let updates = t.changes.filter { $0.kind == .update }.map { "\($0.id).\($0.values.map(\.name))" }
        #expect(Set(updates) == ["s1.[\"books\"]", "s2.[\"favourite\"]"])
        #expect(store.checkInvariants() == [])
        try store.compact()
        store.close()
        store = try Store.open(folder, schema: ShelfSchema.schema, access: .write)
        #expect(store.table.count == 4)
        #expect(ids(store, "s1", "books") == ["b2"])
        #expect(store.checkInvariants() == [])
    }

    @Test func cascadeWithoutAnInverseDeletesTheOwnedObjectsAndClearsOtherReferencesToThem() throws {
        let store = try store()
        var link = store.transaction()
        link.link(try row(store, "s2"), slot: slot(store, "Shelf", "favourite"), to: try row(store, "b2"))
        try store.commit(link, author: "test")
        var tx = store.transaction()
        try tx.delete(try row(store, "s1"))
        try store.commit(tx, author: "test")
        #expect(store.object(id: "b1") == nil && store.object(id: "b2") == nil)
        #expect(ids(store, "s2", "favourite") == [])
        #expect(store.checkInvariants() == [])
    }

    @Test func aStaleTransactionKeepsWhatALaterCommitChangedInAnotherProperty() throws {
        let store = try store()
        let b1 = try row(store, "b1")
        var stale = store.transaction()
        stale.setAttribute(b1, slot: slot(store, "Book", "title"), to: .string("A2"))
        var later = store.transaction()
        later.setAttribute(b1, slot: slot(store, "Book", "pages"), to: .int(9))
        try store.commit(later, author: "other")
        let t = try #require(try store.commit(stale, author: "me"))
        #expect(t.changes.map(\.values) == [[ValueChange(name: "title", old: .string("A"), new: .string("A2"))]])
        let o = try #require(store.object(id: "b1"))
        #expect(o.values[slot(store, "Book", "pages")] == .int(9))
        #expect(o.values[slot(store, "Book", "title")] == .string("A2"))
    }

    @Test func aStaleUpdateOfAPropertyChangedSinceIsAConflictAndWritesNothing() throws {
        let store = try store()
        let b1 = try row(store, "b1")
        var stale = store.transaction()
        stale.setAttribute(b1, slot: slot(store, "Book", "title"), to: .string("mine"))
        var later = store.transaction()
        later.setAttribute(b1, slot: slot(store, "Book", "title"), to: .string("theirs"))
        let laterToken = try #require(try store.commit(later, author: "other")).token
        let journal = FileIO.fileSize(store.files.journal(store.snapshotToken))
        #expect {
            try store.commit(stale, author: "me")
        } throws: { error in
            guard case StoreError.conflict(let cs) = error else { return false }
            return cs == [StoreConflict(type: "Book", id: "b1", reason: .changed(property: "title"), token: laterToken, stagedOn: 1)]
        }
        #expect(store.lastToken == laterToken)
        #expect(FileIO.fileSize(store.files.journal(store.snapshotToken)) == journal)
        #expect(store.object(id: "b1")?.values[slot(store, "Book", "title")] == .string("theirs"))
    }

    @Test func aStaleDeleteOfAnObjectChangedSinceIsAConflict() throws {
        let store = try store()
        var stale = store.transaction()
        try stale.delete(try row(store, "b3"))
        var untouched = store.transaction()
        try untouched.delete(try row(store, "b2"))
        var later = store.transaction()
        later.setAttribute(try row(store, "b3"), slot: slot(store, "Book", "pages"), to: .int(30))
        try store.commit(later, author: "other")
        #expect(throws: StoreError.self) { try store.commit(stale, author: "me") }
        #expect(store.object(id: "b3") != nil)
        // A stale transaction that touches nothing the later commit changed goes through.
        try store.commit(untouched, author: "me")
        #expect(store.object(id: "b2") == nil)
        #expect(ids(store, "s1", "books") == ["b1"])
        #expect(store.checkInvariants() == [])
    }

    @Test func aStaleLinkToAnObjectDeletedSinceIsAConflictAndTheStoreStillOpens() throws {
        let folder = TestFolders.make("stale-link")
        var store = try store(folder)
        var stale = store.transaction()
        let shelf = stale.insert(StoredObject(entity: store.schema.entity(named: "Shelf")!.id, id: "s3",
                                              values: store.schema.entity(named: "Shelf")!.emptyValues))
        stale.setAttribute(shelf, slot: slot(store, "Shelf", "name"), to: .string("New"))
        stale.link(shelf, slot: slot(store, "Shelf", "favourite"), to: try row(store, "b3"))
        var later = store.transaction()
        try later.delete(try row(store, "b3"))
        let deletedBy = try #require(try store.commit(later, author: "other")).token
        #expect {
            try store.commit(stale, author: "me")
        } throws: { error in
            guard case StoreError.conflict(let cs) = error else { return false }
            return cs == [StoreConflict(type: "Book", id: "b3", reason: .deleted, token: deletedBy, stagedOn: 1)]
        }
        try store.compact()
        store.close()
        store = try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        #expect(store.object(id: "s3") == nil)
        #expect(store.checkInvariants() == [])
    }

    @Test func staleInsertsTakeRowsAfterTheLaterCommitsAndAnIdInsertedSinceConflicts() throws {
        let store = try store()
        let book = store.schema.entity(named: "Book")!
        func newBook(_ id: String) -> StoredObject {
            var values = book.emptyValues
            values[book.property(named: "title")!.slot] = .string(id)
            values[book.property(named: "pages")!.slot] = .int(1)
            return StoredObject(entity: book.id, id: id, values: values)
        }
        var stale = store.transaction()
        let b10 = stale.insert(newBook("b10"))
        stale.link(try row(store, "s2"), slot: slot(store, "Shelf", "books"), to: b10)
        var dup = store.transaction()
        dup.insert(newBook("b11"))
        var later = store.transaction()
        let b11 = later.insert(newBook("b11"))
        later.link(try row(store, "s2"), slot: slot(store, "Shelf", "favourite"), to: b11)
        try store.commit(later, author: "other")
        try store.commit(stale, author: "me")
        #expect(ids(store, "s2", "books") == ["b3", "b10"])
        #expect(ids(store, "s2", "favourite") == ["b11"])
        #expect(store.object(id: "b10")?.values[book.property(named: "title")!.slot] == .string("b10"))
        #expect(store.checkInvariants() == [])
        #expect {
            try store.commit(dup, author: "me")
        } throws: { error in
            guard case StoreError.conflict(let cs) = error else { return false }
            return cs.map(\.reason) == [.inserted] && cs.first?.id == "b11"
        }
    }

    @Test func aCommitThatWouldLeaveADanglingReferenceIsRefusedBeforeAnythingIsWritten() throws {
        let store = try store()
        let token = store.lastToken
        var tx = store.transaction()
        tx.modify(try row(store, "s1")) { $0.values[1] = .toMany([9_999]) }
        #expect(throws: StoreError.self) { try store.commit(tx, author: "me") }
        #expect(store.lastToken == token)
        #expect(ids(store, "s1", "books") == ["b1", "b2"])
    }

    @Test func aSnapshotIsNeverWrittenFromATableWithADanglingReference() throws {
        let folder = TestFolders.make("no-snapshot")
        let store = try store(folder)
        let before = try FileIO.listDirectory(folder).sorted()
        store.table.setValue(.toMany([try row(store, "b1"), 9_999]), row: try row(store, "s1"), slot: slot(store, "Shelf", "books"))
        #expect(throws: StoreError.self) { try store.compact() }
        #expect(try FileIO.listDirectory(folder).sorted() == before)
    }
}

/// A store damaged by an older tripstore (a deleted object still referenced)
/// is refused, listed by a salvaging open, and mended by one transaction.
@Suite struct DanglingReferenceRepairTests {
    /// A store whose snapshot holds `null` in s1's books (as older versions
    /// wrote) and whose journal inserts a shelf whose favourite is missing.
    /// `pruned`: with a second transaction, and the first one pruned.
    func damagedStore(pruned: Bool = false) throws -> String {
        let folder = TestFolders.make("dangling")
        let store = try IntegrityTests().store(folder)
        if pruned {
            var tx = store.transaction()
            tx.setAttribute(try #require(store.table.row(for: "s1")), slot: try #require(store.schema.entity(named: "Shelf")?.property(named: "name")?.slot),
                            to: .string("renamed"))
            try store.commit(tx, author: "a")
            #expect(try store.pruneHistory(before: store.lastToken) == 1)
        }
        try store.compact()
        let token = store.snapshotToken
        store.close()
        let path = folder + "/snapshot-\(token).jsonl"
        var lines = String(decoding: try FileIO.readFile(path), as: UTF8.self).split(separator: "\n").map(String.init)
        let s1 = try #require(lines.firstIndex { $0.contains(#""id":"s1""#) })
        lines[s1] = lines[s1].replacingOccurrences(of: #"{"id":"b2"}"#, with: "null")
        lines.removeLast()
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        let crc = CRC32C.checksum(body)
        try Data(body + SnapshotFormat.trailer(objects: 5, history: 1, bodyCRC: crc)).write(to: URL(fileURLWithPath: path))
        FileIO.unlink(folder + "/snapshot-\(token).image")
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[{"kind":"insert","type":"Shelf","id":"s9","data":{"name":"Ghost","books":[],"favourite":{"type":"Book","id":"gone"}}}]}"#
        try Data(JournalFormat.seal(Array(line.utf8))).write(to: URL(fileURLWithPath: folder + "/journal-\(token).jsonl"))
        return folder
    }

    @Test func openRefusesAStoreWithDanglingReferencesNamingTheRepair() throws {
        let folder = try damagedStore()
        #expect {
            try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.danglingReferences = error else { return false }
            return "\(error)".contains("a repair can remove")
        }
    }

    @Test func aSalvagingOpenListsEveryDanglingReference() throws {
        let folder = try damagedStore()
        var options = StoreOptions()
        options.salvageDanglingReferences = true
        let store = try Store.open(folder, schema: ShelfSchema.schema, access: .read, options: options)
        #expect(store.danglingReferences.map { "\($0.id).\($0.property) \($0.missingID ?? "null")" } == ["s1.books null", "s9.favourite gone"])
        #expect(store.danglingReferences[0].line == 5)
    }

    @Test func repairRemovesThemAsOneTransactionByRepairAndTheStoreOpensAgain() throws {
        let folder = try damagedStore()
        var options = StoreOptions()
        options.salvageDanglingReferences = true
        let store = try Store.open(folder, schema: ShelfSchema.schema, access: .write, options: options)
        let t = try #require(try store.removeDanglingReferences(author: "repair"))
        #expect(t.author == "repair")
        #expect(t.changes.map { "\($0.kind) \($0.id) \($0.values.map(\.name))" } == ["update s1 [\"books\"]", "update s9 [\"favourite\"]"])
        #expect(t.changes[0].values[0].old == .array([.object([JSONMember("type", .string("Book")), JSONMember("id", .string("b1"))]), .null]))
        store.close()
        let reopened = try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        #expect(reopened.checkInvariants() == [])
        #expect(reopened.table.count == 6)
        #expect(reopened.history.last?.author == "repair")
    }

    /// A repair's snapshot keeps when the oldest reachable state was committed.
    @Test func repairKeepsTheTimeOfTheOldestReachableState() throws {
        let folder = try damagedStore(pruned: true)
        var options = StoreOptions()
        options.salvageDanglingReferences = true
        let before = try #require(try Store.open(folder, schema: ShelfSchema.schema, access: .read, options: options).historyLog.oldestReachableCommit)
        let store = try Store.open(folder, schema: ShelfSchema.schema, access: .write, options: options)
        _ = try #require(try store.removeDanglingReferences(author: "repair"))
        try store.compact()
        store.close()
        let reopened = try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        #expect(reopened.historyLog.oldestReachableCommit == before)
        let snapshot = String(decoding: try FileIO.readFile(folder + "/snapshot-\(reopened.snapshotToken).jsonl").prefix(128), as: UTF8.self)
        #expect(snapshot.hasPrefix(#"{"format":4,"oldestReachableCommit":""#))
    }
}

/// What a hostile review of the first version found, each kept fixed.
@Suite struct IntegrityReviewTests {
    func shelves(_ folder: String = TestFolders.make("review")) throws -> Store { try IntegrityTests().store(folder) }
    func row(_ store: Store, _ id: String) throws -> RowID { try #require(store.table.row(for: id)) }
    func slot(_ store: Store, _ type: String, _ name: String) -> Int { store.schema.entity(named: type)!.property(named: name)!.slot }
    func book(_ store: Store, _ id: String) -> StoredObject {
        let e = store.schema.entity(named: "Book")!
        var values = e.emptyValues
        values[e.property(named: "title")!.slot] = .string(id)
        values[e.property(named: "pages")!.slot] = .int(1)
        return StoredObject(entity: e.id, id: id, values: values)
    }

    @Test func aStaleTransactionDoesNotSeeObjectsInsertedAfterItWasStaged() throws {
        let store = try shelves()
        var stale = store.transaction()
        stale.insert(book(store, "mine"))
        var later = store.transaction()
        later.insert(book(store, "theirs"))
        try store.commit(later, author: "other")
        #expect(stale.row(for: "theirs") == nil)
        #expect(stale.object(at: try row(store, "theirs"))?.id != "theirs")  // that row is its own insert here
        stale.insert(book(store, "theirs"))
        #expect(throws: StoreError.self) { try store.commit(stale, author: "me") }
        #expect(store.object(id: "mine") == nil)
    }

    @Test func anIdInsertedAndDeletedSinceIsAConflictForAStaleInsert() throws {
        let store = try shelves()
        var stale = store.transaction()
        stale.insert(book(store, "dupe"))
        var later = store.transaction()
        later.insert(book(store, "dupe"))
        try store.commit(later, author: "other")
        var gone = store.transaction()
        try gone.delete(try row(store, "dupe"))
        try store.commit(gone, author: "other")
        #expect(throws: StoreError.self) { try store.commit(stale, author: "me") }
    }

    @Test func aLinkToAMissingObjectOrAValueOfTheWrongTypeIsRefused() throws {
        let store = try shelves()
        let token = store.lastToken
        var gone = store.transaction()
        try gone.delete(try row(store, "b3"))
        try store.commit(gone, author: "test")
        var link = store.transaction()
        link.link(try row(store, "s1"), slot: slot(store, "Shelf", "favourite"), to: RowID(store.table.rowCount + 5))
        #expect(throws: StoreError.self) { try store.commit(link, author: "test") }
        var wrong = store.transaction()
        wrong.setAttribute(try row(store, "b1"), slot: slot(store, "Book", "title"), to: .int(3))
        #expect(throws: StoreError.self) { try store.commit(wrong, author: "test") }
        #expect(store.lastToken == token + 1)
    }

    @Test func aToManyHoldsAnObjectOnce() throws {
        let store = try shelves()
        var tx = store.transaction()
        let b1 = try row(store, "b1")
        try tx.setRelationship(try row(store, "s2"), slot: slot(store, "Shelf", "books"), to: [b1, b1])
        try store.commit(tx, author: "test")
        #expect(store.object(id: "s2")?.values[slot(store, "Shelf", "books")] == .toMany([b1]))
        #expect(store.checkInvariants() == [])
    }

    /// Older versions wrote a delete without taking the object out of the
    /// relationships that held it; the journal line alone says so.
    @Test func aJournalDeleteThatLeftReferencesBehindIsRefusedListedAndRepaired() throws {
        let folder = TestFolders.make("left-behind")
        let store = try shelves(folder)
        try store.compact()
        let token = store.lastToken
        store.close()
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[{"kind":"delete","type":"Book","id":"b2","tombstone":{}}]}"#
        try Data(JournalFormat.seal(Array(line.utf8))).write(to: URL(fileURLWithPath: folder + "/journal-\(token).jsonl"))
        #expect {
            try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.danglingReferences(_, let line, _) = error else { return false }
            return line == 1
        }
        var options = StoreOptions()
        options.salvageDanglingReferences = true
        let writer = try Store.open(folder, schema: ShelfSchema.schema, access: .write, options: options)
        #expect(writer.danglingReferences.map { "\($0.id).\($0.property) \($0.missingID ?? "null")" } == ["s1.books b2"])
        let t = try #require(try writer.removeDanglingReferences(author: "repair"))
        #expect(t.changes.map(\.id) == ["s1"])
        writer.close()
        let reopened = try Store.open(folder, schema: ShelfSchema.schema, access: .read)
        #expect(reopened.checkInvariants() == [])
        #expect(reopened.object(id: "b2") == nil)
    }

    @Test func aJournalLineThatLeavesOneSideOfAPairIsDamageAtOpen() throws {
        let folder = TestFolders.make("one-sided")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        let film = try tx.insert("ShortFilm", id: "f1", values: ["title": .string("Short"), "screens": .int(1)])
        let credit = try tx.insert("Credit", id: "c1", values: ["person": .string("Ada"), "role": .string("director")])
        try tx.link(film, "credits", to: credit)
        try store.commit(tx, author: "test")
        try store.compact()
        let token = store.lastToken
        store.close()
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[{"kind":"update","type":"ShortFilm","id":"f1","values":{"credits":{"old":[{"type":"Credit","id":"c1"}],"new":[]}}}]}"#
        try Data(JournalFormat.seal(Array(line.utf8))).write(to: URL(fileURLWithPath: folder + "/journal-\(token).jsonl"))
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let detail, _) = error else { return false }
            return line == 1 && detail.contains("Credit 'c1'.production")
        }
    }

    @Test func aJournalLineWithAReferenceOfTheWrongTypeIsDamageAtOpen() throws {
        let folder = TestFolders.make("wrong-type")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("ShortFilm", id: "f1", values: ["title": .string("Short"), "screens": .int(1)])
        try tx.insert("Studio", id: "st", values: ["name": .string("Ealing")])
        try store.commit(tx, author: "test")
        let token = store.lastToken
        store.close()
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[{"kind":"update","type":"ShortFilm","id":"f1","values":{"credits":{"old":[],"new":[{"type":"Studio","id":"st"}]}}}]}"#
        let journal = folder + "/journal-\(store.snapshotToken).jsonl"
        let fd = try FileIO.open(journal, O_WRONLY | O_APPEND)
        try FileIO.writeAll(fd, JournalFormat.seal(Array(line.utf8)), path: journal)
        FileIO.close(fd)
        #expect {
            try Store.open(folder, schema: FilmSchema.schema, access: .read)
        } throws: { error in
            guard case StoreError.damaged(_, let line, let detail, _) = error else { return false }
            return line == 2 && detail.contains("not a Credit") || detail.contains("Studio")
        }
    }

    /// Commit times never go back; a history that does (a line written by
    /// hand, or a trailer time forged before a commit) is reported by `verify`.
    @Test func aHistoryThatGoesBackInTimeFailsItsCheck() throws {
        let folder = TestFolders.make("back-in-time")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("ShortFilm", id: "f1", values: ["title": .string("Short"), "screens": .int(1)])
        try store.commit(tx, author: "test", timestamp: ISODate.parse("2031-06-01T00:00:00Z")!)
        #expect(store.commitTimeProblems().isEmpty)
        let token = store.lastToken
        store.close()
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[{"kind":"update","type":"ShortFilm","id":"f1","values":{"screens":{"old":1,"new":2}}}]}"#
        let journal = folder + "/journal-\(store.snapshotToken).jsonl"
        let fd = try FileIO.open(journal, O_WRONLY | O_APPEND)
        try FileIO.writeAll(fd, JournalFormat.seal(Array(line.utf8)), path: journal)
        FileIO.close(fd)
        let reader = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(reader.checkInvariants().isEmpty, "not damage that blocks a repair")
        #expect(reader.commitTimeProblems().contains { $0.contains("back in time at token \(token + 1)") })
    }

    @Test(arguments: [
        #"{"kind":"insert","type":"Credit","id":"c2","data":{"person":"p","role":"r","production":{"type":"FeatureFilm","id":"f1"}}}"#,
        #"{"kind":"update","type":"ShortFilm","id":"f1","values":{"credits":{"old":[{"type":"Credit","id":"c1"}],"new":[{"type":"Credit","id":"c1"},{"type":"Credit","id":"c1"}]}}}"#,
    ])
    func aJournalLineWithAMisnamedTypeOrAnObjectListedTwiceIsDamageAtOpen(_ change: String) throws {
        let folder = TestFolders.make("journal-lies")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("ShortFilm", id: "f1", values: ["title": .string("Short"), "screens": .int(1)])
        try tx.insert("Credit", id: "c1", values: ["person": .string("Ada"), "role": .string("director")])
        try tx.link("f1", "credits", to: "c1")
        try store.commit(tx, author: "test")
        try store.compact()
        let token = store.lastToken
        store.close()
        let line = #"{"token":\#(token + 1),"timestamp":"2026-11-23T10:00:00Z","author":"old","changes":[\#(change)]}"#
        try Data(JournalFormat.seal(Array(line.utf8))).write(to: URL(fileURLWithPath: folder + "/journal-\(token).jsonl"))
        #expect(throws: StoreError.self) { try Store.open(folder, schema: FilmSchema.schema, access: .read) }
    }
}
