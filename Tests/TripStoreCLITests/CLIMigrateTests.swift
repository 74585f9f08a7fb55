import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// `tripstore migrate --schema NEW.json` as a user runs it on the sample data (docs/cli.md, migrate).
@Suite struct CLIMigrateTests {
    /// The trip schema, version 2.0.0: `destination` renamed to `place`,
    /// `BusinessTrip.costCentre` added with a default, `mileageRate` removed.
    static func version2(_ extra: (inout [[String: Any]]) -> Void = { _ in }) throws -> String {
        let path = CLIRunner.scratch() + "/v2.json"
        let v1 = CLIRunner.run(["schema", "--format", "json"]).out
        var schema = try JSONSerialization.jsonObject(with: Data(v1.utf8)) as! [String: Any]
        var entities = schema["entities"] as! [[String: Any]]
        for k in entities.indices {
            var attributes = entities[k]["attributes"] as! [[String: Any]]
            switch entities[k]["name"] as! String {
            case "Trip":
                if let i = attributes.firstIndex(where: { $0["name"] as? String == "destination" }) {
                    attributes[i]["name"] = "place"
                    attributes[i]["originalName"] = "destination"
                }
            case "BusinessTrip":
                attributes.removeAll { $0["name"] as? String == "mileageRate" }
                attributes.append(["name": "costCentre", "type": "string", "default": "none"])
            default: break
            }
            entities[k]["attributes"] = attributes
        }
        extra(&entities)
        schema["entities"] = entities
        schema["version"] = "2.0.0"
        try JSONSerialization.data(withJSONObject: schema).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The sample data with an update, a delete (a tombstone) and a snapshot.
    static func sampleStore() -> String {
        let store = CLIRunner.scratch()
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Roma, Italy"], store: store).code == 0)
        #expect(CLIRunner.run(["delete", "draft-lisbon"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)
        return store
    }

    static func files(_ folder: String) throws -> [String: Data] {
        var out: [String: Data] = [:]
        for f in try FileManager.default.contentsOfDirectory(atPath: folder) {
            out[f] = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + f))
        }
        return out
    }

    @Test func aMigrationAsAUserRunsIt() throws {
        let store = Self.sampleStore()
        let v2 = try Self.version2()
        let exported = CLIRunner.run(["export"], store: store).out
        let romeBefore = CLIRunner.run(["query", #"destination ~ "Rome""#, "--count"], store: store).out

        let untouched = try Self.files(store)
        let dry = CLIRunner.run(["migrate", "--schema", v2, "--dry-run"], store: store)
        #expect(dry.code == 0, "\(dry.err)")
        #expect(dry.out.contains("  rename Trip.destination -> Trip.place\n  add BusinessTrip.costCentre = \"none\"\n"
                                 + "  remove BusinessTrip.mileageRate (values kept in history)\n"), "\(dry.out)")
        #expect(dry.out.contains("nothing was changed"))
        #expect(try Self.files(store) == untouched)

        let r = CLIRunner.run(["migrate", "--schema", v2, "--author", "alice"], store: store)
        #expect(r.code == 0, "\(r.err)")
        #expect(r.out.contains("version none -> 2.0.0"))
        #expect(r.out.hasSuffix("migrated 492 objects; committed as token 4 with a new snapshot\n"), "\(r.out)")
        #expect(CLIRunner.run(["query", #"place ~ "Rome""#, "--count"], store: store).out == romeBefore)
        #expect(CLIRunner.run(["query", #"costCentre == "none""#, "--count"], store: store).out == "36\n")
        #expect(CLIRunner.run(["query", "--as-of", "3", #"destination ~ "Rome""#, "--count"], store: store).out == romeBefore)
        #expect(CLIRunner.run(["export", "--as-of", "3"], store: store).out == exported)
        #expect(CLIRunner.run(["stats"], store: store).out.contains(", version 2.0.0\n"))
        #expect(CLIRunner.run(["schema"], store: store).out.contains("version 2.0.0\n"))
        #expect(CLIRunner.run(["verify"], store: store).code == 0)

        // History as it was recorded, the migration as one change.
        let jsonl = CLIRunner.run(["history", "--kind", "migrate", "--format", "jsonl"], store: store).out
        #expect(jsonl.contains(#""author":"alice","changes":[{"kind":"migrate","from":""#))
        #expect(jsonl.contains(#""changes":["rename Trip.destination -> Trip.place","add BusinessTrip.costCentre = \"none\"","#))
        #expect(!jsonl.contains("\"schema\""))
        let byID = CLIRunner.run(["history", "--id", "rome-summit", "--format", "jsonl"], store: store).out
        #expect(byID.contains(#""values":{"destination":{"old":"Rome, Italy","new":"Roma, Italy"}}"#), "\(byID)")
        let table = CLIRunner.run(["history", "--since", "3"], store: store).out
        #expect(table.contains("migrate") && table.contains("rename Trip.destination -> Trip.place"))
        let deletes = CLIRunner.run(["history", "--deletes"], store: store).out
        #expect(deletes.contains("draft-lisbon"))

        // The feed carries the new schema, and a standby follows the migration.
        let feed = CLIRunner.run(["history", "--format", "feed"], store: store).out
        #expect(feed.contains(#""schema":{"fingerprint":"#))
        let feedFile = CLIRunner.scratch() + "/feed.jsonl"
        try feed.write(toFile: feedFile, atomically: true, encoding: .utf8)
        let standby = CLIRunner.scratch() + "/standby"
        let applied = CLIRunner.run(["apply", feedFile], store: standby)
        #expect(applied.code == 0, "\(applied.err)")
        #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: store).out)
        #expect(CLIRunner.run(["history", "--format", "jsonl"], store: standby).out
                == CLIRunner.run(["history", "--format", "jsonl"], store: store).out)

        // Nothing more to do; the old schema file now asks for a migration.
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).out.hasPrefix("nothing to migrate"))
    }

    @Test func aRefusedMigrationListsEverythingAndChangesNothing() throws {
        let store = Self.sampleStore()
        let bad = try Self.version2 { entities in
            for k in entities.indices where entities[k]["name"] as? String == "PersonalTrip" {
                var attributes = entities[k]["attributes"] as! [[String: Any]]
                attributes.append(["name": "visa", "type": "string"])  // required, no default
                for i in attributes.indices where attributes[i]["name"] as? String == "notes" { attributes[i]["type"] = "int" }
                entities[k]["attributes"] = attributes
            }
        }
        let before = try Self.files(store)
        let r = CLIRunner.run(["migrate", "--schema", bad], store: store)
        #expect(r.code == 1)
        #expect(r.err.contains("cannot migrate; nothing was changed"), "\(r.err)")
        #expect(r.err.contains("  add PersonalTrip.visa: it is required and has no \"default\""), "\(r.err)")
        #expect(r.err.contains("  PersonalTrip.notes changes type from String to Int"), "\(r.err)")
        #expect(try Self.files(store) == before)
        // Objects that refuse are counted with the first of them.
        let inUse = try Self.version2 { entities in
            for k in entities.indices where entities[k]["name"] as? String == "PersonalTrip" {
                var attributes = entities[k]["attributes"] as! [[String: Any]]
                for i in attributes.indices where attributes[i]["name"] as? String == "reason" {
                    attributes[i]["type"] = ["enum": "Reason", "cases": ["reunion", "vacation", "wellness", "unknown"]]
                }
                entities[k]["attributes"] = attributes
            }
        }
        let dry = CLIRunner.run(["migrate", "--schema", inUse, "--dry-run"], store: store)
        #expect(dry.code == 1)
        #expect(dry.err.contains(#"remove enum case PersonalTrip.reason "family": objects use it ("#), "\(dry.err)")
    }

    /// `history --follow --format feed` piped into a standby keeps up through
    /// a migration and one that renames back, and the standby ends equal.
    @Test func aLiveFeedCarriesMigrationsToAStandby() throws {
        let store = Self.sampleStore()
        let v2 = try Self.version2()
        // Back again: `place` is `destination` once more, and `costCentre` goes.
        let back = CLIRunner.scratch() + "/back.json"
        var schema = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: v2))) as! [String: Any]
        var entities = schema["entities"] as! [[String: Any]]
        for k in entities.indices {
            var attributes = entities[k]["attributes"] as! [[String: Any]]
            for i in attributes.indices where attributes[i]["name"] as? String == "place" {
                attributes[i]["name"] = "destination"
                attributes[i]["originalName"] = "place"
            }
            attributes.removeAll { $0["name"] as? String == "costCentre" }
            entities[k]["attributes"] = attributes
        }
        schema["entities"] = entities
        schema["version"] = "3.0.0"
        try JSONSerialization.data(withJSONObject: schema).write(to: URL(fileURLWithPath: back))

        let feed = CLIRunner.scratch() + "/live.jsonl"
        _ = FileManager.default.createFile(atPath: feed, contents: nil)
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        follower.arguments = ["--store", store, "history", "--follow", "--format", "feed", "--since", "0"]
        follower.standardOutput = FileHandle(forWritingAtPath: feed)
        follower.standardError = FileHandle.nullDevice
        try follower.run()
        defer { if follower.isRunning { follower.terminate() } }
        func lines() -> Int { ((try? String(contentsOfFile: feed, encoding: .utf8)) ?? "").split(separator: "\n").count }
        func wait(for n: Int) {
            for _ in 0..<400 where lines() < n { usleep(25_000) }
        }
        wait(for: 3)
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "place=Roma"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "romeoville-audit", "--set", "place=Romeoville, IL"], store: store).code == 0)
        #expect(CLIRunner.run(["migrate", "--schema", back], store: store).code == 0)
        #expect(CLIRunner.run(["update", "romeoville-audit", "--set", "destination=Romeoville"], store: store).code == 0)
        wait(for: 8)
        follower.terminate()
        follower.waitUntilExit()
        #expect(lines() == 8, "\(String(decoding: (try? Data(contentsOf: URL(fileURLWithPath: feed))) ?? Data(), as: UTF8.self).prefix(300))")
        let standby = CLIRunner.scratch() + "/standby"
        let applied = CLIRunner.run(["apply", feed], store: standby)
        #expect(applied.code == 0, "\(applied.err)")
        #expect(CLIRunner.run(["export"], store: standby).out == CLIRunner.run(["export"], store: store).out)
        #expect(CLIRunner.run(["history", "--format", "jsonl"], store: standby).out
                == CLIRunner.run(["history", "--format", "jsonl"], store: store).out)
        // The past of both names is one type to `--type`.
        let trips = CLIRunner.run(["history", "--type", "BusinessTrip", "--id", "romeoville-audit", "--format", "jsonl"], store: store)
        #expect(trips.out.split(separator: "\n").count == 3)
    }

    @Test func usageAndMissingStores() throws {
        let store = CLIRunner.scratch()
        let noSchema = CLIRunner.run(["migrate"], store: store)
        #expect(noSchema.code == 1 && noSchema.err.contains("migrate needs --schema FILE"))
        let v2 = try Self.version2()
        let none = CLIRunner.run(["migrate", "--schema", v2], store: store)
        #expect(none.code == 1 && none.err.contains("no store at"), "\(none.err)")
        // A program given the new schema for a store of the old one is told how to move it.
        let sample = Self.sampleStore()
        let mismatch = CLIRunner.run(["--schema", v2, "query", "--count"], store: sample)
        #expect(mismatch.code == 1)
        #expect(mismatch.err.contains("tripstore migrate --schema FILE"), "\(mismatch.err)")
    }
}
