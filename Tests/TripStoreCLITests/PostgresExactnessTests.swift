import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// What the hostile pass found: a follower that lags behind a redaction still
/// ends equal; text and dates that compare differently as bytes (NFD text,
/// sub-microsecond dates, Greek final sigma) answer as the store does; a
/// backslash in a literal cannot end it, whatever the session's settings.
@Suite(.serialized) struct PostgresExactnessTests {
    static let trips = #"""
    [{"type":"Trip","id":"nfc","data":{"name":"café","destination":"ΣΊΣΥΦΟΣ","startDate":"2026-03-02T09:30:00.25Z","endDate":"2026-03-03"}},
     {"type":"Trip","id":"nfd","data":{"name":"cafe\u0301","destination":"σίσυφος","startDate":"2026-03-02T09:30:00.2500004Z","endDate":"2026-03-03"}},
     {"type":"Trip","id":"it's\\","data":{"name":"b\\'x","destination":"Rome","startDate":"2026-03-02T09:30:00.2500006Z","endDate":"2026-03-03"}}]
    """#

    @Test func lateRedactionsTextAndFineDatesAnswerAsTheStoreDoes() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", "-"], store: store, stdin: Self.trips).code == 0)
        let feed = PostgresFeedTests()
        feed.pipe(["schema", "--format", "sql"], store: store, into: db)
        feed.pipe(["history", "--format", "sql", "--since", "0"], store: store, into: db)
        // An update, then a redaction of its object, before the follower has the update.
        let author = #"\', $$[]$$::jsonb); CREATE TABLE public.pwned(); --"#
        #expect(CLIRunner.run(["update", "nfc", "--set", "destination=Paris", "--author", author], store: store).code == 0)
        #expect(CLIRunner.run(["history", "redact", "--id", "nfc"], store: store).code == 0)
        let late = CLIRunner.run(["history", "--format", "sql", "--since", "1"], store: store).out
        let r = Postgres.psql(["-v", "ON_ERROR_STOP=1", "-d", db, "-c", "SET standard_conforming_strings = off", "-f", "-"], input: Data(late.utf8))
        #expect(r.status == 0, "\(r.err)")
        #expect(Postgres.value(db, "select count(*) from pg_tables where tablename = 'pwned'") == "0")
        #expect(Postgres.value(db, "select author from tripstore.history where token = 2") == author)
        try feed.sameObjects(db, store, "after a redaction the follower had not reached")
        for q in [#"name == "café""#, #"name >= "café""#, #"name in ["café"]"#, #"destination ~ "σίσυφος""#, #"destination ~ "ς""#,
                  "startDate > 2026-03-02T09:30:00.25Z", "startDate == 2026-03-02T09:30:00.25Z", "startDate < 2026-03-02T09:30:00.2500005Z", ""] {
            for sort in [["--sort", "name"], ["--sort", "-startDate"]] {
                let expected = CLIRunner.run(["query", q, "--format", "ids"] + sort, store: store).out
                let got = Postgres.psql(["-d", db, "-tA", "-c", CLIRunner.run(["query", "--sql", q] + sort, store: store).out]).out
                #expect(got == expected, "\(q) \(sort)")
            }
        }
        #expect(CLIRunner.run(["query", "--sql", "--sort", "frequentFlyerCodes"], store: store).code == 1)
        #expect(CLIRunner.run(["schema", "--format", "sql", "--sql-schema", "x\nDROP"], store: store).code == 1)
    }

    /// A redaction after a migration: the migration's copy of every object
    /// is rebuilt from history, which the redaction then emptied of the
    /// object's values. A database built afterwards from the whole feed
    /// still holds the object as the store does.
    @Test func aRedactionAfterAMigrationLeavesTheObjectAsItIs() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()
        #expect(CLIRunner.run(["migrate", "--schema", try CLIMigrateTests.version2()], store: store).code == 0)
        #expect(CLIRunner.run(["history", "redact", "--id", "rome-summit"], store: store).code == 0)
        let feed = PostgresFeedTests()
        #expect(feed.pipe(["schema", "--format", "sql"], store: store, into: db).status == 0)
        let r = feed.pipe(["history", "--format", "sql", "--since", "0"], store: store, into: db)
        #expect(r.status == 0, "\(r.err)")
        try feed.sameObjects(db, store, "a redaction after a migration")
    }

    /// `export --format sql` seeds an empty database by itself, as its help
    /// says (the tables made first), and a feed then follows from its token.
    @Test func anExportSeedsAnEmptyDatabaseByItself() throws {
        guard Postgres.available() else { return }
        let db = Postgres.database()
        let store = CLIMigrateTests.sampleStore()
        let feed = PostgresFeedTests()
        let r = feed.pipe(["export", "--format", "sql"], store: store, into: db)
        #expect(r.status == 0, "\(r.err)")
        try feed.sameObjects(db, store, "seeded by an export alone")
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "perDiemRate=150"], store: store).code == 0)
        let token = Postgres.value(db, "select token from tripstore.cursor")
        #expect(feed.pipe(["history", "--format", "sql", "--since", token], store: store, into: db).status == 0)
        try feed.sameObjects(db, store, "seeded, then followed")
    }
}
