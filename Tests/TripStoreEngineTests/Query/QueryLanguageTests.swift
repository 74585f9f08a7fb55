import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct QueryLanguageTests {
    /// A small film store: every type of the three-level hierarchy.
    static func filmStore() throws -> Store {
        let text = """
        {"type":"Studio","id":"ghibli","data":{"name":"Ghibli"}}
        {"type":"FeatureFilm","id":"f1","data":{"title":"Spirited Away","budget":19.2,"released":"2001-07-20","screens":300,"runtimeMinutes":125,"genre":"animation","studio":{"id":"ghibli"},"credits":[{"type":"Credit","id":"c1","data":{"person":"Hayao Miyazaki","role":"director"}},{"type":"Credit","id":"c2","data":{"person":"Joe Hisaishi","role":"composer"}}]}}
        {"type":"FeatureFilm","id":"f2","data":{"title":"Amélie","released":"2001-04-25","screens":120,"runtimeMinutes":122,"genre":"comedy"}}
        {"type":"ShortFilm","id":"s1","data":{"title":"La Jetée","screens":3,"festival":"Cannes"}}
        {"type":"TheatricalRelease","id":"t1","data":{"title":"Straße","screens":10}}
        {"type":"TVSpecial","id":"tv1","data":{"title":"ZÜRICH Nights","network":"SRF","tags":["music","live"],"studio":{"id":"ghibli"}}}
        {"type":"Production","id":"p1","data":{"title":"Untitled"}}
        """
        let store = try Store.open(TestFolders.make("films"), schema: FilmSchema.schema, access: .write)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Array(text.utf8), schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "t")
        return store
    }

    func ids(_ store: Store, _ q: String, from: String = "Production", sort: String? = nil) throws -> [String] {
        try store.run(try Query(q, from: from, sort: sort.map(SortKey.parseList) ?? [])).rows.map { store.table.object(at: $0)!.id }
    }

    @Test(arguments: [
        ("is Production", ["f1", "f2", "p1", "s1", "t1", "tv1"]),
        ("is TheatricalRelease", ["f1", "f2", "s1", "t1"]),
        ("is exactly TheatricalRelease", ["t1"]),
        ("is FeatureFilm", ["f1", "f2"]),
        ("is exactly Production", ["p1"]),
        ("!is TheatricalRelease", ["p1", "tv1"]),
        ("is TVSpecial || is ShortFilm", ["s1", "tv1"]),
    ])
    func deepAndExactTypeTests(_ q: String, _ expected: [String]) throws {
        #expect(try ids(try Self.filmStore(), q) == expected)
    }

    @Test(arguments: [
        ("screens > 100", ["f1", "f2"]),
        ("screens != 3", ["f1", "f2", "t1"]),                       // TVSpecial lacks screens: false
        ("!(screens == 3)", ["f1", "f2", "p1", "t1", "tv1"]),       // ! negates the false
        ("genre == \"comedy\"", ["f2"]),
        ("genre in [\"comedy\", \"animation\",]", ["f1", "f2"]),
        ("genre in []", []),
        ("budget == nil", ["f2", "p1", "s1", "t1", "tv1"]),
        ("budget != nil", ["f1"]),
        ("budget != 5", ["f1", "f2", "p1", "s1", "t1", "tv1"]),     // nil != 5 is true
        ("budget < 100", ["f1"]),                                   // nil < 100 is false
        ("released >= 2001-05-01", ["f1"]),
        ("released < \"2001-05-01T00:00:00+02:00\"", ["f2"]),
        ("title ~ \"zurich\"", ["tv1"]),
        ("title ~ \"AMELIE\"", ["f2"]),
        ("title ~ \"strasse\"", ["t1"]),
        ("title ^= \"la \"", ["s1"]),
        ("title ~ \"\"", ["f1", "f2", "p1", "s1", "t1", "tv1"]),
        ("title == \"Amélie\"", ["f2"]),
        ("title == \"amélie\"", []),
        ("title < \"B\"", ["f2"]),
        ("festival ~ \"cannes\" || network == \"SRF\"", ["s1", "tv1"]),
        ("studio.name == \"Ghibli\"", ["f1", "tv1"]),
        ("studio.name == nil", ["f2", "p1", "s1", "t1"]),
        ("studio == nil", ["f2", "p1", "s1", "t1"]),
        ("any credits.role == \"composer\"", ["f1"]),
        ("all credits.role == \"composer\"", ["f2", "p1", "s1", "t1", "tv1"]),  // all over empty is true
        ("count(credits) >= 2", ["f1"]),
        ("any tags == \"live\"", ["tv1"]),
        ("count(tags) > 0", ["tv1"]),
        ("runtimeMinutes > 120 and not genre == \"comedy\" or festival != nil", ["f1", "s1"]),
        ("", ["f1", "f2", "p1", "s1", "t1", "tv1"]),
    ])
    func operatorsFollowSwiftSemantics(_ q: String, _ expected: [String]) throws {
        #expect(try ids(try Self.filmStore(), q) == expected, "\(q)")
    }

    @Test func sortingPutsNilFirstAscendingAndLastDescending() throws {
        let store = try Self.filmStore()
        #expect(try ids(store, "", sort: "screens") == ["p1", "tv1", "s1", "t1", "f2", "f1"])
        #expect(try ids(store, "", sort: "-screens") == ["f1", "f2", "t1", "s1", "p1", "tv1"])
        #expect(try ids(store, "", sort: "-budget,title") == ["f1", "f2", "s1", "t1", "p1", "tv1"])
    }

    @Test(arguments: [
        ("is BusinessTrip && destination ~", "expected a value after '~' at column 33"),
        ("reasn == \"family\"", "Trip and its subclasses have no property 'reasn' (did you mean 'reason'?) at column 1"),
        ("is BusinesTrip", "unknown type 'BusinesTrip' (did you mean 'BusinessTrip'?) at column 4"),
        ("is BucketListItem", "'BucketListItem' is not a Trip; 'is' takes Trip or one of its subclasses at column 4"),
        ("reason == \"fun\"", "'fun' is not a Reason; expected one of \"family\", \"reunion\", \"vacation\", \"wellness\", \"unknown\" at column 11"),
        ("perDiemRate > \"x\"", "'perDiemRate' is a Double; compare it with a number, found \"x\" at column 15"),
        ("startDate > 2026-02-30", "'2026-02-30' is not a date; write 2026-06-01 or 2026-06-01T09:00:00Z at column 13"),
        ("name = \"x\"", "'=' is not an operator; use '==' to compare at column 6"),
        ("(name ~ \"x\"", "expected ')' to close the '(' at column 1, found the end of the query at column 12"),
        ("name ~ \"x\" name", "expected '&&', '||' or the end of the query, found 'name' at column 12"),
        ("destination ~ Rome", "expected a value after '~', found 'Rome' (put text in quotes: \"Rome\") at column 15"),
        ("bucketList.title == \"x\"", "'bucketList' is a to-many relationship; use 'any bucketList.title' or 'all bucketList.title' at column 1"),
        ("frequentFlyerCodes == \"x\"", "'frequentFlyerCodes' is a [String]; use any, all or count(…) at column 1"),
        ("name ~ \"unterminated", "unterminated string; add a closing \" at column 8"),
        ("livingAccommodation == \"x\"", "'livingAccommodation' is a to-one relationship; compare it with nil, or compare one of its properties ('livingAccommodation.name') at column 1"),
        ("perDiemRate < nil", "only == and != compare with nil at column 15"),
        (#"name == "\ud83d""#, #"\uD83D is half of a surrogate pair; write the pair (\uD83D\uDE00) or the character itself at column 10"#),
        (#"name == "\ude00\ud83d""#, #"\uDE00 is half of a surrogate pair; write the pair (\uD83D\uDE00) or the character itself at column 10"#),
        (#"name == "\ud83d\u0041""#, #"\uD83D is half of a surrogate pair; write the pair (\uD83D\uDE00) or the character itself at column 10"#),
        (#"name == "\u+041""#, #"\u needs four hex digits of a valid character at column 10"#),
    ])
    func errorsNameTheColumnAndSuggest(_ q: String, _ message: String) throws {
        let store = Store.empty(schema: TripSchema.schema)
        do {
            _ = try store.run(try Query(q))
            Issue.record("no error for \(q)")
        } catch {
            #expect(error.description == message)
        }
    }

    /// A character beyond U+FFFF escaped as JSON escapes it (a surrogate
    /// pair) is that character, in either case of hex digits.
    @Test func surrogatePairEscapesAreOneCharacter() throws {
        var lexer = QueryLexer(#""\ud83d\uDE00 \u00e9""#)
        let token = try lexer.next()
        #expect(token.kind == .string("😀 é"))
    }

    @Test(arguments: [
        ("0", IntegerLiteral.exact(0)), ("-0.000", .exact(0)), ("+12", .exact(12)), ("1.5e1", .exact(15)), ("150e-1", .exact(15)),
        ("-2.5", .between(floor: -3)), ("2.5", .between(floor: 2)), ("0.001", .between(floor: 0)), ("-1e-300", .between(floor: -1)),
        ("9223372036854775807", .exact(.max)), ("9223372036854775808", .above), ("9223372036854775807.5", .between(floor: .max)),
        ("-9223372036854775808", .exact(.min)), ("-9223372036854775808.5", .below), ("-9223372036854775809", .below),
        ("1e19", .above), ("-1e99999999999999", .below), ("1e-99999999999999", .between(floor: 0)), ("00012.000e+0", .exact(12)),
    ])
    func integerLiteralsKeepTheirExactValue(_ text: String, _ expected: IntegerLiteral) {
        #expect(IntegerLiteral(text) == expected)
    }

    /// An unknown `--from` names the type and points at it, not into the predicate.
    @Test func unknownFromTypeIsNamedWhereItIs() throws {
        let store = Store.empty(schema: TripSchema.schema)
        do {
            _ = try store.run(try Query("is Trip", from: "BusinesTrip"))
            Issue.record("no error")
        } catch {
            #expect(error.description == "unknown type 'BusinesTrip' to query from (did you mean 'BusinessTrip'?) at column 1")
            #expect(error.caretDisplay == "  BusinesTrip\n  ^")
        }
    }

    @Test func caretPointsUnderTheColumn() throws {
        do {
            _ = try Query("destination ~ ")
        } catch {
            #expect(error.caretDisplay == "  destination ~ \n                ^")
        }
    }

    @Test(arguments: [("ZÜRICH", "zurich"), ("Róme, Italy", "rome"), ("Straße", "STRASSE"), ("Ærø", "ærø"), ("Łódź", "łodz"), ("İstanbul", "istanbul")])
    func foldingIgnoresCaseAndDiacritics(_ text: String, _ needle: String) {
        #expect(TextFolding.contains(TextFolding.fold(text), TextFolding.fold(needle)))
    }

    @Test func foldingKeepsLettersThatAreNotDiacritics() {
        #expect(TextFolding.fold("ø") == "ø")
        #expect(TextFolding.fold("æ") == "æ")
        #expect(!TextFolding.contains(TextFolding.fold("Tromsø"), "tromso"))
    }

    @Test func explainShowsTheIndexesUsed() throws {
        let store = try QueryDifferentialTests.makeStore().0
        let b = try store.run(try Query(#"is BusinessTrip && destination ~ "Rome""#))
        #expect(b.plan.operations == ["text index", "intersect", "sort", "result"])
        #expect(b.plan.steps[0].detail.hasPrefix(#"Trip.destination ~ "Rome" ("#))
        #expect(b.plan.steps[1].detail.hasPrefix("type index is BusinessTrip"))
        let c = try store.run(try Query(#"is PersonalTrip && reason == "family" && startDate >= 2026-06-01"#))
        #expect(c.plan.operations == ["hash index", "intersect", "sort", "result"])
        #expect(c.plan.steps[0].detail.hasPrefix(#"PersonalTrip.reason == "family" ("#))
        #expect(c.plan.steps[1].detail.hasPrefix("type index is PersonalTrip & range index Trip.startDate >= 2026-06-01"))
        let a = try store.run(try Query("is BusinessTrip"), countOnly: true)
        #expect(a.plan.operations == ["type index", "count"])
        let d = try store.run(try Query("perDiemRate > 100", sort: [SortKey("startDate", descending: true)], limit: 20))
        #expect(d.plan.operations == ["sort index", "result"])
        let scan = try store.run(try Query("mileageRate > 0.5"))
        #expect(scan.plan.operations == ["scan", "filter", "sort", "result"])
        #expect(scan.plan.steps[0].detail == "scan of Trip and its subclasses")
    }
}
