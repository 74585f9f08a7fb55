import Foundation
import Testing

/// What a new user met following the README and `--help`.
@Suite struct CLINewUserTests {
    /// The schema file `schema --format json` prints shows the `version`
    /// key (null where the schema has none), and reads back as it is.
    @Test func aSchemaFileShowsItsVersionKeyAndReadsBack() throws {
        let printed = CLIRunner.run(["schema", "--format", "json"])
        #expect(printed.out.contains(#""version": null,"#))
        let path = CLIRunner.scratch() + ".json"
        try printed.out.write(toFile: path, atomically: true, encoding: .utf8)
        let store = CLIRunner.scratch()
        #expect(CLIRunner.run(["--schema", path, "import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["schema", "--help"]).out.contains(#"set its "version" and give an attribute "originalName""#))
    }

    /// Converting integers past 2^53 to `Double` says how many change and
    /// that history keeps the exact ones, in the dry run and the migration.
    @Test func aMigrationSaysHowManyIntegersADoubleCannotHold() throws {
        let store = CLIRunner.scratch()
        let v1 = CLIRunner.scratch() + "-v1.json", v2 = CLIRunner.scratch() + "-v2.json", input = CLIRunner.scratch() + ".json"
        try #"{"entities":[{"name":"A","attributes":[{"name":"n","type":"int"}],"relationships":[]}]}"#.write(toFile: v1, atomically: true, encoding: .utf8)
        try #"{"entities":[{"name":"A","attributes":[{"name":"n","type":"double"}],"relationships":[]}]}"#.write(toFile: v2, atomically: true, encoding: .utf8)
        try #"[{"type":"A","id":"a1","data":{"n":9007199254740993}},{"type":"A","id":"a2","data":{"n":5}},{"type":"A","id":"a3","data":{"n":9007199254740995}}]"#
            .write(toFile: input, atomically: true, encoding: .utf8)
        #expect(CLIRunner.run(["--schema", v1, "import", input], store: store).code == 0)
        let note = "  note: A.n: 2 integer values past 2^53 become the nearest Double; history keeps the exact integers\n"
        #expect(CLIRunner.run(["migrate", "--schema", v2, "--dry-run"], store: store).out.contains(note))
        let r = CLIRunner.run(["migrate", "--schema", v2], store: store)
        #expect(r.out.contains(note + "migrated 3 objects;"), "\(r.out)")
        #expect(CLIRunner.run(["get", "a1", "--as-of", "1"], store: store).out.contains("9007199254740993"))
    }

    /// The README's `history --id` table is what the program prints, whole
    /// (times aside).
    @Test func theREADMEsHistoryTableIsWhatTheProgramPrints() throws {
        let store = CLIRunner.scratch()
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json", "--author", "bob"], store: store).code == 0)
        #expect(CLIRunner.run(["update", "romeoville-audit", "--set", "perDiemRate=95", "--set", #"purpose="Audit, again""#, "--author", "alice"],
                              store: store).code == 0)
        let printed = CLIRunner.run(["history", "--id", "romeoville-audit", "--format", "table"], store: store).out
        let readme = try String(contentsOfFile: CLIRunner.projectRoot + "/README.md", encoding: .utf8)
        let start = try #require(readme.range(of: "history --id romeoville-audit --format table\n"))
        let shown = readme[start.upperBound...].split(separator: "\n", omittingEmptySubsequences: false).prefix(5).map(String.init)
        let timeless = { (line: String) in line.replacingOccurrences(of: #"\d{4}-\d\d-\d\dT[0-9:.]+Z"#, with: "TIME", options: .regularExpression) }
        #expect(shown.map(timeless) == printed.split(separator: "\n").prefix(5).map { timeless(String($0)) })
    }

    /// `--version` prints the version the CHANGELOG's newest entry names.
    @Test func theVersionIsTheChangelogsNewest() throws {
        let changelog = try String(contentsOfFile: CLIRunner.projectRoot + "/CHANGELOG.md", encoding: .utf8)
        let newest = try #require(changelog.split(separator: "\n").first { $0.hasPrefix("## ") })
        let version = try #require(newest.dropFirst(3).split(separator: " ").first)
        #expect(CLIRunner.run(["--version"]).out.hasPrefix("tripstore \(version)\n"))
    }
}
