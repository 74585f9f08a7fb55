import TripStoreModels
import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// A number for an Int attribute is exactly a whole number in range, kept
/// exactly, or refused: never rounded through a Double, on every path.
@Suite struct ExactIntegerTests {
    static let values: [Int64] = [
        1 << 53 - 1, 1 << 53, 1 << 53 + 1, 12_345_678_901_234_567, 9_223_372_036_854_775_800,
        Int64.max, Int64.max - 1, Int64.min, Int64.min + 1, -(1 << 53) - 1, -12_345_678_901_234_567, 1 << 62 + 3, 0, 7,
    ]

    /// The value as an integer, with zeros after a point, and in exponent form.
    static func texts(_ v: Int64) -> [String] {
        let sign = v < 0 ? "-" : ""
        let digits = String(String(v).drop { $0 == "-" })
        var out = ["\(v)", "\(v).0", "\(v).000", "\(sign)\(digits)e0"]
        if v != 0 { out += ["\(sign)\(digits)0e-1", "\(sign)\(digits)00E-2"] }
        if digits.count > 1 {
            out.append("\(sign)\(digits.prefix(1)).\(digits.dropFirst())e\(digits.count - 1)")
            out.append("\(sign)\(digits.prefix(1)).\(digits.dropFirst())000E+\(digits.count - 1)")
        }
        return out
    }

    @Test func theReaderKeepsWholeNumbersExactly() throws {
        for v in Self.values {
            for t in Self.texts(v) {
                #expect(try JSONReader.parse(t) == .int(v), "\(t)")
            }
        }
        for t in ["1.5", "9007199254740993.5", "12345678901234567.1", "1e-1", "9.3e18", "-9.3e18", "1e19", "1e-400", "1.7976931348623157e308"] {
            guard case .double = try JSONReader.parse(t) else {
                Issue.record("\(t) is not an integer")
                continue
            }
        }
    }

    func film(_ id: String, screens: String) -> [UInt8] {
        Array(#"[{"type":"ShortFilm","id":"\#(id)","data":{"title":"t","screens":\#(screens)}}]"#.utf8)
    }

    @Test func importUpdateAndQueriesKeepTheExactValue() throws {
        let folder = TestFolders.make("exact-int")
        let store = try Store.open(folder, schema: FilmSchema.schema, access: .write)
        let slot = try #require(FilmSchema.schema.entity(named: "ShortFilm")?.property(named: "screens")).slot
        var k = 0
        for v in Self.values {
            for t in Self.texts(v) {
                k += 1
                var tx = store.transaction()
                try store.stage(try EnvelopeInput.decode(film("f\(k)", screens: t), schema: store.schema), mode: .insert, into: &tx)
                try store.commit(tx, author: "t")
                #expect(store.object(id: "f\(k)")?.values[slot] == .int(v), "import of \(t)")
                // The update path reads the same text the same way.
                var up = store.transaction()
                try store.stageUpdate(try store.rows(forIDs: ["f\(k)"]), set: [("screens", "1")], into: &up)
                try store.stageUpdate(try store.rows(forIDs: ["f\(k)"]), set: [("screens", t)], into: &up)
                try store.commit(up, author: "t")
                #expect(store.object(id: "f\(k)")?.values[slot] == .int(v), "update to \(t)")
            }
            // The index and a scan agree on the exact value.
            let q = try Query("screens == \(v)", from: "ShortFilm")
            let indexed = try store.run(q).rows
            let scanned = store.rowsInIDOrder().filter { store.object(at: $0)?.values[slot] == .int(v) }
            #expect(Set(indexed) == Set(scanned) && indexed.count == Self.texts(v).count, "screens == \(v): \(indexed.count) by index, \(scanned.count) by scan")
        }
        store.close()
        let reopened = try Store.open(folder, schema: FilmSchema.schema, access: .read)
        #expect(reopened.object(id: "f1")?.values[slot] == .int(Self.values[0]))
    }

    @Test func aFractionOrANumberPastAnIntIsRefusedNamingTheProperty() throws {
        for t in ["1.5", "9007199254740993.5", "12345678901234567.1", "9.3e18", "-9.3e18", "1e19", "9223372036854775808",
                  "1e-400", "9223372036854775806.9999999999999999999"] {
            do {
                _ = try EnvelopeInput.decode(film("x", screens: t), schema: FilmSchema.schema)
                Issue.record("\(t) was accepted")
            } catch {
                #expect("\(error)".contains("screens"), "\(t): \(error)")
            }
            let store = try Store.open(TestFolders.make("exact-int-update"), schema: FilmSchema.schema, access: .write)
            var tx = store.transaction()
            try store.stage(try EnvelopeInput.decode(film("x", screens: "1"), schema: store.schema), mode: .insert, into: &tx)
            try store.commit(tx, author: "t")
            var up = store.transaction()
            #expect(throws: StoreError.self, "update to \(t)") {
                try store.stageUpdate(try store.rows(forIDs: ["x"]), set: [("screens", t)], into: &up)
            }
        }
    }

    @Test func theBulkImportKeepsTheExactValue() throws {
        var input: [UInt8] = Array("[".utf8)
        var expected: [String: Int64] = [:]
        var k = 0
        for v in Self.values {
            for t in Self.texts(v) {
                k += 1
                if k > 1 { input += Array(",".utf8) }
                input += Array(#"{"type":"ShortFilm","id":"b\#(k)","data":{"title":"t","screens":\#(t)}}"#.utf8)
                expected["b\(k)"] = v
            }
        }
        input += Array("]".utf8)
        var options = StoreOptions()
        options.snapshotCommitChanges = 1
        let store = try Store.open(TestFolders.make("exact-int-bulk"), schema: FilmSchema.schema, access: .write, options: options)
        #expect(try BulkImporter(store).insert(&input, author: "t") != nil, "the bulk path took it")
        let slot = try #require(FilmSchema.schema.entity(named: "ShortFilm")?.property(named: "screens")).slot
        for (id, v) in expected { #expect(store.object(id: id)?.values[slot] == .int(v), "\(id)") }
    }
}

/// The reader's whole-number rule against Foundation's Decimal, which holds
/// these texts exactly: random numbers (fixed seed) with and without
/// fractions, zeros and exponents.
@Suite struct WholeNumberDifferentialTests {
    @Test func wholeNumbersAreTheIntegersDecimalSaysTheyAre() throws {
        var random = RandomQueries(state: 4242)
        let maximum = Decimal(string: "9223372036854775807")!, minimum = Decimal(string: "-9223372036854775808")!
        for _ in 0..<20_000 {
            var text = random.int(3) == 0 ? "-" : ""
            let intDigits = random.int(21)
            if intDigits == 0 { text += "0" } else {
                text += String(1 + random.int(9))
                for _ in 1..<intDigits { text += String(random.int(4) == 0 ? random.int(10) : 0) }
            }
            if random.int(2) == 0 {
                text += "."
                for _ in 0..<(1 + random.int(5)) { text += String(random.int(3) == 0 ? random.int(10) : 0) }
            }
            if random.int(2) == 0 { text += ["e", "E", "e+", "e-"][random.int(4)] + String(random.int(26)) }
            let reference = try #require(Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), "\(text)")
            var rounded = Decimal(), copy = reference
            NSDecimalRound(&rounded, &copy, 0, .plain)
            let whole = rounded == reference && reference >= minimum && reference <= maximum
            let parsed = try JSONReader.parse(text)
            if whole {
                let expected = reference.isZero ? 0 : Int64(NSDecimalNumber(decimal: reference).stringValue)
                #expect(parsed == .int(try #require(expected, "\(text)")), "\(text)")
            } else {
                guard case .double = parsed else {
                    Issue.record("\(text) is not a whole number within Int64, yet read as \(parsed)")
                    continue
                }
            }
        }
    }
}
