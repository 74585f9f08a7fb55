import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore

/// Hostile queries: repeated list values, deep nesting, counts past Int's range.
@Suite struct QueryLimitsTests {
    @Test func aValueRepeatedInAListMatchesEachObjectOnce() throws {
        let store = try QueryLanguageTests.filmStore()
        for q in [#"genre in ["comedy", "comedy"]"#, #"genre in ["comedy", "comedy"] && screens > 0"#,
                  #"title in ["Amélie", "Ame\u0301lie"]"#, #"screens in [300, 300.0]"#] {
            #expect(try QueryLanguageTests().ids(store, q).count == 1, "\(q)")
        }
    }

    @Test(arguments: ["(", "!", "not "])
    func nestingIsLimitedTo256LevelsWithTheColumnOfThe257thOpener(_ opener: String) throws {
        let ok = String(repeating: opener, count: 256) + "screens > 1" + (opener == "(" ? String(repeating: ")", count: 256) : "")
        _ = try QueryParser.parse(ok)
        let deep = String(repeating: opener, count: 20_000) + "screens > 1"
        #expect {
            try QueryParser.parse(deep)
        } throws: { error in
            guard let e = error as? QueryError else { return false }
            return e.column == 256 * opener.count + 1 && e.message.contains("nesting deeper than 256")
        }
    }

    @Test func aCountComparedWithAHugeNumberAnswersWithoutTrapping() throws {
        let store = try QueryLanguageTests.filmStore()
        #expect(try QueryLanguageTests().ids(store, "count(credits) >= 9223372036854775807").isEmpty)
        #expect(try QueryLanguageTests().ids(store, "count(credits) < 100000000000000000000000").count == 6)
        #expect(throws: QueryError.self) { try QueryLanguageTests().ids(store, "count(credits) < 1e300") }
        #expect(try QueryLanguageTests().ids(store, "count(credits) > -9223372036854775808").count == 6)
    }
}

@Suite struct LockFileTests {
    @Test func aLockThatIsASymbolicLinkIsNotFollowed() throws {
        let folder = TestFolders.make("lock-link")
        let target = folder + "-target"
        try "keep me".write(toFile: target, atomically: false, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: folder + "/tripstore.lock", withDestinationPath: target)
        #expect(throws: StoreError.self) { try Store.open(folder, schema: FilmSchema.schema, access: .write) }
        #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me")
    }
}

@Suite struct EnumOrderingTests {
    @Test func enumsOrderByRawValueWithAnyString() throws {
        let store = try QueryLanguageTests.filmStore()
        let t = QueryLanguageTests()
        #expect(try t.ids(store, #"genre >= "c""#, from: "FeatureFilm") == ["f2"])
        #expect(try t.ids(store, #"genre < "b""#, from: "FeatureFilm") == ["f1"])
        #expect(try t.ids(store, #"genre > "zzz""#, from: "FeatureFilm").isEmpty)
        #expect(throws: QueryError.self) { try t.ids(store, #"genre == "musical""#, from: "FeatureFilm") }
    }
}

@Suite struct CaseFoldingTests {
    @Test(arguments: [
        ("STRAẞE", "strasse", true), ("Straße", "STRASSE", true), ("Island", "ı", false), ("ıi", "ı", true),
        ("Róme, Italy", "rome", true), ("ΣΊΣΥΦΟΣ", "σίσυφος", true), ("ﬁle", "FILE", true), ("Øresund", "oresund", false),
    ])
    func foldingFollowsUnicodeFullCaseFolding(_ text: String, _ needle: String, _ matches: Bool) {
        #expect(TextFolding.contains(TextFolding.fold(text), TextFolding.fold(needle)) == matches)
    }

    @Test func everyTableEntryFoldsAsPythonsCasefoldDid() {
        #expect(TextFolding.caseFolding.count == 1530)
        #expect(TextFolding.caseFolding[0x1E9E] == ["s", "s"])
        #expect(TextFolding.caseFolding[0x0131] == nil)
        #expect(TextFolding.caseFolding[0x0130] == ["i", "\u{307}"])
    }
}
