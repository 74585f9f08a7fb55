import Testing
@testable import TripStoreEngine

/// The public transaction API: objects by id, properties by name.
@Suite struct TransactionNamesTests {
    @Test func insertSetLinkAndDeleteByIdAndName() throws {
        let store = try Store.open(TestFolders.make("names"), schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("Studio", id: "st", values: ["name": .string("Ealing")])
        let film = try tx.insert("FeatureFilm", values: ["title": .string("Heat"), "screens": .int(10),
                                                          "runtimeMinutes": .int(170), "genre": .string("drama")])
        try tx.link(film, "studio", to: "st")
        try tx.set("budget", of: film, to: .double(6.5e7))
        try store.commit(tx, author: "test")
        let studio = try #require(store.object(id: "st"))
        let slot = FilmSchema.schema.entity(named: "Studio")!.property(named: "productions")!.slot
        #expect(studio.values[slot].rows.compactMap { store.object(at: $0)?.id } == [film])
        var bad = store.transaction()
        #expect(throws: StoreError.self) { try bad.set("budgett", of: film, to: .double(1)) }
        #expect(throws: StoreError.self) { try bad.set("studio", of: film, to: .null) }
        #expect(throws: StoreError.self) { try bad.link(film, "studio", to: "nobody") }
        #expect(throws: StoreError.self) { try bad.insert("Studio", id: "st") }
        #expect(throws: StoreError.self) { try bad.insert("Nope") }
        var gone = store.transaction()
        try gone.delete(id: film)
        try store.commit(gone, author: "test")
        #expect(store.object(id: film) == nil)
        #expect(store.object(id: "st")?.values[slot] == .toMany([]))
    }
}

@Suite struct NumberRangeTests {
    @Test func anInfiniteDoubleIsRefusedBeforeAnythingIsWritten() throws {
        let store = try Store.open(TestFolders.make("infinite"), schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try tx.insert("ShortFilm", id: "f", values: ["title": .string("t"), "screens": .int(1), "budget": .double(.infinity)])
        #expect(throws: StoreError.self) { try store.commit(tx, author: "test") }
        #expect(store.lastToken == 0)
    }

    /// A transaction cannot delete an object and insert another with its
    /// id: history, time travel and the journal's replay would take the two
    /// for one object, and the store would no longer open.
    @Test func anIdDeletedInATransactionCannotBeInsertedInIt() throws {
        let folder = TestFolders.make("names-replace")
        let store = try TestStores.filmStudio(folder, id: "st")
        var replace = store.transaction()
        try replace.delete(id: "st")
        #expect(throws: StoreError.self) { try replace.insert("Studio", id: "st", values: ["name": .string("Pinewood")]) }
        var staged = store.transaction()
        try staged.delete(id: "st")
        let input = try EnvelopeInput.decode(Array(#"[{"type":"Studio","id":"st","data":{"name":"Pinewood"}}]"#.utf8), schema: store.schema)
        #expect(throws: StoreError.self) { try store.stage(input, mode: .insert, into: &staged) }
        var again = store.transaction()
        try again.insert("Studio", id: "tmp")
        try again.delete(id: "tmp")
        #expect(throws: StoreError.self) { try again.insert("Studio", id: "tmp") }
        store.close()
        let reopened = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(reopened.object(id: "st") != nil && reopened.lastToken == 1)
    }
}
