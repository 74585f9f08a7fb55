import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// `Migrator.migrate(to:)` on the film hierarchy (docs/cli.md, migrate): each lightweight
/// change on a store with history, tombstones, a snapshot image and a
/// journal; then the objects, the history, time travel before and after,
/// the checks, and a reopen from the JSON alone.
@Suite struct MigrationTests {
    static func export(_ store: Store) throws -> String {
        try TimeTravelTests.export(store)
    }

    static func expectCount(_ s: Store, _ predicate: String, _ expected: Int, from: String? = nil,
                            sourceLocation: SourceLocation = #_sourceLocation) throws {
        let n = try s.run(try Query(predicate, from: from)).rows.count
        #expect(n == expected, "\(predicate)", sourceLocation: sourceLocation)
    }

    static func jsonl(_ store: Store) throws -> [String] {
        try store.checkedHistory().map { t in
            var w = JSONWriter()
            t.write(to: &w)
            return w.string
        }
    }

    /// A film store: inserts, an update, a cascading delete (tombstones), a
    /// compaction (snapshot and image), then two commits in the journal.
    static func filmStore(_ name: String) throws -> Store {
        let store = try Store.open(TestFolders.make(name), schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        _ = try tx.insert("Studio", id: "s1", values: ["name": .string("Ealing")])
        _ = try tx.insert("FeatureFilm", id: "f1", values: ["title": .string("Heat"), "screens": .int(900), "runtimeMinutes": .int(170),
                                                           "genre": .string("drama"), "budget": .double(6.0e7)])
        _ = try tx.insert("FeatureFilm", id: "f2", values: ["title": .string("Big"), "screens": .int(9_007_199_254_740_993),
                                                           "runtimeMinutes": .int(104), "genre": .string("comedy")])
        _ = try tx.insert("ShortFilm", id: "sh1", values: ["title": .string("Brief"), "screens": .int(3)])
        _ = try tx.insert("TVSpecial", id: "tv1", values: ["title": .string("Gala"), "network": .string("BBC"), "tags": .array([.string("live")])])
        _ = try tx.insert("Credit", id: "c1", values: ["person": .string("Mann"), "role": .string("director")])
        _ = try tx.insert("Credit", id: "c2", values: ["person": .string("Pacino"), "role": .string("actor")])
        _ = try tx.insert("Credit", id: "c3", values: ["person": .string("Hanks"), "role": .string("actor")])
        try tx.link("f1", "credits", to: "c1")
        try tx.link("f1", "credits", to: "c2")
        try tx.link("f2", "credits", to: "c3")
        try tx.link("f1", "studio", to: "s1")
        try store.commit(tx, author: "a", timestamp: 1000)
        var up = store.transaction()
        try up.set("budget", of: "f2", to: .double(1.8e7))
        try up.set("festival", of: "sh1", to: .string("Cannes"))
        try store.commit(up, author: "b", timestamp: 1001)
        var del = store.transaction()
        try del.delete(id: "f2")  // cascades to c3
        try store.commit(del, author: "c", timestamp: 1002)
        try store.compact()
        var more = store.transaction()
        _ = try more.insert("FeatureFilm", id: "f3", values: ["title": .string("Up"), "screens": .int(4000), "runtimeMinutes": .int(96),
                                                             "genre": .string("animation")])
        try store.commit(more, author: "d", timestamp: 1003)
        var edit = store.transaction()
        try edit.set("runtimeMinutes", of: "f1", to: .int(171))
        try store.commit(edit, author: "e", timestamp: 1004)
        return store
    }

    /// The film schema with `change` made to its descriptions.
    static func film(_ change: (inout [EntityDescription]) -> Void) throws -> Schema {
        var d = FilmSchema.entities
        change(&d)
        return try Schema(d)
    }

    static func attribute(_ d: inout [EntityDescription], _ entity: String, _ name: String, _ change: (inout AttributeDescription) -> Void) {
        guard let e = d.firstIndex(where: { $0.name == entity }), let a = d[e].attributes.firstIndex(where: { $0.name == name }) else {
            Issue.record("no \(entity).\(name)")
            return
        }
        change(&d[e].attributes[a])
    }

    /// One lightweight change: the target schema, the plan line it prints, and what to check afterwards.
    struct Case: CustomTestStringConvertible, Sendable {
        var name: String
        var schema: @Sendable () throws -> Schema
        var step: String
        var check: @Sendable (Store) throws -> Void
        var testDescription: String { name }
    }

    static let cases: [Case] = [
        Case(name: "rename an attribute", schema: {
            try film { d in attribute(&d, "Production", "title") { $0.name = "name"; $0.originalName = "title" } }
        }, step: "rename Production.title -> Production.name", check: { s in
            try expectCount(s, "name == \"Heat\"", 1)
        }),
        Case(name: "rename an entity", schema: {
            try film { d in
                let k = d.firstIndex { $0.name == "Studio" }!
                d[k].name = "Company"
                d[k].originalName = "Studio"
                let p = d.firstIndex { $0.name == "Production" }!
                d[p].relationships[1].destination = "Company"
            }
        }, step: "rename Studio -> Company", check: { s in
            #expect(s.object(id: "s1").map { s.schema.entities[$0.entity].name } == "Company")
            try expectCount(s, "studio.name == \"Ealing\"", 1)
        }),
        Case(name: "rename a relationship", schema: {
            try film { d in
                let p = d.firstIndex { $0.name == "Production" }!
                d[p].relationships[0].name = "people"
                d[p].relationships[0].originalName = "credits"
                let c = d.firstIndex { $0.name == "Credit" }!
                d[c].relationships[0].inverse = "people"
            }
        }, step: "rename Production.credits -> Production.people", check: { s in
            try expectCount(s, "count(people) == 2", 1)
        }),
        Case(name: "add a required attribute with a default", schema: {
            try film { d in
                let k = d.firstIndex { $0.name == "TVSpecial" }!
                d[k].attributes.append(AttributeDescription("region", .string, defaultValue: .string("UK")))
            }
        }, step: "add TVSpecial.region = \"UK\"", check: { s in
            try expectCount(s, "region == \"UK\"", 1, from: "TVSpecial")
        }),
        Case(name: "add an optional attribute", schema: {
            try film { d in d[0].attributes.append(AttributeDescription("tagline", .string, optional: true)) }
        }, step: "add Production.tagline (nil)", check: { s in
            try expectCount(s, "tagline == nil", 4)
        }),
        Case(name: "remove an attribute", schema: {
            try film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        }, step: "remove Production.budget (values kept in history)", check: { s in
            #expect(s.schema.entity(named: "FeatureFilm")?.property(named: "budget") == nil)
        }),
        Case(name: "make a required attribute optional", schema: {
            try film { d in attribute(&d, "TVSpecial", "network") { $0.isOptional = true } }
        }, step: "make TVSpecial.network optional", check: { _ in }),
        Case(name: "make an optional attribute required with a default", schema: {
            try film { d in attribute(&d, "Production", "budget") { $0.isOptional = false; $0.defaultValue = .double(0) } }
        }, step: "make Production.budget required (objects without a value get 0)", check: { s in
            try expectCount(s, "budget == 0", 3)
            try expectCount(s, "budget == 60000000", 1)
        }),
        Case(name: "Int to Double", schema: {
            try film { d in attribute(&d, "TheatricalRelease", "screens") { $0.type = .double } }
        }, step: "convert TheatricalRelease.screens from Int to Double", check: { s in
            try expectCount(s, "screens == 900.0", 1)
        }),
        Case(name: "add an enum case", schema: {
            try film { d in attribute(&d, "FeatureFilm", "genre") { $0.type = .enumeration(EnumDescription("Genre", cases: FilmSchema.genre.cases + ["horror"])) } }
        }, step: "add enum case FeatureFilm.genre \"horror\"", check: { _ in }),
        Case(name: "remove an enum case no object uses", schema: {
            try film { d in attribute(&d, "FeatureFilm", "genre") { $0.type = .enumeration(EnumDescription("Genre", cases: ["drama", "comedy", "animation"])) } }
        }, step: "remove enum case FeatureFilm.genre \"documentary\"", check: { _ in }),
        Case(name: "add an entity and a subclass", schema: {
            try film { d in
                d.append(EntityDescription("Festival", attributes: [AttributeDescription("city", .string)]))
                d.append(EntityDescription("Documentary", parent: "FeatureFilm"))
            }
        }, step: "add entity Documentary (subclass of FeatureFilm)", check: { s in
            #expect(s.schema.entity(named: "Festival") != nil)
        }),
        Case(name: "change an index, preservation and a delete rule", schema: {
            try film { d in
                attribute(&d, "TVSpecial", "network") { $0.options = [.indexed, .preserveOnDeletion] }
                d[0].relationships[0].deleteRule = .nullify
            }
        }, step: "index TVSpecial.network", check: { s in
            try expectCount(s, "network == \"BBC\"", 1)
        }),
    ]

    @Test(arguments: cases)
    func eachLightweightChangeKeepsTheStoreAndItsPast(_ c: Case) throws {
        let store = try Self.filmStore("migrate")
        let before = try Self.export(store)
        let history = try Self.jsonl(store)
        let last = store.lastToken
        let pastBefore = try Self.export(try store.past(at: .token(2)))
        let target = try c.schema()

        let done = try Migrator(store).migrate(to: target, author: "m", timestamp: 2000)
        let s = done.store
        #expect(done.plan.steps.contains(c.step), "\(done.plan.steps)")
        #expect(store.state == .migrated(token: last + 1))
        #expect(s.schema.fingerprint == target.fingerprint)
        #expect(s.checkInvariants().isEmpty)
        try c.check(s)

        // History before the migration is as it was recorded; the migration is one change.
        let after = try Self.jsonl(s)
        #expect(Array(after.dropLast()) == history)
        #expect(after.last?.contains(#""kind":"migrate","from":"\#(FilmSchema.schema.fingerprint)","to":"\#(target.fingerprint)""#) == true)
        // Time travel: before the migration, the store as it was, under the old schema.
        let past = try s.past(at: .token(last))
        #expect(past.schema.fingerprint == FilmSchema.schema.fingerprint)
        #expect(try Self.export(past) == before)
        #expect(try Self.export(try s.past(at: .token(2))) == pastBefore)
        #expect(try Self.export(try s.past(at: .token(last + 1))) == (try Self.export(s)))
        // Every later writer and reader sees the same: from the image, and from the JSON alone.
        let migrated = try Self.export(s)
        s.close()
        let reopened = try Store.open(s.folder, schema: target, access: .read)
        #expect(reopened.loadedFromImage)
        #expect(try Self.export(reopened) == migrated)
        var noImage = StoreOptions()
        noImage.useSnapshotImage = false
        let fromJSON = try Store.open(s.folder, schema: target, access: .read, options: noImage)
        #expect(try Self.export(fromJSON) == migrated)
        #expect(try Store.recordedSchema(in: s.folder)?.fingerprint == target.fingerprint)
        // It still takes writes under the new schema, and still goes back.
        let writer = try Store.open(s.folder, schema: target, access: .write)
        var tx = writer.transaction()
        try tx.set("network", of: "tv1", to: .string("ITV"))
        try writer.commit(tx, author: "z")
        #expect(try Self.export(try writer.past(at: .token(last))) == before)
    }

    /// Record to record (`RecordConversion`) and decoded (`ObjectConversion`
    /// alone): every case's objects come out the same, and most take the first way.
    @Test(arguments: cases)
    func recordsConvertAsDecodedObjectsDo(_ c: Case) throws {
        let store = try Self.filmStore("migrate-records")
        defer { store.close() }
        let target = try c.schema()
        let plan = SchemaMigration(from: store.schema, to: target)
        let table = store.table
        #expect(table.checkEverything())
        let rows = table.rowsSortedByID()
        var newRow = [Int32](repeating: -1, count: table.rowCount)
        for (k, r) in rows.enumerated() { newRow[Int(r)] = Int32(k) }
        let lists = FlatLists(table.lists)
        func converted(_ records: RecordConversion?) -> ObjectTable {
            let part = ObjectConversion.run(rows[...], plan: plan, schema: store.schema, table: table.readView, newRow: newRow,
                                            keepObjects: true, records: records, lists: lists.view)
            if records != nil { #expect(part.converted.filter { $0.entity >= 0 }.count * 2 > part.converted.count, "most record to record") }
            let out = ObjectTable(schema: target)
            part.append(to: out) { _, _ in }
            return out
        }
        let decoded = converted(nil), fast = converted(RecordConversion(plan, from: store.schema))
        #expect(fast.rowCount == decoded.rowCount && fast.rowCount == rows.count)
        for r in 0..<RowID(fast.rowCount) {
            #expect(fast.object(at: r) == decoded.object(at: r), "row \(r)")
        }
    }

    /// An inverse added to a relationship the store has is filled from it
    /// (a changed inverse is a lightweight change); a to-one inverse
    /// that two objects would point back to is refused, and nothing changes.
    @Test func anInverseAddedToARelationshipIsFilledFromIt() throws {
        func boxes(_ inverse: RelationshipDescription?) throws -> Schema {
            var box = EntityDescription("Box", attributes: [AttributeDescription("label", .string)],
                                        relationships: [RelationshipDescription("buddy", to: "Box", inverse: inverse?.name, deleteRule: .nullify)])
            if let inverse { box.relationships.append(inverse) }
            return try Schema([box])
        }
        let v1 = try boxes(nil)
        let store = try Store.open(TestFolders.make("migrate-inverse"), schema: v1, access: .write)
        var tx = store.transaction()
        for id in ["b1", "b2", "b3", "b4"] { _ = try tx.insert("Box", id: id, values: ["label": .string(id)]) }
        try tx.link("b1", "buddy", to: "b2")
        try tx.link("b3", "buddy", to: "b2")
        try tx.link("b4", "buddy", to: "b1")
        try store.commit(tx, author: "a", timestamp: 1000)
        let before = try Self.export(store)

        let toOne = try boxes(RelationshipDescription("fan", to: "Box", inverse: "buddy", deleteRule: .nullify))
        #expect(try Migrator(store).plan(to: toOne).problems == ["add Box.fan as the inverse of Box.buddy: objects more than one object points at (1 object, first 'b2')"],
                "the dry run lists it too")
        do {
            _ = try Migrator(store).migrate(to: toOne, author: "m", timestamp: 2000)
            Issue.record("a to-one inverse pointed back to twice was taken")
        } catch StoreError.migrationRefused(let problems) {
            #expect(problems == ["add Box.fan as the inverse of Box.buddy: objects more than one object points at (1 object, first 'b2')"])
        }
        #expect(try Self.export(store) == before, "nothing changed")

        // A relationship made its own inverse, which the objects do not mirror: refused too, not damage.
        var own = v1.descriptions
        own[0].relationships[0].inverse = "buddy"
        #expect(!(try Migrator(store).plan(to: try Schema(own)).problems.isEmpty), "the dry run refuses it too")
        do {
            _ = try Migrator(store).migrate(to: try Schema(own), author: "m", timestamp: 2000)
            Issue.record("a relationship made its own inverse was taken though the objects do not mirror it")
        } catch StoreError.migrationRefused(let problems) {
            #expect(!problems.isEmpty)
        }
        #expect(try Self.export(store) == before, "nothing changed")

        let toMany = try boxes(RelationshipDescription("fans", to: "Box", toMany: true, inverse: "buddy", deleteRule: .nullify))
        let done = try Migrator(store).migrate(to: toMany, author: "m", timestamp: 2000)
        #expect(done.plan.steps.contains("add Box.fans (filled from Box.buddy)"), "\(done.plan.steps)")
        let s = done.store
        defer { s.close() }
        #expect(s.checkInvariants().isEmpty)
        func fans(_ st: Store, _ id: String) throws -> [String] {
            let e = try #require(st.schema.entity(named: "Box"))
            let slot = try #require(e.property(named: "fans")).slot
            let row = try #require(st.table.sortedRow(for: id))
            return st.table.value(at: row, slot: slot).rows.compactMap { st.table.id(at: $0) }
        }
        #expect(try fans(s, "b2") == ["b1", "b3"])
        #expect(try fans(s, "b1") == ["b4"])
        #expect(try fans(s, "b3") == [])
        s.close()
        let reopened = try Store.open(s.folder, schema: toMany, access: .read)
        defer { reopened.close() }
        #expect(try fans(reopened, "b2") == ["b1", "b3"])
        #expect(reopened.checkInvariants().isEmpty)
    }

    @Test func theMigrationKeepsRemovedValuesAndLossyIntegersForTheWayBack() throws {
        let store = try Self.filmStore("kept")
        let target = try Self.film { d in
            d[0].attributes.removeAll { $0.name == "budget" }
            Self.attribute(&d, "TheatricalRelease", "screens") { $0.type = .double }
        }
        let done = try Migrator(store).migrate(to: target, author: "m")
        guard let m = done.transaction.changes.first?.migration else {
            Issue.record("no migrate change")
            return
        }
        // f1's budget, and f2 is gone; 2^53 + 1 screens would not survive as a Double.
        #expect(m.oldValues.map(\.key) == ["f1"])
        #expect(m.oldValues.first?.value["budget"] == .int(60_000_000))  // JSON: a whole number reads as one
        let big = try Store.open(TestFolders.make("big"), schema: FilmSchema.schema, access: .write)
        var tx = big.transaction()
        _ = try tx.insert("ShortFilm", id: "x", values: ["title": .string("t"), "screens": .int(9_007_199_254_740_993)])
        try big.commit(tx, author: "a")
        let moved = try Migrator(big).migrate(to: target, author: "m")
        #expect(moved.transaction.changes.first?.migration?.oldValues.first?.value["screens"] == .int(9_007_199_254_740_993))
        let past = try moved.store.past(at: .token(1))
        #expect(past.object(id: "x")?.values[past.schema.entity(named: "ShortFilm")!.property(named: "screens")!.slot] == .int(9_007_199_254_740_993))
    }

    @Test func everyRefusedChangeIsListedAtOnceAndNothingChanges() throws {
        let store = try Self.filmStore("refused")
        // The compaction's old files are removed on a thread of their own: list the folder once that is done.
        store.settleFileRemoval()
        let files = try FileManager.default.contentsOfDirectory(atPath: store.folder).sorted()
        let bytes = try files.map { try Data(contentsOf: URL(fileURLWithPath: store.folder + "/" + $0)) }
        let target = try Self.film { d in
            Self.attribute(&d, "TVSpecial", "network") { $0.type = .int }                        // a type change
            Self.attribute(&d, "FeatureFilm", "genre") { $0.type = .enumeration(EnumDescription("Genre", cases: ["comedy", "animation"])) }  // drama in use
            Self.attribute(&d, "ShortFilm", "festival") { $0.isOptional = false }                // no default, nothing to fill f... sh1 has one
            Self.attribute(&d, "Production", "budget") { $0.isOptional = false }                 // nil in f3, no default
            d.removeAll { $0.name == "Studio" }                                                   // it has s1
            d[0].relationships.removeAll { $0.name == "studio" }
            d.append(EntityDescription("Award", attributes: [AttributeDescription("year", .int)]))
            let k = d.firstIndex { $0.name == "Credit" }!
            d[k].attributes.append(AttributeDescription("fee", .double))                          // required, no default
            let t = d.firstIndex { $0.name == "ShortFilm" }!
            d[t].parent = "Production"                                                            // another parent
        }
        #expect {
            _ = try Migrator(store).migrate(to: target, author: "m")
        } throws: { error in
            guard case StoreError.migrationRefused(let problems) = error else { return false }
            let text = problems.joined(separator: "\n")
            for expected in ["TVSpecial.network changes type from String to Int",
                             "remove enum case FeatureFilm.genre \"drama\": objects use it (1 object, first 'f1')",
                             "make Production.budget required: objects have no value for it and it has no \"default\"",
                             "remove entity Studio: objects of it are in the store (1 object, first 's1')",
                             "add Credit.fee: it is required and has no \"default\"",
                             "entity 'ShortFilm' changes its parent from TheatricalRelease to Production"] {
                #expect(text.contains(expected), "missing: \(expected)\nin: \(text)")
            }
            return true
        }
        #expect(store.state == .writing)
        #expect(try FileManager.default.contentsOfDirectory(atPath: store.folder).sorted() == files)
        #expect(try files.map { try Data(contentsOf: URL(fileURLWithPath: store.folder + "/" + $0)) } == bytes)
        // The store still works as it was.
        var tx = store.transaction()
        try tx.set("network", of: "tv1", to: .string("ITV"))
        try store.commit(tx, author: "z")
    }

    @Test func aRelationshipTargetThatReferencesWouldViolateIsRefused() throws {
        let store = try Self.filmStore("target")
        let target = try Self.film { d in
            let c = d.firstIndex { $0.name == "Credit" }!
            d[c].relationships[0].destination = "TVSpecial"
            d[c].relationships[0].inverse = nil
            d[0].relationships[0].inverse = nil
        }
        #expect {
            _ = try Migrator(store).migrate(to: target, author: "m")
        } throws: { error in
            guard case StoreError.migrationRefused(let problems) = error else { return false }
            return problems.contains { $0.hasPrefix("point Credit.production at TVSpecial: objects refer to a FeatureFilm") }
        }
    }

    @Test func twoMigrationsInARowTravelBackThroughBoth() throws {
        let store = try Self.filmStore("chain")
        let before = try Self.export(store)
        let v2 = try Self.film { d in Self.attribute(&d, "Production", "title") { $0.name = "name"; $0.originalName = "title" } }
        let first = try Migrator(store).migrate(to: v2, author: "m").store
        var tx = first.transaction()
        try tx.set("name", of: "f1", to: .string("Heat (1995)"))
        try first.commit(tx, author: "e")
        let middle = try Self.export(first)
        var d3 = v2.descriptions
        d3[0].attributes.removeAll { $0.name == "budget" }
        let k = d3.firstIndex { $0.name == "Studio" }!
        d3[k].name = "Company"
        d3[k].originalName = "Studio"
        d3[0].relationships[1].destination = "Company"
        let second = try Migrator(first).migrate(to: try Schema(d3), author: "m").store
        #expect(try Self.export(try second.past(at: .token(5))) == before)
        #expect(try Self.export(try second.past(at: .token(7))) == middle)
        // The change feed carries both, and a standby made from it ends equal.
        let feed = try second.history(after: 0).map { t -> JSONValue in
            let envelopes = try second.insertEnvelopes(after: t.token - 1, wanted: [t.token])
            var w = JSONWriter()
            t.write(to: &w, envelopes: envelopes[t.token], deletedValues: true)
            return try JSONReader.parse(w.bytes)
        }
        var standby = try Store.open(TestFolders.make("standby"), schema: FilmSchema.schema, access: .write)
        for (k, line) in feed.enumerated() { standby = try FeedApplier(standby).apply(line, line: k + 1).store }
        #expect(try Self.export(standby) == (try Self.export(second)))
        #expect(try Self.jsonl(standby) == (try Self.jsonl(second)))
        #expect(try Self.export(try standby.past(at: .token(5))) == before)
    }

    /// The value a migration replaced takes no write of any kind; the store it returned does.
    @Test func theStoreBeforeTheMigrationRefusesEveryWrite() throws {
        let store = try Self.filmStore("replaced")
        let target = try Self.film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        let done = try Migrator(store).migrate(to: target, author: "m")
        #expect { try store.compact() } throws: { e in
            guard case StoreError.notWritable(.compact, let state) = e else { return false }
            return state == .migrated(token: done.transaction.token)
        }
        #expect(throws: StoreError.self) { _ = try Migrator(store).migrate(to: FilmSchema.schema, author: "m") }
        #expect(throws: StoreError.self) { try Migrator(store).recordVersion(of: target) }
        var tx = done.store.transaction()
        try tx.set("network", of: "tv1", to: .string("ITV"))
        try done.store.commit(tx, author: "z")
    }

    @Test func anEntityWithoutObjectsCanGo() throws {
        let store = try Self.filmStore("entity")
        let withFestival = try Self.film { d in d.append(EntityDescription("Festival", attributes: [AttributeDescription("city", .string)])) }
        let s = try Migrator(store).migrate(to: withFestival, author: "m").store
        let done = try Migrator(s).migrate(to: FilmSchema.schema, author: "m")
        #expect(done.plan.steps == ["remove entity Festival"])
        #expect(try Self.export(try done.store.past(at: .token(6))) == (try Self.export(done.store)))
    }

    @Test func aRedactionAlsoRemovesWhatAMigrationKept() throws {
        let store = try Self.filmStore("redact")
        let target = try Self.film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        let s = try Migrator(store).migrate(to: target, author: "m").store
        try Redactor(s).redact(ids: ["f1"], author: "r")
        let m = try s.checkedHistory().compactMap { $0.changes.first?.migration }.first
        #expect(m?.oldValues.first { $0.key == "f1" }?.value["budget"] == nil)
        let text = try String(contentsOfFile: s.folder + "/snapshot-\(s.snapshotToken).jsonl", encoding: .utf8)
        #expect(!text.contains("60000000"))
    }

    @Test func aMigrationCutBeforeItsSchemaRecordIsFinishedByTheNextWriter() throws {
        let store = try Self.filmStore("pending")
        let folder = store.folder
        let target = try Self.film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        let oldRecord = try Data(contentsOf: URL(fileURLWithPath: folder + "/schema.json"))
        let migrated = try Self.export(try Migrator(store).migrate(to: target, author: "m").store)
        // As a crash after the snapshot's rename leaves it: the new record still pending.
        let newRecord = try Data(contentsOf: URL(fileURLWithPath: folder + "/schema.json"))
        try newRecord.write(to: URL(fileURLWithPath: folder + "/schema-next.json"))
        try oldRecord.write(to: URL(fileURLWithPath: folder + "/schema.json"))
        #expect(try Store.recordedSchema(in: folder)?.fingerprint == target.fingerprint)
        #expect(try Self.export(try Store.open(folder, schema: target, access: .read)) == migrated)
        let writer = try Store.open(folder, schema: target, access: .write)
        #expect(!FileManager.default.fileExists(atPath: folder + "/schema-next.json"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: folder + "/schema.json")) == newRecord)
        writer.close()
        // A pending record whose snapshot never came is left over: ignored, then removed.
        try oldRecord.write(to: URL(fileURLWithPath: folder + "/schema-next.json"))
        #expect(try Store.recordedSchema(in: folder)?.fingerprint == target.fingerprint)
        _ = try Store.open(folder, schema: target, access: .write)
        #expect(!FileManager.default.fileExists(atPath: folder + "/schema-next.json"))
    }

    @Test func anOriginalNameThatNamesNothingOrClashesIsRefused() throws {
        let store = try Self.filmStore("names")
        let typo = try Self.film { d in Self.attribute(&d, "Production", "title") { $0.name = "name"; $0.originalName = "titel" } }
        #expect(try Migrator(store).plan(to: typo).problems.contains("Production.name: its originalName 'titel' names no property that Production declares in the store's schema"))
        let clash = try Self.film { d in
            d[0].attributes.removeAll { $0.name == "budget" }
            Self.attribute(&d, "Production", "title") { $0.name = "budget"; $0.originalName = "title"; $0.type = .string }
        }
        #expect(try Migrator(store).plan(to: clash).problems.contains { $0.hasPrefix("Production.budget: renamed from 'title', but the store's Production.budget would be removed") })
        let entity = try Self.film { d in
            let k = d.firstIndex { $0.name == "Studio" }!
            d[k].name = "Company"
            d[k].originalName = "Studoi"
            d[0].relationships[1].destination = "Company"
        }
        #expect(try Migrator(store).plan(to: entity).problems.contains("entity 'Company': its originalName 'Studoi' names no entity of the store's schema"))
        // Renaming an enum's type is a change of its own, with a line.
        let renamedEnum = try Self.film { d in Self.attribute(&d, "FeatureFilm", "genre") { $0.type = .enumeration(EnumDescription("Kind", cases: FilmSchema.genre.cases)) } }
        #expect(try Migrator(store).plan(to: renamedEnum).steps == ["rename the enum of FeatureFilm.genre from Genre to Kind"])
    }

    @Test func aFailureAfterTheSnapshotLeavesTheMigrationCommittedForTheNextWriter() throws {
        let store = try Self.filmStore("late")
        let folder = store.folder
        let target = try Self.film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        // Something in the way of the last rename: a folder where schema.json belongs.
        let record = folder + "/schema.json"
        let saved = try Data(contentsOf: URL(fileURLWithPath: record))
        try FileManager.default.removeItem(atPath: record)
        try FileManager.default.createDirectory(atPath: record + "/blocked", withIntermediateDirectories: true)
        let done = try Migrator(store).migrate(to: target, author: "m")
        #expect(done.store.warnings.contains { if case .migrationUnfinished = $0 { return true } else { return false } })
        guard case .broken = done.store.state else { Issue.record("\(done.store.state)"); return }
        let migrated = try Self.export(done.store)
        done.store.close()
        try FileManager.default.removeItem(atPath: record)
        #expect(try Store.recordedSchema(in: folder)?.fingerprint == target.fingerprint)
        let writer = try Store.open(folder, schema: target, access: .write)
        #expect(try Self.export(writer) == migrated)
        #expect(!FileManager.default.fileExists(atPath: folder + "/schema-next.json"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: record)) != saved)
    }

    @Test func historyTypesAndRedactionsFollowRenames() throws {
        let store = try Self.filmStore("renamed")
        let target = try Self.film { d in
            let k = d.firstIndex { $0.name == "TVSpecial" }!
            d[k].name = "Broadcast"
            d[k].originalName = "TVSpecial"
            Self.attribute(&d, "Broadcast", "network") { $0.name = "channel"; $0.originalName = "network" }
        }
        var tx = store.transaction()
        try tx.delete(id: "tv1")
        try store.commit(tx, author: "d")
        let s = try Migrator(store).migrate(to: target, author: "m").store
        // One entity, two names: a filter by either reaches both.
        let names = try s.historyTypeNames("Broadcast")
        #expect(names?.contains("TVSpecial", at: 5) == true && names?.contains("Broadcast", at: 7) == true)
        #expect(names?.contains("Broadcast", at: 5) == false && names?.contains("TVSpecial", at: 7) == false)
        #expect(try s.historyTypeNames("TVSpecial") == names)
        #expect(try s.historyTypeNames("Production")?.allNames.isSuperset(of: ["TVSpecial", "Broadcast", "FeatureFilm"]) == true)
        #expect(try s.historyTypeNames("Nothing") == nil)
        // A deleted object's last state is read with today's names.
        #expect(try Redactor(s).idsMatching(try Query("channel == \"BBC\"", from: "Broadcast")) == ["tv1"])
    }

    /// The record may drop the original names once a migration is done (a
    /// new version of the same shape): history still knows where each came from.
    @Test func aRecordWithoutOriginalNamesStillTravelsBack() throws {
        let store = try Self.filmStore("hints")
        let before = try Self.export(store)
        let target = try Self.film { d in
            let k = d.firstIndex { $0.name == "Studio" }!
            d[k].name = "Company"
            d[k].originalName = "Studio"
            d[0].relationships[1].destination = "Company"
        }
        let s = try Migrator(store).migrate(to: target, author: "m").store
        var plain = target.descriptions
        for k in plain.indices { plain[k].originalName = nil }
        #expect(try Migrator(s).recordVersion(of: try Schema(plain, version: "2.1")))
        s.close()
        let reopened = try Store.open(s.folder, schema: try #require(try Store.recordedSchema(in: s.folder)), access: .read)
        #expect(reopened.schema.version == "2.1")
        #expect(try Self.export(try reopened.past(at: .token(5))) == before)
        #expect(try reopened.historyTypeNames("Company")?.contains("Studio", at: 1) == true)
    }

    @Test func aStoreOpenedWithMoreThanItRecordsStillTravelsBack() throws {
        let store = try Self.filmStore("superset")
        let before = try Self.export(store)
        let target = try Self.film { d in d[0].attributes.removeAll { $0.name == "budget" } }
        let folder = try Migrator(store).migrate(to: target, author: "m").store.folder
        // The film schema is the migrated one plus `budget`: additions only, so it opens.
        let wider = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(try Self.export(try wider.past(at: .token(5))) == before)
        #expect(try wider.insertEnvelopes(after: 0, wanted: [1])[1]?["f1"]?["data"]?["budget"] == .int(60_000_000))
    }

    @Test func schemaFilesCarryVersionsOriginalNamesAndDefaults() throws {
        let ok = #"{"version": "2.1", "entities": [{"name": "A", "originalName": "Old", "attributes": [{"name": "n", "originalName": "m", "type": "int", "default": 3}], "relationships": []}]}"#
        let s = try SchemaFile.read(Array(ok.utf8))
        #expect(s.version == "2.1")
        #expect(s.entities[0].originalName == "Old")
        #expect(s.descriptions[0].attributes[0].defaultValue == .int(3))
        // Round trip, and the fingerprint is the shape's only.
        #expect(try SchemaFile.read(SchemaFile.bytes(s, pretty: true)).descriptions == s.descriptions)
        #expect(try Schema([EntityDescription("A", attributes: [AttributeDescription("n", .int)])]).fingerprint == s.fingerprint)
        let bad: [(String, String)] = [
            (#"{"entities": [{"name": "A", "attributes": [{"name": "n", "type": "int", "default": "x"}]}]}"#,
             "attribute 'A.n': its default is not a value of its type"),
            (#"{"entities": [{"name": "A", "attributes": [{"name": "n", "type": "int", "default": 1.5}]}]}"#,
             "attribute 'A.n': its default is not a value of its type"),
            (#"{"entities": [{"name": "A", "attributes": [{"name": "n", "type": "int", "originalName": 7}]}]}"#,
             "entity 'A', attribute 'n': \"originalName\" must be"),
            (#"{"version": 2, "entities": [{"name": "A"}]}"#, "\"version\" must be a string"),
            (#"{"entities": [{"name": "A", "originalName": "1x"}]}"#, "'1x' is not a valid name"),
        ]
        for (text, message) in bad {
            #expect { _ = try SchemaFile.read(Array(text.utf8)) } throws: { error in
                "\(error)".contains(message) || { Issue.record("\(error) does not say \(message)"); return true }()
            }
        }
    }
}
