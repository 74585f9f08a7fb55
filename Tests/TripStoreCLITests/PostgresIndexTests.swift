import Foundation
import Testing

/// The feed's indexes follow the store's schema (docs/postgres.md): a migration's
/// transaction drops the indexes its schema no longer declares (a property
/// renamed, re-typed, re-added or no longer indexed) and creates the new
/// ones, and the DDL run again converges on the same set, so no index of
/// an earlier schema can refuse a later value.
@Suite(.serialized) struct PostgresIndexTests {
    static func schemaFile(_ attributes: String) throws -> String {
        let path = CLIRunner.scratch() + ".json"
        try #"{"entities":[{"name":"A","attributes":[\#(attributes)],"relationships":[]}]}"#.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// v1 `A.n: Int` indexed with a1 (n = 5), streamed in to token 1 by the
    /// DDL and the feed; then v2 renames `n` to `qty` and v3 adds `n: String?`
    /// (tokens 2 and 3, not streamed yet).
    static func storeRenamedThenReAdded(feedInto db: String) throws -> String {
        let store = CLIRunner.scratch()
        let input = CLIRunner.scratch() + "-a.json"
        try #"[{"type":"A","id":"a1","data":{"n":5}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        let v1 = try schemaFile(#"{"name":"n","type":"int","indexed":true}"#)
        #expect(CLIRunner.run(["--schema", v1, "import", input], store: store).code == 0)
        #expect(feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(feed(["history", "--format", "sql"], store: store, into: db).status == 0)
        let v2 = try schemaFile(#"{"name":"qty","originalName":"n","type":"int","indexed":true}"#)
        let v3 = try schemaFile(#"{"name":"qty","originalName":"n","type":"int","indexed":true},{"name":"n","type":"string","optional":true}"#)
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        #expect(CLIRunner.run(["migrate", "--schema", v3], store: store).code == 0)
        return store
    }

    @discardableResult
    static func feed(_ args: [String], store: String, into db: String) -> Postgres.Result {
        let r = CLIRunner.run(args, store: store)
        #expect(r.code == 0, "\(args): \(r.err)")
        return Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(r.out.utf8))
    }

    static func indexes(_ db: String) -> [String] {
        Postgres.value(db, "select string_agg(indexname, ' ' order by indexname) from pg_indexes where schemaname = 'tripstore' and tablename = 'objects'")
            .split(separator: " ").map(String.init)
    }

    @Test func aRenameThenAReAddNeverSticksTheFeed() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = try Self.storeRenamedThenReAdded(feedInto: db)
        #expect(CLIRunner.run(["update", "a1", "--set", "n=abc"], store: store).code == 0)
        let r = Self.feed(["history", "--format", "sql", "--since", "1"], store: store, into: db)
        #expect(r.status == 0, "\(r.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "4")
        #expect(Postgres.value(db, "select data->>'n' || ' ' || (data->>'qty') from tripstore.objects") == "abc 5")
        // The renamed property keeps an index, under a name that says what it indexes.
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.qty:num"])
        // The DDL run again converges on the same set.
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.qty:num"])
    }

    /// A database fed by 0.9.0, whose numeric index over `n` (named
    /// `objects_A_n`) stopped the feed at token 3, recovers by running the
    /// DDL again and resuming; an index of the user's own is left alone.
    @Test func aDatabaseStuckOnAnEarlierIndexRecoversByTheDDL() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = try Self.storeRenamedThenReAdded(feedInto: db)
        #expect(Self.feed(["history", "--format", "sql", "--since", "1"], store: store, into: db).status == 0)
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "3")
        #expect(CLIRunner.run(["update", "a1", "--set", "n=abc"], store: store).code == 0)
        // As 0.9.0 left it: its index over the old `n`, and one the user made.
        let old = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db, "-c",
                                 #"CREATE INDEX "objects_A_n" ON tripstore.objects (((data->>'n')::numeric)) WHERE types @> ARRAY['A']"#,
                                 "-c", "CREATE INDEX users_own ON tripstore.objects (token)",
                                 "-c", "CREATE INDEX objects_my_own ON tripstore.objects (token) WHERE types @> ARRAY['A']"])
        #expect(old.status == 0, "\(old.err)")
        let stuck = Self.feed(["history", "--format", "sql", "--since", "3"], store: store, into: db)
        #expect(stuck.status != 0 && stuck.err.contains("invalid input syntax for type numeric"), "\(stuck.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "3")
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_my_own", "objects_pkey", "objects_types", "tripstore:A.qty:num", "users_own"])
        let resumed = Self.feed(["history", "--format", "sql", "--since", "3"], store: store, into: db)
        #expect(resumed.status == 0, "\(resumed.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "4")
    }

    /// An index no longer declared goes in the migration's transaction;
    /// one newly declared comes, and a follower needs no DDL by hand.
    @Test func aMigrationBringsTheIndexesInLine() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch()
        let input = CLIRunner.scratch() + "-a.json"
        try #"[{"type":"A","id":"a1","data":{"n":5,"s":"x"}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        let v1 = try Self.schemaFile(#"{"name":"n","type":"int","indexed":true},{"name":"s","type":"string"}"#)
        #expect(CLIRunner.run(["--schema", v1, "import", input], store: store).code == 0)
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.n:num"])
        let v2 = try Self.schemaFile(#"{"name":"n","type":"double"},{"name":"s","type":"string","indexed":true}"#)
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        #expect(Self.feed(["history", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.s:text"])
    }

    /// `A.b_c` and `A_b.c` are two indexes, whatever their names' underscores.
    @Test func indexesOfLookAlikeNamesAreTwo() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch()
        let path = CLIRunner.scratch() + ".json"
        try #"{"entities":[{"name":"A","attributes":[{"name":"b_c","type":"int","indexed":true,"optional":true}],"relationships":[]},"#
            .appending(#"{"name":"A_b","attributes":[{"name":"c","type":"int","indexed":true,"optional":true}],"relationships":[]}]}"#)
            .write(toFile: path, atomically: true, encoding: .utf8)
        let input = CLIRunner.scratch() + "-a.json"
        try #"[{"type":"A","id":"a1","data":{"b_c":1}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        #expect(CLIRunner.run(["--schema", path, "import", input], store: store).code == 0)
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.b_c:num", "tripstore:A_b.c:num"])
    }

    /// The DDL run on a database that has not reached the store's last
    /// migration creates none of that migration's indexes (they could
    /// refuse the values before it): the migration's transaction does.
    @Test func theDDLOnAFollowerBehindAMigrationLeavesItsIndexesToIt() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch()
        let v1 = try Self.schemaFile(#"{"name":"v","type":"string","optional":true}"#)
        let v2 = try Self.schemaFile(#"{"name":"w","originalName":"v","type":"string","optional":true}"#)
        let v3 = try Self.schemaFile(#"{"name":"w","originalName":"v","type":"string","optional":true},{"name":"v","type":"int","indexed":true,"optional":true}"#)
        let input = CLIRunner.scratch() + "-a.json"
        try #"[{"type":"A","id":"a1","data":{"v":"12"}}]"#.write(toFile: input, atomically: true, encoding: .utf8)
        #expect(CLIRunner.run(["--schema", v1, "import", input], store: store).code == 0)
        #expect(CLIRunner.run(["update", "a1", "--set", "v=abc"], store: store).code == 0)
        #expect(CLIRunner.run(["migrate", "--schema", v2], store: store).code == 0)
        #expect(CLIRunner.run(["migrate", "--schema", v3], store: store).code == 0)
        // A database at token 1 runs the store's DDL, as the docs say to recover.
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        let first = CLIRunner.run(["history", "--format", "sql", "--since", "0"], store: store).out
        let one = String(first[..<(first.range(of: "BEGIN;", range: first.index(after: first.startIndex)..<first.endIndex)?.lowerBound ?? first.endIndex)])
        #expect(Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db], input: Data(one.utf8)).status == 0)
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "1")
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types"])
        let rest = Self.feed(["history", "--format", "sql", "--since", "1"], store: store, into: db)
        #expect(rest.status == 0, "\(rest.err)")
        #expect(Postgres.value(db, "select token from tripstore.cursor") == "4")
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.v:num"])
        #expect(Self.feed(["schema", "--format", "sql"], store: store, into: db).status == 0)
        #expect(Self.indexes(db) == ["objects_pkey", "objects_types", "tripstore:A.v:num"])
    }
}
