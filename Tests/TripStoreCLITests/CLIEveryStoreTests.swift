import Foundation
import Testing
@testable import TripStoreCLI
import TripStoreEngine
import TripStoreFormat

// The command line serves a store made through the library with the store's
// own schema: the film hierarchy, any depth, its own root type.

class Production: PersistentModel {
    @Attribute var title = ""
    @Attribute var budget: Double?
    required init() { super.init() }
    init(title: String) {
        self.title = title
        super.init()
    }
    override class var properties: [ModelProperty] {
        [.attribute("title", \Production.title, options: [.preserveOnDeletion, .indexed]),
         .attribute("budget", \Production.budget)]
    }
}

class TheatricalRelease: Production {
    @Attribute var screens = 0
    override class var properties: [ModelProperty] { [.attribute("screens", \TheatricalRelease.screens)] }
}

final class FeatureFilm: TheatricalRelease {
    @Attribute var runtimeMinutes = 0
    override class var properties: [ModelProperty] { [.attribute("runtimeMinutes", \FeatureFilm.runtimeMinutes)] }
}

final class ShortFilm: TheatricalRelease {
    @Attribute var festival: String?
    override class var properties: [ModelProperty] { [.attribute("festival", \ShortFilm.festival)] }
}

final class TVSpecial: Production {
    @Attribute var network = ""
    override class var properties: [ModelProperty] { [.attribute("network", \TVSpecial.network)] }
}

@Suite struct CLIEveryStoreTests {
    static let models = try! ModelSchema([Production.self, TheatricalRelease.self, FeatureFilm.self, ShortFilm.self, TVSpecial.self])

    /// A film store written by the library: five productions, one deleted.
    func makeFilmStore() throws -> String {
        let folder = CLIRunner.scratch()
        let context = ModelContext(try ModelContainer(folder: folder, models: Self.models))
        let epic = FeatureFilm(title: "Epic")
        epic.runtimeMinutes = 150
        epic.screens = 900
        let brief = FeatureFilm(title: "Brief")
        brief.runtimeMinutes = 80
        let short = ShortFilm(title: "Short")
        short.festival = "Clermont"
        let release = TheatricalRelease(title: "Plain release")
        let special = TVSpecial(title: "Gala")
        special.network = "BBC"
        for m in [epic, brief, short, release, special] as [Production] { context.insert(m) }
        try context.save(author: "studio")
        context.delete(short)
        try context.save(author: "auditor")
        return folder
    }

    func run(_ args: [String], _ folder: String) -> CLIRunner.Result { CLIRunner.run(args, store: folder) }

    @Test func aLibraryStoreIsQueriedWithItsOwnSchema() throws {
        let folder = try makeFilmStore()
        // Only the journal and the schema record: no snapshot yet.
        let files = try FileManager.default.contentsOfDirectory(atPath: folder).sorted()
        #expect(files == ["journal-0.jsonl", "schema.json", "tripstore.lock"])

        let count = run(["query", "--count"], folder)
        #expect(count.code == 0, "\(count.err)")
        #expect(count.out == "4\n")  // --from defaults to the store's first root, Production
        let deep = run(["query", "is TheatricalRelease", "--sort", "title", "--format", "csv", "--fields", "title"], folder)
        #expect(deep.out == "id,title\n" + ["Brief", "Epic", "Plain release"].map { "\(idOf($0, folder)),\($0)" }.joined(separator: "\n") + "\n")
        let exact = run(["query", "is exactly TheatricalRelease", "--fields", "title", "--format", "csv"], folder)
        #expect(exact.out.hasSuffix(",Plain release\n") && exact.out.split(separator: "\n").count == 2)
        let subclass = run(["query", "--from", "FeatureFilm", "runtimeMinutes > 100", "--fields", "title", "--format", "csv"], folder)
        #expect(subclass.out.hasSuffix(",Epic\n") && subclass.out.split(separator: "\n").count == 2)
        let get = run(["get", idOf("Gala", folder)], folder)
        #expect(get.code == 0 && get.out.contains(#""network": "BBC""#))
        #expect(run(["stats"], folder).out.contains("FeatureFilm"))
        #expect(run(["verify"], folder).code == 0)
    }

    @Test func itsHistoryAndTombstonesAreAudited() throws {
        let folder = try makeFilmStore()
        let deletes = run(["history", "--deletes", "--format", "jsonl"], folder)
        #expect(deletes.code == 0)
        let lines = deletes.out.split(separator: "\n")
        #expect(lines.count == 1)
        #expect(lines[0].contains(#""author":"auditor""#))
        #expect(lines[0].contains(#""type":"ShortFilm""#) && lines[0].contains(#""tombstone":{"title":"Short"}"#))
        let deep = run(["history", "--type", "TheatricalRelease", "--kind", "insert", "--format", "jsonl"], folder)
        #expect(deep.out.components(separatedBy: #""kind":"insert""#).count - 1 == 4)
    }

    @Test func itsExportImportsIntoAStoreMadeWithItsSchemaFile() throws {
        let folder = try makeFilmStore()
        let schemaJSON = run(["schema", "--format", "json"], folder)
        #expect(schemaJSON.code == 0)
        #expect(schemaJSON.out.contains(#""name": "FeatureFilm""#) && schemaJSON.out.contains(#""parent": "TheatricalRelease""#))
        let text = run(["schema"], folder)
        #expect(text.out.hasPrefix("Production\n  title: String  [preserved on deletion, indexed]\n"))
        let export = run(["export"], folder)
        #expect(export.code == 0)

        let schemaFile = CLIRunner.scratch() + "/films.schema.json"
        let exportFile = CLIRunner.scratch() + "/films.json"
        try schemaJSON.out.write(toFile: schemaFile, atomically: false, encoding: .utf8)
        try export.out.write(toFile: exportFile, atomically: false, encoding: .utf8)
        let copy = CLIRunner.scratch() + "/copy"
        let imported = CLIRunner.run(["--schema", schemaFile, "import", exportFile], store: copy)
        #expect(imported.code == 0, "\(imported.err)")
        #expect(imported.out.hasPrefix("inserted 4 objects (FeatureFilm 2, TVSpecial 1, TheatricalRelease 1)"))
        // The copy records the schema; without --schema it is the same store.
        #expect(run(["export"], copy).out == export.out)
        #expect(run(["schema", "--format", "json"], copy).out == schemaJSON.out)
        // A trip file does not fit it: the store's schema decides, not the trips'.
        let trips = run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], copy)
        #expect(trips.code == 1 && trips.err.contains("unknown type 'BusinessTrip'"))
    }

    @Test func aSchemaFileWithAMistakeIsRefusedNamingEntityAndProperty() throws {
        let dir = CLIRunner.scratch()
        let cases: [(String, String)] = [
            (#"{"entities":[{"name":"Film","attributes":[{"name":"year","type":"integer"}]}]}"#,
             "entity 'Film', attribute 'year': unknown type 'integer'"),
            (#"{"entities":[{"name":"Film","relationships":[{"name":"studio","destination":"Studio"}]}]}"#,
             "relationship 'Film.studio' points at 'Studio', which is not in the schema"),
            (#"{"entities":[{"name":"Film","attributes":[{"name":"title","type":"string","indexd":true}]}]}"#,
             "entity 'Film', attribute 'title': unknown key 'indexd'"),
            (#"{"entities":[{"name":"Short","parent":"Film"}]}"#, "entity 'Short' names parent 'Film', which is not in the schema"),
            (#"{"entities":[{"name":"Film","relationships":[{"name":"crew","destination":"Film","deleteRule":"explode"}]}]}"#,
             "entity 'Film', relationship 'crew': unknown delete rule 'explode'"),
            (#"{"entities":[{"name":"Film","attributes":[{"name":"r","type":{"enum":"R","cases":["g","g"]}}]}]}"#,
             "enum attribute 'Film.r' lists case 'g' twice"),
            (#"{"entities":[]}"#, "the schema declares no entity"),
            (#"{"entities":[{"name":"Film","attributes":[{"name":"2nd","type":"int"}]}]}"#, "entity 'Film': property '2nd' is not a valid name"),
            ("[1, 2", "it is not JSON"),
        ]
        for (k, (text, expected)) in cases.enumerated() {
            let file = dir + "/schema-\(k).json"
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            let store = dir + "/store-\(k)"
            let r = CLIRunner.run(["--schema", file, "import", "-"], store: store, stdin: "[]")
            #expect(r.code == 1, "\(text)")
            #expect(r.err.contains("schema file \(file): ") && r.err.contains(expected), "\(r.err)")
            #expect(!FileManager.default.fileExists(atPath: store))
        }
    }

    @Test func aDifferentSchemaIsAMismatchNeverDamage() throws {
        let folder = try makeFilmStore()
        let other = CLIRunner.scratch() + "/other.json"
        try #"{"entities":[{"name":"Production","attributes":[{"name":"title","type":"int"}]}]}"#
            .write(toFile: other, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["--schema", other, "query", "--count"], store: folder)
        #expect(r.code == 1)
        #expect(r.err.contains("the store's schema differs from this program's: "))
        #expect(r.err.contains("attribute 'Production.title' changed type from String to Int"))
        #expect(r.err.contains("entity 'FeatureFilm' is in the store but not in the program's schema"))
        #expect(!r.err.contains("damaged"))
    }

    @Test func anAdditiveSchemaIsRecordedWithANote() throws {
        let folder = try makeFilmStore()
        let added = extendTVSpecial(run(["schema", "--format", "json"], folder).out)
        let file = CLIRunner.scratch() + "/added.json"
        try added.write(toFile: file, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["--schema", file, "import", "-"], store: folder,
                              stdin: #"[{"type":"TVSpecial","id":"tv2","data":{"title":"Late show","network":"ITV","host":"Sam"}}]"#)
        #expect(r.code == 0, "\(r.err)")
        #expect(r.err.contains("note: the store's schema was extended"))
        // From now on the store's own schema has it.
        let q = run(["query", "--from", "TVSpecial", #"host == "Sam""#, "--format", "ids"], folder)
        #expect(q.code == 0 && q.out == "tv2\n", "\(q.err)")
    }

    /// The film schema file with an optional `host` attribute added to TVSpecial.
    func extendTVSpecial(_ schemaJSON: String) -> String {
        schemaJSON.replacingOccurrences(
            of: #""name": "network","#,
            with: #""name": "host", "type": "string", "optional": true}, {"name": "network","#)
    }

    @Test func aDamagedSchemaRecordIsDamage() throws {
        let folder = try makeFilmStore()
        let path = folder + "/schema.json"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[20] ^= 0x01
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let r = run(["query", "--count"], folder)
        #expect(r.code == 2)
        #expect(r.err.contains("schema.json line 1: checksum mismatch"))
    }

    @Test func aStoreFromBeforeTheRecordNamesTheWayOut() throws {
        let folder = try makeFilmStore()
        let schemaFile = CLIRunner.scratch() + "/films.json"
        try run(["schema", "--format", "json"], folder).out.write(toFile: schemaFile, atomically: false, encoding: .utf8)
        try FileManager.default.removeItem(atPath: folder + "/schema.json")
        let r = run(["query", "--count"], folder)
        #expect(r.code == 1)
        #expect(r.err.contains("journal-0.jsonl line 1: unknown type 'TVSpecial'") && r.err.contains("--schema FILE"), "\(r.err)")
        let withFile = CLIRunner.run(["--schema", schemaFile, "query", "--count"], store: folder)
        #expect(withFile.out == "4\n")
        // A writer records it from then on.
        #expect(CLIRunner.run(["--schema", schemaFile, "compact"], store: folder).code == 0)
        #expect(run(["query", "--count"], folder).out == "4\n")
    }

    @Test func theExampleProgramsStoreIsAuditedFromTheCommandLine() throws {
        let example = URL(fileURLWithPath: CLIRunner.binary).deletingLastPathComponent().path + "/tripstore-example"
        guard FileManager.default.isExecutableFile(atPath: example) else { return }
        let folder = CLIRunner.scratch() + "/example"
        let p = Process()
        p.executableURL = URL(fileURLWithPath: example)
        p.arguments = [folder]
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        p.waitUntilExit()
        #expect(p.terminationStatus == 0)
        let r = run(["history", "--deletes", "--format", "jsonl"], folder)
        #expect(r.code == 0)
        #expect(r.out.contains(#""kind":"delete","type":"Car""#) && r.out.contains(#""tombstone":{"name":"Beetle"}"#))
    }

    /// The id of the production with that title.
    func idOf(_ title: String, _ folder: String) -> String {
        run(["query", "title == \"\(title)\"", "--format", "ids"], folder).out.trimmingCharacters(in: .newlines)
    }

    // What a hostile review found, each kept fixed.

    @Test func aReaderWhoseSchemaAWriterExtendedMeanwhileRetriesWithTheNewRecord() throws {
        let folder = try makeFilmStore()
        let old = try #require(try Store.recordedSchema(in: folder))
        let file = CLIRunner.scratch() + "/added.json"
        try extendTVSpecial(run(["schema", "--format", "json"], folder).out).write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["--schema", file, "import", "-"], store: folder,
                              stdin: #"[{"type":"TVSpecial","id":"tv2","data":{"title":"Late","network":"ITV","host":"Sam"}}]"#).code == 0)
        // A reader that read the record before the writer extended it.
        let args = try ArgumentScanner.scan(["--store", folder, "query", "--count"])
        let ctx = CommandContext(args: args, console: Console.captured(), environment: [:], schema: old,
                                 spec: QueryCommand.spec, input: .text(""))
        let store = try ctx.openStore(.read)
        #expect(store.schema.fingerprint != old.fingerprint)
        #expect(store.schema.entity(named: "TVSpecial")?.property(named: "host") != nil)
    }

    @Test func anInverseDeclaredOnOneSideIsBothSidesSoADeleteLeavesNoDanglingReference() throws {
        let dir = CLIRunner.scratch()
        let schema = dir + "/inverse.json"
        try #"{"entities":[{"name":"A","relationships":[{"name":"bs","destination":"B","toMany":true,"inverse":"a","deleteRule":"cascade"}]},{"name":"B","relationships":[{"name":"a","destination":"A"}]}]}"#
            .write(toFile: schema, atomically: false, encoding: .utf8)
        let store = dir + "/store"
        let r = CLIRunner.run(["--schema", schema, "import", "-"], store: store,
                              stdin: #"[{"type":"A","id":"a","data":{"bs":[{"id":"b"}]}},{"type":"B","id":"b","data":{}}]"#)
        #expect(r.code == 0, "\(r.err)")
        #expect(run(["get", "b"], store).out.contains(#""a": {"#))  // the other side, derived
        #expect(run(["delete", "b"], store).code == 0)
        #expect(run(["query", "--format", "jsonl"], store).out == #"{"type":"A","id":"a","data":{"bs":[]}}"# + "\n")
        #expect(run(["verify"], store).code == 0)
        #expect(run(["schema", "--format", "json"], store).out.contains(#""inverse": "bs""#))
    }

    @Test func anImageOfTheSchemaBeforeAnAdditionIsStaleNotDamage() throws {
        let folder = try makeFilmStore()
        #expect(run(["compact"], folder).code == 0)
        let file = CLIRunner.scratch() + "/added.json"
        try extendTVSpecial(run(["schema", "--format", "json"], folder).out).write(toFile: file, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["--schema", file, "update", "--where", #"title == "Gala""#, "--set", "host=Sam"], store: folder).code == 0)
        let v = run(["verify"], folder)
        #expect(v.code == 0, "\(v.err)")
    }

    @Test func changingOptionalityPreservationOrADeleteRuleIsAMismatch() throws {
        let folder = try makeFilmStore()
        let original = run(["schema", "--format", "json"], folder).out
        let changes = [
            (original.replacingOccurrences(of: #""name": "network","#, with: #""name": "network", "optional": true,"#),
             "attribute 'TVSpecial.network' became optional"),
            (original.replacingOccurrences(of: #""preserveOnDeletion": true,"#, with: ""),
             "attribute 'Production.title' is no longer preserved on deletion"),
        ]
        for (k, (text, expected)) in changes.enumerated() {
            #expect(text != original, "case \(k) changed nothing")
            let file = CLIRunner.scratch() + "/changed.json"
            try text.write(toFile: file, atomically: false, encoding: .utf8)
            let r = CLIRunner.run(["--schema", file, "update", "--where", #"title == "Gala""#, "--set", "network=ITV"], store: folder)
            #expect(r.code == 1 && r.err.contains(expected), "\(r.err)")
        }
        #expect(run(["query", "--from", "TVSpecial", "--fields", "network", "--format", "csv"], folder).out.hasSuffix(",BBC\n"))
    }

    @Test func aSchemaRecordLeftByAFirstCommitThatNeverHappenedIsIgnored() throws {
        let folder = try makeFilmStore()
        let crashed = CLIRunner.scratch() + "/crashed"
        try FileManager.default.createDirectory(atPath: crashed, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: folder + "/schema.json", toPath: crashed + "/schema.json")
        try "partial".write(toFile: crashed + "/snapshot-1.jsonl.tmp", atomically: false, encoding: .utf8)
        #expect(run(["query", "--count"], crashed).code == 1)  // no store yet
        let r = run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], crashed)
        #expect(r.code == 0, "\(r.err)")
        #expect(run(["schema"], crashed).out.hasPrefix("Trip\n"))
    }

    @Test func aSchemaRecordThatDoesNotDescribeTheSnapshotIsDamage() throws {
        let folder = try makeFilmStore()
        #expect(run(["compact"], folder).code == 0)
        // A valid, checksummed record of another schema in its place.
        let other = try Schema([EntityDescription("Production", attributes: [AttributeDescription("title", .string)])])
        try Data(SchemaRecordFormat.bytes(other)).write(to: URL(fileURLWithPath: folder + "/schema.json"))
        let r = run(["verify"], folder)
        #expect(r.code == 2)
        #expect(r.err.contains("schema.json line 1: it does not describe"), "\(r.err)")
    }

    @Test func propertiesCalledTypeAndIDNeverHideTheEnvelopes() throws {
        let dir = CLIRunner.scratch()
        let schema = dir + "/s.json"
        try #"{"entities":[{"name":"A","attributes":[{"name":"type","type":"string"},{"name":"id","type":"int"}]}]}"#
            .write(toFile: schema, atomically: false, encoding: .utf8)
        let store = dir + "/store"
        #expect(CLIRunner.run(["--schema", schema, "import", "-"], store: store,
                              stdin: #"[{"type":"A","id":"a1","data":{"type":"X","id":7}}]"#).code == 0)
        #expect(run(["query", "--format", "csv"], store).out == "type,id,data.type,data.id\nA,a1,X,7\n")
        #expect(run(["query", "--format", "csv", "--fields", "data.type,type"], store).out == "id,data.type,type\na1,X,A\n")
        #expect(run(["query", "--format", "jsonl", "--fields", "data.id"], store).out == #"{"type":"A","id":"a1","data":{"id":7}}"# + "\n")
    }
}
