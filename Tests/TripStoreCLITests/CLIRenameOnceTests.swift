import Foundation
import Testing

/// An `originalName` applies once (docs/cli.md, migrate): where the store's recorded
/// schema does not already record that rename, whatever else changes; a
/// schema the store records changes nothing, and a chain that keeps the
/// original names applies them at the first step only. Driven through the
/// CLI as a user migrates, with schema files written by hand.
@Suite struct CLIRenameOnceTests {
    /// A schema file of one entity `A` with optional string attributes
    /// `(name, originalName)`, at `version`.
    static func schema(_ version: String, _ attributes: [(String, String?)]) throws -> String {
        let path = CLIRunner.scratch() + "-v\(version).json"
        let list = attributes.map { name, original in
            #"{"name":"\#(name)","#  + (original.map { #""originalName":"\#($0)","# } ?? "") + #""type":"string","optional":true}"#
        }
        let text = #"{"version":"\#(version)","entities":[{"name":"A","attributes":[\#(list.joined(separator: ","))],"relationships":[]}]}"#
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A store of schema v1 `A{p, q}` holding a1 with p="P", q="Q".
    static func storeOfVersionOne() throws -> String {
        let store = CLIRunner.scratch()
        let v1 = try schema("1", [("p", nil), ("q", nil)])
        let input = CLIRunner.scratch() + ".json"
        try #"[{"type":"A","id":"a1","data":{"p":"P","q":"Q"}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        let r = CLIRunner.run(["--schema", v1, "import", input], store: store)
        #expect(r.code == 0, "\(r.err)")
        return store
    }

    /// a1's data as `get` prints it, compact.
    static func values(_ store: String, asOf: String? = nil) -> String {
        let r = CLIRunner.run(["query", "--from", "A", "--format", "jsonl"] + (asOf.map { ["--as-of", $0] } ?? []), store: store)
        return r.out.components(separatedBy: #""data":"#).last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? r.err
    }

    static func plan(_ out: String) -> [String] {
        out.split(separator: "\n").filter { $0.hasPrefix("  ") }.map { $0.trimmingCharacters(in: .whitespaces) }
    }

    @Test func aSwapOfTwoNamesAloneIsApplied() throws {
        let store = try Self.storeOfVersionOne()
        let v2 = try Self.schema("2", [("p", "q"), ("q", "p")])
        let dry = CLIRunner.run(["migrate", "--schema", v2, "--dry-run"], store: store)
        #expect(dry.code == 0 && Self.plan(dry.out) == ["rename A.q -> A.p", "rename A.p -> A.q"], "\(dry.out)\(dry.err)")
        let r = CLIRunner.run(["migrate", "--schema", v2], store: store)
        #expect(r.code == 0 && r.out.contains("migrated 1 object; committed as token 2"), "\(r.out)\(r.err)")
        #expect(Self.values(store) == #"{"p":"Q","q":"P"}}"#)
        // The same schema again: already recorded, nothing to do.
        let again = CLIRunner.run(["migrate", "--schema", v2], store: store)
        #expect(again.code == 0 && again.out.hasPrefix("nothing to migrate"), "\(again.out)")
        #expect(Self.values(store) == #"{"p":"Q","q":"P"}}"#)
        #expect(Self.values(store, asOf: "1") == #"{"p":"P","q":"Q"}}"#)
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// v1 → v2 (the swap) → v3 that keeps v2's original names and adds an
    /// attribute: the swap happens at v2 only, and each dry run shows
    /// exactly the renames that apply.
    @Test func aChainOfThreeKeepingTheOriginalNamesSwapsOnce() throws {
        let store = try Self.storeOfVersionOne()
        let v2 = try Self.schema("2", [("p", "q"), ("q", "p")])
        let v3 = try Self.schema("3", [("p", "q"), ("q", "p"), ("r", nil)])
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        let dry = CLIRunner.run(["migrate", "--schema", v3, "--dry-run"], store: store)
        #expect(Self.plan(dry.out) == ["add A.r (nil)"], "\(dry.out)")
        let r = CLIRunner.run(["migrate", "--schema", v3], store: store)
        #expect(r.code == 0, "\(r.err)")
        #expect(Self.values(store) == #"{"p":"Q","q":"P","r":null}}"#)
        #expect(Self.values(store, asOf: "2") == #"{"p":"Q","q":"P"}}"#)
        #expect(Self.values(store, asOf: "1") == #"{"p":"P","q":"Q"}}"#)
    }

    /// The swap beside another change is applied once too, and a later
    /// schema with the same names but no original names changes nothing.
    @Test func aSwapBesideAnotherChangeAppliesOnce() throws {
        let store = try Self.storeOfVersionOne()
        let v2 = try Self.schema("2", [("p", "q"), ("q", "p"), ("r", nil)])
        let dry = CLIRunner.run(["migrate", "--schema", v2, "--dry-run"], store: store)
        #expect(Self.plan(dry.out) == ["rename A.q -> A.p", "rename A.p -> A.q", "add A.r (nil)"], "\(dry.out)")
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        let v3 = try Self.schema("3", [("p", nil), ("q", nil), ("r", nil), ("s", nil)])
        #expect(Self.plan(CLIRunner.run(["migrate", "--schema", v3, "--dry-run"], store: store).out) == ["add A.s (nil)"])
        #expect(CLIRunner.run(["migrate", "--schema", v3], store: store).code == 0)
        #expect(Self.values(store) == #"{"p":"Q","q":"P","r":null,"s":null}}"#)
    }

    /// A later schema that leaves the original names out (a new version of
    /// the same shape, or a change elsewhere) keeps the record of the
    /// renames, so declaring them again renames nothing; the record that
    /// names them is format 2, which 0.9.0 refuses rather than apply them again.
    @Test func leavingTheOriginalNamesOutKeepsTheRenamesRecorded() throws {
        let store = try Self.storeOfVersionOne()
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: store + "/schema.json")).prefix(12), as: UTF8.self) == #"{"format":1,"#)
        let v2 = try Self.schema("2", [("p", "q"), ("q", "p")])
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: store + "/schema.json")).prefix(12), as: UTF8.self) == #"{"format":2,"#)
        // v3: the same shape, a new version, no original names: recorded as a version.
        let v3 = try Self.schema("3", [("p", nil), ("q", nil)])
        #expect(CLIRunner.run(["migrate", "--schema", v3], store: store).out.hasPrefix("recorded version 3"))
        // v4: v2's names again, and an attribute more.
        let v4 = try Self.schema("4", [("p", "q"), ("q", "p"), ("r", nil)])
        #expect(Self.plan(CLIRunner.run(["migrate", "--schema", v4, "--dry-run"], store: store).out) == ["add A.r (nil)"])
        #expect(CLIRunner.run(["migrate", "--schema", v4], store: store).code == 0)
        // v5 leaves them out beside a change; v6 names them again.
        let v5 = try Self.schema("5", [("p", nil), ("q", nil), ("r", nil), ("s", nil)])
        #expect(CLIRunner.run(["migrate", "--schema", v5], store: store).code == 0)
        let v6 = try Self.schema("6", [("p", "q"), ("q", "p"), ("r", nil), ("s", nil), ("t", nil)])
        #expect(Self.plan(CLIRunner.run(["migrate", "--schema", v6, "--dry-run"], store: store).out) == ["add A.t (nil)"])
        #expect(CLIRunner.run(["migrate", "--schema", v6], store: store).code == 0)
        #expect(Self.values(store) == #"{"p":"Q","q":"P","r":null,"s":null,"t":null}}"#)
        #expect(CLIRunner.run(["verify"], store: store).code == 0)
    }

    /// A program that adds to the schema and names other original names for
    /// the same attributes writes the record with the recorded ones kept.
    @Test func anAddingProgramKeepsTheRecordedRenames() throws {
        let store = try Self.storeOfVersionOne()
        #expect(CLIRunner.run(["migrate", "--schema", try Self.schema("2", [("p", "q"), ("q", "p")])], store: store).code == 0)
        let adding = try Self.schema("3", [("p", "a"), ("q", "b"), ("o", nil)])
        let input = CLIRunner.scratch() + "-more.json"
        try #"[{"type":"A","id":"a2","data":{"p":"P2"}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        let r = CLIRunner.run(["--schema", adding, "import", input], store: store)
        #expect(r.code == 0, "\(r.err)")
        let record = try String(contentsOfFile: store + "/schema.json", encoding: .utf8)
        #expect(record.contains(#"{"name":"p","originalName":"q""#) && record.contains(#"{"name":"q","originalName":"p""#), "\(record)")
        let v4 = try Self.schema("4", [("p", "q"), ("q", "p"), ("o", nil), ("n", nil)])
        #expect(Self.plan(CLIRunner.run(["migrate", "--schema", v4, "--dry-run"], store: store).out) == ["add A.n (nil)"])
    }
}
