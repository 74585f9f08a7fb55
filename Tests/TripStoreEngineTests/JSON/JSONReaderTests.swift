import TripStoreModels
import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

@Suite struct JSONReaderTests {
    @Test(arguments: [
        ("null", JSONValue.null), ("true", .bool(true)), ("false", .bool(false)),
        ("0", .int(0)), ("-12", .int(-12)), ("1.5", .double(1.5)), ("-0.25e2", .int(-25)), ("-0.0", .int(0)), ("2.50e1", .int(25)),
        ("1E3", .int(1000)), ("9223372036854775807", .int(Int64.max)),
        ("-9223372036854775808", .int(Int64.min)), ("12345678901234567890", .double(Double("12345678901234567890")!)),
        ("\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\"", .string("a\"b\\c/d\u{8}\u{C}\n\r\t")),
        ("\"\\u00e9\\u20AC\"", .string("é€")), ("\"\\uD83D\\uDE00\"", .string("😀")),
        ("\"Zürich\"", .string("Zürich")), (" [ 1 , [ ] , { } ] ", .array([.int(1), .array([]), .object([])])),
        ("{\"a\":{\"b\":[null]}}", .object([JSONMember("a", .object([JSONMember("b", .array([.null]))]))])),
    ])
    func acceptsValidJSON(_ text: String, _ expected: TripStoreJSON.JSONValue) throws {
        #expect(try JSONReader.parse(text) == expected)
    }

    @Test(arguments: [
        ("", "expected a JSON value but the input ended at line 1, column 1"),
        ("[1,]", "expected a JSON value but found ']' at line 1, column 4"),
        ("{\"a\" 1}", "expected ':' after object member name at line 1, column 6"),
        ("{\"a\":1 \"b\":2}", "expected ',' or '}' after object member at line 1, column 8"),
        ("[1 2]", "expected ',' or ']' after array element at line 1, column 4"),
        ("01", "leading zeros are not allowed in numbers at line 1, column 1"),
        ("1.", "expected a digit after '.' in number at line 1, column 3"),
        ("+1", "expected a JSON value but found '+' at line 1, column 1"),
        ("1e", "expected a digit in the exponent of number at line 1, column 3"),
        ("\"\\uD800\"", "lone high surrogate \\uD800 in string at line 1, column 2"),
        ("\"\\uDC00\"", "lone low surrogate \\uDC00 in string at line 1, column 2"),
        ("\"\\x\"", "invalid escape '\\x' in string at line 1, column 2"),
        ("\"a\tb\"", "unescaped control character in string at line 1, column 3"),
        ("\"abc", "unterminated string at line 1, column 1"),
        ("tru", "invalid literal; expected true at line 1, column 1"),
        ("[1]\n\n  x", "unexpected 'x' after the JSON value at line 3, column 3"),
        ("{\n  \"a\": 1\n  \"b\": 2\n}", "expected ',' or '}' after object member at line 3, column 3"),
        ("{1:2}", "expected a member name in double quotes but found '1' at line 1, column 2"),
    ])
    func rejectsInvalidJSONWithPosition(_ text: String, _ message: String) {
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(text) }
        do {
            _ = try JSONReader.parse(text)
        } catch {
            #expect(error.description == message)
        }
    }

    @Test(arguments: [
        [0x22, 0xC0, 0xAF, 0x22],              // overlong '/'
        [0x22, 0xE0, 0x80, 0xAF, 0x22],        // overlong 3-byte
        [0x22, 0xED, 0xA0, 0x80, 0x22],        // UTF-8 encoded surrogate
        [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22],  // above U+10FFFF
        [0x22, 0x80, 0x22],                    // lone continuation byte
        [0x22, 0xC3, 0x22],                    // truncated sequence
        [0x22, 0xFF, 0x22],
    ] as [[UInt8]])
    func rejectsInvalidUTF8(_ bytes: [UInt8]) {
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(bytes) }
    }

    @Test func limitsNestingDepth() throws {
        let ok = String(repeating: "[", count: 512) + String(repeating: "]", count: 512)
        #expect(throws: Never.self) { try JSONReader.parse(ok) }
        let deep = String(repeating: "[", count: 100_000)
        #expect(throws: JSONSyntaxError.self) { try JSONReader.parse(deep) }
    }

    @Test func numbersRoundTripExactly() throws {
        for d in [0.1, 1e-7, 123456.789, Double.leastNonzeroMagnitude, 1.7976931348623157e308, 2.5, 100.0, -0.5, 3.14159265358979] {
            var w = JSONWriter()
            w.double(d)
            #expect(try JSONReader.parse(w.bytes).doubleValue == d, "\(d) wrote \(w.string)")
        }
    }

    @Test func parseWriteParseIsStable() throws {
        let text = #"{"a":[1,2.5,-3e-2,"x\n\"y\"",true,false,null,{"b":"Zürich 😀 \u0001"}],"c":{}}"#
        let v = try JSONReader.parse(text)
        var w = JSONWriter()
        w.value(v)
        #expect(try JSONReader.parse(w.bytes) == v)
        #expect(w.string == #"{"a":[1,2.5,-0.03,"x\n\"y\"",true,false,null,{"b":"Zürich 😀 \u0001"}],"c":{}}"#)
    }

    /// Strings are quoted eight bytes at a time where nothing needs an
    /// escape: every byte value, at every place in a word, still gets the
    /// escape a byte-at-a-time writer gives it (fixed seed).
    /// The fast path reads a plain string (keys, ids, dates) eight bytes at
    /// a time: any byte it may not hold, at any offset, still sends it back.
    @Test func plainStringsStopAtEveryByteTheyMayNotHold() {
        for special in 0...255 {
            for at in 0..<24 {
                var bytes = Array(repeating: UInt8(ascii: "a"), count: 24)
                bytes[at] = UInt8(special)
                let text = [0x22] + bytes + [0x22, 0x20]
                let plain = special >= 0x20 && special < 0x80 && special != 0x5C
                let expected: Range<Int>? = special == 0x22 ? 1..<(1 + at) : plain ? 1..<25 : nil
                let got = text.withUnsafeBufferPointer { buf -> Range<Int>? in
                    var r = JSONReader(buffer: buf)
                    return try? r.plainString()
                }
                #expect(got == expected, "byte \(special) at \(at)")
            }
        }
    }

    /// The count of plain bytes before the first that is not, in random
    /// words dense with bytes that end a run (fixed seed), is exact.
    @Test func aWordsPlainPrefixEndsAtItsFirstByteThatIsNotPlain() {
        var state: UInt64 = 7
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let ends: [UInt8] = [0x00, 0x1F, 0x22, 0x5C, 0x80, 0xFF, 0x20, 0x21, 0x7F]
        for _ in 0..<20_000 {
            let bytes = (0..<8).map { _ in next() % 3 == 0 ? ends[Int(next() % UInt64(ends.count))] : UInt8(0x20 + next() % 0x5F) }
            let word = bytes.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(as: UInt64.self)) }
            let expected = bytes.firstIndex { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C || $0 >= 0x80 } ?? 8
            #expect(JSONReader.plainPrefix(word) == expected, "\(bytes)")
        }
    }

    /// A byte is found wherever it is in a range, of any length and start,
    /// and only there (ids are checked for DEL this way).
    @Test func aByteIsFoundAnywhereInARange() {
        for length in 0..<30 {
            for start in 0..<3 {
                for at in -1..<length {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: 40)
                    // DEL and its neighbours, which a carry could confuse with it.
                    bytes[start + length] = 0x7F
                    if start > 0 { bytes[start - 1] = 0x7F }
                    if at >= 0 { bytes[start + at] = 0x7F } else if length > 0 { bytes[start] = 0x7E; bytes[start + length - 1] = 0x80 }
                    let found = bytes.withUnsafeBufferPointer { JSONReader(buffer: $0).contains(0x7F, in: start..<(start + length)) }
                    #expect(found == (at >= 0), "DEL at \(at) of \(length) from \(start)")
                }
            }
        }
    }

    @Test func quotedStringsEscapeEveryByteThatNeedsIt() {
        func reference(_ bytes: [UInt8]) -> [UInt8] {
            var out: [UInt8] = [0x22]
            for b in bytes {
                switch b {
                case 0x22: out += [0x5C, 0x22]
                case 0x5C: out += [0x5C, 0x5C]
                case 0x0A: out += Array(#"\n"#.utf8)
                case 0x0D: out += Array(#"\r"#.utf8)
                case 0x09: out += Array(#"\t"#.utf8)
                case 0x08: out += Array(#"\b"#.utf8)
                case 0x0C: out += Array(#"\f"#.utf8)
                case 0..<0x20: out += Array(String(format: "\\u%04x", b).utf8)
                default: out.append(b)
                }
            }
            return out + [0x22]
        }
        var state: UInt64 = 42
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        /// Both writers (`ByteOutput`, the snapshot's, takes a path of its own for short strings).
        func quoted(_ bytes: [UInt8]) -> (writer: [UInt8], output: [UInt8]) {
            var w = JSONWriter()
            bytes.withUnsafeBytes { w.appendQuoted(utf8: $0) }
            var o = ByteOutput(capacity: 1)
            bytes.withUnsafeBytes { o.appendQuoted(utf8: $0) }
            return (w.bytes, Array(o.bytes))
        }
        // Plain text with one byte of every value at every offset of a string
        // of whole words, and of one that ends mid-word (its last eight bytes are read again).
        for length in [24, 13] {
            for special in 0...255 {
                for at in 0..<length {
                    var bytes = Array(repeating: UInt8(ascii: "a"), count: length)
                    bytes[at] = UInt8(special)
                    let (w, o) = quoted(bytes)
                    #expect(w == reference(bytes) && o == w, "byte \(special) at \(at) of \(length)")
                }
            }
        }
        // Random lengths and mixes, UTF-8 high bytes among them.
        let alphabet: [UInt8] = [0x00, 0x01, 0x1F, 0x20, 0x21, 0x22, 0x5B, 0x5C, 0x5D, 0x7F, 0x80, 0xA2, 0xC3, 0xDF, 0xE2, 0xFF, 0x41, 0x7A]
        for _ in 0..<3000 {
            let bytes = (0..<next(40)).map { _ in next(4) == 0 ? alphabet[next(alphabet.count)] : UInt8(0x61 + next(26)) }
            let (w, o) = quoted(bytes)
            #expect(w == reference(bytes) && o == w)
        }
    }

    @Test func prettyWriterIndentsTwoSpaces() {
        var w = JSONWriter(pretty: true)
        w.value(.object([JSONMember("a", .array([.int(1), .int(2)])), JSONMember("b", .object([]))]))
        #expect(w.string == "{\n  \"a\": [\n    1,\n    2\n  ],\n  \"b\": {}\n}")
    }

    @Test func streamsArrayElements() throws {
        let bytes = Array("[ {\"a\":1}, 2 ,\"x\" ]".utf8)
        var seen: [JSONValue] = []
        try bytes.withUnsafeBufferPointer { buf in
            var r = JSONReader(buffer: buf)
            try r.forEachArrayElement { _, _, v in seen.append(v) }
        }
        #expect(seen == [.object([JSONMember("a", .int(1))]), .int(2), .string("x")])
    }

    /// The bulk import's split of a top-level array (which skips through
    /// strings eight bytes at a time) finds exactly the elements written,
    /// whatever quotes, escapes and brackets the strings hold and wherever
    /// they fall (fixed seed).
    @Test func arrayElementsSplitsAtEveryElement() {
        var state: UInt64 = 42
        func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
        let pieces = ["a", "bc", "é", "\\\"", "\\\\", "\\n", "}", "]", ",", "{", "[", "\\u0022", "0123456789abcdef"]
        func string() -> String { "\"" + (0..<next(12)).map { _ in pieces[next(pieces.count)] }.joined() + "\"" }
        func blank() -> String { [" ", "", "\n", "\t ", ""][next(5)] }
        for _ in 0..<300 {
            var text = "[" + blank()
            var expected: [Range<Int>] = []
            for k in 0..<(1 + next(6)) {
                if k > 0 { text += "," }
                let start = text.utf8.count
                let element = next(2) == 0 ? string() : "{\"k\":\(string()),\"n\":[1,{\"x\":\(string())}]}"
                text += blank() + element + blank()
                expected.append(start..<text.utf8.count)
            }
            text += "]" + blank()
            let bytes = Array(text.utf8)
            let found = bytes.withUnsafeBufferPointer { ArrayElements.split($0, openingAt: 0) }
            // The first element's range starts after the opening bracket, blanks included.
            var want = expected
            want[0] = 1..<want[0].upperBound
            #expect(found == want, "\(text)")
        }
    }

    /// JSONTestSuite (its cases kept in `Fixtures/JSONTestSuite`): y_
    /// accepted, n_ rejected, i_ either way, never a crash.
    @Test func conformanceSuite() throws {
        let folder = TestFolders.projectRoot + "/Tests/TripStoreEngineTests/Fixtures/JSONTestSuite/test_parsing"
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        var checked = 0
        for name in names.sorted() where name.hasSuffix(".json") {
            let bytes = try Array(Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)))
            let accepted = (try? JSONReader.parse(bytes)) != nil
            #expect(Self.verdict(bytes) == Self.validateVerdict(bytes), "\(name): validate and parse disagree")
            if name.hasPrefix("y_") { #expect(accepted, "\(name) should be accepted") }
            if name.hasPrefix("n_") { #expect(!accepted, "\(name) should be rejected") }
            checked += 1
        }
        #expect(checked >= 300)
    }

    /// nil when accepted, else the error message (with its line and column).
    static func verdict(_ bytes: [UInt8]) -> String? {
        do { _ = try JSONReader.parse(bytes); return nil } catch { return "\(error)" }
    }

    static func validateVerdict(_ bytes: [UInt8]) -> String? {
        do { try bytes.withUnsafeBufferPointer { (b) throws(JSONSyntaxError) in try JSONReader.validate(b) }; return nil } catch { return "\(error)" }
    }

    /// The validating pass says what the tree parser says, error for error, on mutated input.
    @Test func validateAgreesWithParseOnMutatedInput() {
        var rng = RandomQueries(state: 4242)
        var refused = 0
        for _ in 0..<ReaderFuzzTests.cases {
            let input = ReaderFuzzTests.mutate(ReaderFuzzTests.sample, &rng)
            let v = Self.verdict(input)
            #expect(v == Self.validateVerdict(input))
            if v != nil { refused += 1 }
        }
        #expect(refused > 0)
        let deep = Array(repeating: UInt8(ascii: "["), count: 600)
        #expect(Self.validateVerdict(deep) == Self.verdict(deep))
    }
}
