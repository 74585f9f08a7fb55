import Foundation
import Testing
import TripStoreEngine

// Three versions of one app's models, as SwiftData's versioned schemas nest them.

enum PeopleV1 {
    final class Person: PersistentModel {
        @Attribute var name = ""
        required init() { super.init() }
        init(name: String) {
            self.name = name
            super.init()
        }
        override class var properties: [ModelProperty] { [.attribute("name", \Person.name)] }
    }
    static let models = try! ModelSchema([Person.self], version: "1.0.0")
}

enum PeopleV2 {
    final class Person: PersistentModel {
        @Attribute var name = ""
        @Attribute var first: String?
        @Attribute var last: String?
        required init() { super.init() }
        override class var properties: [ModelProperty] {
            [.attribute("name", \Person.name), .attribute("first", \Person.first), .attribute("last", \Person.last)]
        }
    }
    static let models = try! ModelSchema([Person.self], version: "2.0.0")
}

enum PeopleV3 {
    final class Person: PersistentModel {
        @Attribute var givenName = ""
        @Attribute var familyName = ""
        required init() { super.init() }
        override class var properties: [ModelProperty] {
            [.attribute("givenName", \Person.givenName, originalName: "first", defaultValue: ""),
             .attribute("familyName", \Person.familyName, originalName: "last", defaultValue: "")]
        }
    }
    static let models = try! ModelSchema([Person.self], version: "3.0.0")
}

/// A version of V1 with `name` renamed, and nothing else: a lightweight change.
enum PeopleV1Renamed {
    final class Person: PersistentModel {
        @Attribute var fullName = ""
        required init() { super.init() }
        override class var properties: [ModelProperty] { [.attribute("fullName", \Person.fullName, originalName: "name")] }
    }
    static let models = try! ModelSchema([Person.self], version: "1.1.0")
}

/// `fullName` as a number: a type change no migration makes.
enum PeopleNumbered {
    final class Person: PersistentModel {
        @Attribute var fullName = 0
        required init() { super.init() }
        override class var properties: [ModelProperty] { [.attribute("fullName", \Person.fullName)] }
    }
    static let models = try! ModelSchema([Person.self], version: "1.2.0")
}

/// `ModelContainer(folder:models:migrationPlan:)` (docs/cli.md, migrate).
@Suite struct MigrationPlanTests {
    func v1Store(_ name: String) throws -> String {
        let folder = TestFolders.make(name)
        try {
            let container = try ModelContainer(folder: folder, models: PeopleV1.models)
            let context = ModelContext(container)
            context.insert(PeopleV1.Person(name: "Ada Lovelace"))
            context.insert(PeopleV1.Person(name: "Grace Brewster Hopper"))
            try context.save(author: "app")
            container.store.close()
        }()
        return folder
    }

    static let plan = MigrationPlan([
        .lightweight(from: PeopleV1.models, to: PeopleV2.models),
        .custom(from: PeopleV2.models, to: PeopleV3.models, willMigrate: { old in
            // The custom stage splits one attribute into two before `name` goes.
            for p in try old.fetch(FetchDescriptor<PeopleV2.Person>()) {
                let parts = p.name.split(separator: " ")
                p.first = parts.dropLast().joined(separator: " ")
                p.last = parts.last.map(String.init)
            }
        }),
    ])

    @Test func aTwoStagePlanWithACustomStageSplitsAnAttributeInTwo() throws {
        let folder = try v1Store("plan")
        let container = try ModelContainer(folder: folder, models: PeopleV3.models, migrationPlan: Self.plan)
        let people = try ModelContext(container).fetch(FetchDescriptor<PeopleV3.Person>(sortBy: [SortDescriptor(\.familyName)]))
        #expect(people.map(\.givenName) == ["Grace Brewster", "Ada"])
        #expect(people.map(\.familyName) == ["Hopper", "Lovelace"])
        let history = container.store.history
        #expect(history.map { $0.changes.first?.kind } == [.insert, .migrate, .update, .migrate])
        #expect(history.last?.changes.first?.migration?.steps == [
            "rename Person.first -> Person.givenName", "make Person.givenName required (objects without a value get \"\")",
            "rename Person.last -> Person.familyName", "make Person.familyName required (objects without a value get \"\")",
            "remove Person.name (values kept in history)"])
        #expect(container.store.schema.version == "3.0.0")
        // Before the plan, the store answers as version 1 did.
        let past = try container.store.past(at: .token(1))
        #expect(past.schema.version == "1.0.0")
        #expect(past.objectCount == 2)
        container.store.close()
        // Opening it again has nothing to do.
        let again = try ModelContainer(folder: folder, models: PeopleV3.models, migrationPlan: Self.plan)
        #expect(again.store.history.count == 4)
        again.store.close()
    }

    @Test func aStoreOfALaterVersionIsRefusedNamingBoth() throws {
        let folder = try v1Store("newer")
        try ModelContainer(folder: folder, models: PeopleV3.models, migrationPlan: Self.plan).store.close()
        #expect {
            _ = try ModelContainer(folder: folder, models: PeopleV2.models)
        } throws: { error in
            guard case StoreError.newerSchema(let store, let program) = error else { return false }
            return store == "3.0.0" && program == "2.0.0"
                && "\(error)".contains("version 3.0.0, newer than this program's version 2.0.0")
        }
    }

    @Test func withoutAPlanAStoreOfAnEarlierSchemaMigratesLightweightChanges() throws {
        let folder = try v1Store("lightweight")
        let container = try ModelContainer(folder: folder, models: PeopleV1Renamed.models)
        let names = try ModelContext(container).fetch(FetchDescriptor<PeopleV1Renamed.Person>()).map(\.fullName).sorted()
        #expect(names == ["Ada Lovelace", "Grace Brewster Hopper"])
        #expect(container.store.history.last?.author == "migration")
        container.store.close()
        // A change a lightweight migration cannot make is refused, naming it; the store stays as it was.
        #expect {
            _ = try ModelContainer(folder: folder, models: PeopleNumbered.models)
        } throws: { error in
            guard case StoreError.migrationRefused(let problems) = error else { return false }
            return problems == ["Person.fullName changes type from String to Int"]
        }
        #expect(try Store.recordedSchema(in: folder)?.version == "1.1.0")
    }
}
