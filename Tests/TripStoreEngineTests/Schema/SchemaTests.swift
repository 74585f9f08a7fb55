import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct SchemaTests {
    let schema = FilmSchema.schema

    func names(_ ids: [Int]) -> [String] { ids.map { schema.entities[$0].name } }

    @Test func subclassClosureCoversEveryDepth() throws {
        #expect(names(schema.entity(named: "Production")!.closure)
                == ["Production", "TheatricalRelease", "FeatureFilm", "ShortFilm", "TVSpecial"])
        #expect(names(schema.entity(named: "TheatricalRelease")!.closure) == ["TheatricalRelease", "FeatureFilm", "ShortFilm"])
        #expect(names(schema.entity(named: "FeatureFilm")!.closure) == ["FeatureFilm"])
        #expect(schema.entity(named: "FeatureFilm")!.root == schema.entity(named: "Production")!.id)
    }

    @Test func inheritedPropertiesKeepTheirSlots() throws {
        let film = try #require(schema.entity(named: "FeatureFilm"))
        let tv = try #require(schema.entity(named: "TVSpecial"))
        #expect(film.properties.map(\.name) == ["title", "budget", "released", "credits", "studio", "screens", "runtimeMinutes", "genre"])
        #expect(film.property(named: "title")!.slot == tv.property(named: "title")!.slot)
        #expect(film.property(named: "studio")!.slot == tv.property(named: "studio")!.slot)
        #expect(tv.property(named: "screens") == nil)
    }

    @Test func fingerprintIsStableAndIgnoresDeclarationOrder() throws {
        let again = try Schema(FilmSchema.entities)
        let reordered = try Schema(FilmSchema.entities.reversed())
        #expect(again.fingerprint == schema.fingerprint)
        #expect(reordered.fingerprint == schema.fingerprint)
        var changed = FilmSchema.entities
        changed[0].attributes.append(AttributeDescription("tagline", .string, optional: true))
        #expect(try Schema(changed).fingerprint != schema.fingerprint)
        #expect(TripSchema.schema.fingerprint == (try Schema(TripSchema.schema.descriptions)).fingerprint)
        #expect(TripSchema.schema.fingerprint == "c42eae4d14c0190f")
    }

    @Test func schemaJSONRoundTrips() throws {
        var w = JSONWriter()
        SchemaCoding.write(FilmSchema.entities, to: &w)
        #expect(SchemaCoding.read(try JSONReader.parse(w.bytes)) == FilmSchema.entities)
    }

    @Test(arguments: [
        ([EntityDescription("A"), EntityDescription("A")], "entity 'A' is declared twice"),
        ([EntityDescription("A", parent: "Nope")], "entity 'A' names parent 'Nope', which is not in the schema"),
        ([EntityDescription("A", parent: "B"), EntityDescription("B", parent: "A")], "entity 'A' is its own ancestor"),
        ([EntityDescription("A", attributes: [AttributeDescription("x", .int)]),
          EntityDescription("B", parent: "A", attributes: [AttributeDescription("x", .string)])],
         "entity 'B' has property 'x' twice (declared again or inherited)"),
        ([EntityDescription("A", relationships: [RelationshipDescription("b", to: "B")])],
         "relationship 'A.b' points at 'B', which is not in the schema"),
        ([EntityDescription("A", relationships: [RelationshipDescription("b", to: "B", inverse: "a")]), EntityDescription("B")],
         "relationship 'A.b' names inverse 'a', but 'B' has no relationship of that name"),
        ([EntityDescription("A", relationships: [RelationshipDescription("b", to: "B", inverse: "c")]),
          EntityDescription("B", relationships: [RelationshipDescription("c", to: "C")]), EntityDescription("C")],
         "relationship 'A.b': its inverse 'B.c' points at 'C', not at 'A'"),
        ([EntityDescription("A", attributes: [AttributeDescription("e", .enumeration(EnumDescription("E", cases: [])))])],
         "enum attribute 'A.e' has no cases"),
        ([EntityDescription("1A")], "entity '1A' is not a valid name (ASCII letters, digits and '_', not starting with a digit)"),
    ])
    func invalidSchemasAreRejected(_ entities: [EntityDescription], _ message: String) {
        do {
            _ = try Schema(entities)
            Issue.record("expected: \(message)")
        } catch {
            #expect(error.description == message)
        }
    }

    @Test func additiveChangesAreCompatible() {
        var added = FilmSchema.entities
        added.append(EntityDescription("Documentary", parent: "FeatureFilm"))
        added[0].attributes.append(AttributeDescription("tagline", .string, optional: true))
        added[5].attributes[0].options.insert(.indexed)
        #expect(SchemaCompatibility.differences(stored: FilmSchema.entities, current: added).isEmpty)

        var broken = FilmSchema.entities
        broken[0].attributes.removeFirst()
        broken[5].attributes.append(AttributeDescription("fee", .double))
        #expect(SchemaCompatibility.differences(stored: FilmSchema.entities, current: broken) == [
            "attribute 'Production.title' was removed",
            "attribute 'Credit.fee' is new and required (a new attribute must be optional)",
        ])
    }
}
