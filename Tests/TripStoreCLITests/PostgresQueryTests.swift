import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// `query --sql` run by PostgreSQL returns exactly the ids `query --format
/// ids` prints, in the same order, on a store of 10,000 generated trips
/// with updates, cascading deletes, a redaction and a prune, streamed in.
@Suite(.serialized) struct PostgresQueryTests {
    static let benchmarkQueries = [
        "is BusinessTrip",
        #"is BusinessTrip && destination ~ "Rome""#,
        #"is PersonalTrip && reason == "family" && startDate >= 2026-06-01"#,
        "perDiemRate > 100",
    ]

    @Test func everyQueryAnswersAsTheStoreDoes() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch() + "/store"
        var g = TripDataGenerator(seed: 46)
        let input = CLIRunner.scratch() + "/trips.json"
        try Data(g.jsonArray(trips: 10_000)).write(to: URL(fileURLWithPath: input))
        #expect(try CLIRunner.runProcess(["--store", store, "import", input]).status == 0)
        let schema = CLIRunner.run(["schema", "--format", "sql"], store: store).out
        #expect(Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(schema.utf8)).status == 0)
        // Updates, cascading deletes and a redaction, streamed as they come; then a prune.
        let ids = CLIRunner.run(["query", "is BusinessTrip", "--limit", "40", "--format", "ids"], store: store).out.split(separator: "\n").map(String.init)
        for (k, id) in ids.prefix(20).enumerated() {
            #expect(CLIRunner.run(["update", id, "--set", "perDiemRate=\(90 + k * 3)", "--set", "destination=Roma \(k)"], store: store).code == 0)
        }
        #expect(CLIRunner.run(["delete"] + ids.suffix(10), store: store).code == 0)
        #expect(CLIRunner.run(["delete", "--where", #"is PersonalTrip && reason == "wellness" && startDate < 2024-06-01"#], store: store).code == 0)
        #expect(CLIRunner.run(["history", "redact", "--id", ids[0]], store: store).code == 0)
        let feed = CLIRunner.run(["history", "--format", "sql", "--since", "0"], store: store).out
        let applied = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(feed.utf8))
        #expect(applied.status == 0, "\(applied.err.prefix(500))")
        #expect(CLIRunner.run(["history", "prune", "--before", "3"], store: store).code == 0)
        let last = Postgres.value(db, "select token from tripstore.cursor")
        #expect(CLIRunner.run(["stats"], store: store).out.contains("last token   \(last)\n"))

        // The benchmark's queries as a user runs them: the command line both ways.
        var differing: [String] = []
        for q in Self.benchmarkQueries {
            for options in [["--sort", "-startDate"], ["--sort", "-startDate", "--limit", "20"], ["--count"]] {
                let expected = CLIRunner.run(["query", q, "--format", "ids"] + options, store: store).out
                let got = Postgres.psql(["-d", db, "-tA", "-c", CLIRunner.run(["query", "--sql", q] + options, store: store).out])
                if got.out != (options == ["--count"] ? CLIRunner.run(["query", q, "--count"], store: store).out : expected) {
                    differing.append("\(q) \(options)")
                }
            }
        }
        #expect(CLIRunner.run(["query", "--sql", "is Plane"], store: store).err.contains("unknown type 'Plane'"))
        // 300 random queries from the fuzzer, with sorts and pages, in one psql run.
        let opened = try Store.open(store, schema: TripSchema.schema, access: .read)
        var random = RandomQueries(state: 2026_11_27)
        var script = ""
        var expected: [String] = []
        var asked: [String] = []
        for k in 0..<300 {
            let text = random.query()
            let sort = k % 3 == 0 ? SortKey.parseList(random.pick(["-startDate", "name", "destination,-endDate", "livingAccommodation.name"])) : []
            let page = k % 5 == 0 ? (limit: 1 + random.int(30), offset: random.int(10)) : nil
            guard let query = try? Query(text, sort: sort, limit: page?.limit, offset: page?.offset ?? 0),
                  let result = try? opened.run(query) else { continue }
            expected.append(result.rows.compactMap { opened.id(at: $0) }.map { $0 + "\n" }.joined())
            asked.append("\(text) \(sort) \(page.map { "\($0)" } ?? "")")
            script += "\\echo @@\n" + (try SQLWriter(opened).sql(for: query, count: false, in: SQLSchema()))
            // And its count, as --count asks it.
            expected.append("\(try opened.run(query, countOnly: true).total ?? -1)\n")
            asked.append("count of \(text)")
            script += "\\echo @@\n" + (try SQLWriter(opened).sql(for: query, count: true, in: SQLSchema()))
        }
        let answers = Postgres.psql(["-d", db, "-tA", "-v", "ON_ERROR_STOP=1"], input: Data(script.utf8))
        #expect(answers.status == 0, "\(answers.err.prefix(500))")
        let parts = answers.out.components(separatedBy: "@@\n").dropFirst()
        #expect(parts.count == expected.count)
        for (k, (got, want)) in zip(parts, expected).enumerated() where got != want {
            differing.append(asked[k])
        }
        #expect(expected.count >= 500, "most random queries are valid")
        #expect(differing.isEmpty, "\(differing.count) of \(expected.count + 12) answers differ, first: \(differing.first ?? "")")
    }
}
