import Foundation
import Testing
import TripStoreCLI
@testable import TripStoreFormat
@testable import TripStoreSystem

/// `verify` and `verify --repair` on a store an older version left with a
/// dangling reference, as a person would run them.
@Suite struct CLIVerifyTests {
    /// A sample store compacted, whose snapshot then holds `null` in place of
    /// the first bucket-list reference (with a correct checksum), image removed.
    func damagedStore() throws -> String {
        try storeWithEditedSnapshot { lines in
            let i = try #require(lines.firstIndex { $0.contains(#""bucketList":[{"id":""#) })
            let range = try #require(lines[i].range(of: #"\{"id":"[^"]*"\}"#, options: .regularExpression))
            lines[i].replaceSubrange(range, with: "null")
        }
    }

    /// The sample store compacted, its snapshot's lines (trailer aside) edited
    /// by `edit` and sealed with a correct checksum, its image removed.
    func storeWithEditedSnapshot(_ edit: (inout [String]) throws -> Void) throws -> String {
        let s = CLIRunner.runRoot + "verify-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        let name = try #require(try FileManager.default.contentsOfDirectory(atPath: s).first { $0.hasSuffix(".jsonl") && $0.hasPrefix("snapshot-") })
        let path = s + "/" + name
        var lines = try String(contentsOfFile: path, encoding: .utf8).split(separator: "\n").map(String.init)
        // Sealed as a trailer without `lastCommit` (still read) is: over the body alone.
        let trailer = lines.removeLast().replacingOccurrences(of: #""lastCommit":"[^"]*","#, with: "", options: .regularExpression)
        try edit(&lines)
        let body = Array((lines.joined(separator: "\n") + "\n").utf8)
        let counts = try #require(trailer.range(of: #""crc32c":"[0-9a-f]+""#, options: .regularExpression))
        let fixed = trailer.replacingCharacters(in: counts, with: #""crc32c":"\#(CRC32C.hex(CRC32C.checksum(body)))""#)
        try Data(body + Array((fixed + "\n").utf8)).write(to: URL(fileURLWithPath: path))
        try? FileManager.default.removeItem(atPath: path.replacingOccurrences(of: ".jsonl", with: ".image"))
        return s
    }

    /// A history line whose checksum holds but which is no transaction (here a
    /// group of inserts with no ids) is damage for `history` too, never a
    /// transaction left out in silence.
    @Test func anUnreadableHistoryLineIsDamageThatHistoryReports() throws {
        let s = try storeWithEditedSnapshot { lines in
            let i = try #require(lines.lastIndex { $0.hasPrefix(#"{"token":1,"#) })
            let range = try #require(lines[i].range(of: #""ids":\["[^\]]*\]"#, options: .regularExpression))
            lines[i].replaceSubrange(range, with: #""ids":[]"#)
        }
        let history = CLIRunner.run(["history", "--format", "jsonl"], store: s)
        #expect(history.code == 2)
        #expect(history.out == "")
        #expect(history.err.contains("unreadable history transaction"))
        #expect(CLIRunner.run(["verify"], store: s).code == 2)
    }

    /// A reference to an object of the wrong type (a hand edit that kept the
    /// checksum) is damage at open, on the fast decoder's path and on the
    /// tree decoder's; never a derived side written into another type's object.
    @Test(arguments: [false, true]) func aReferenceOfTheWrongTypeIsDamage(_ slowPath: Bool) throws {
        let s = try storeWithEditedSnapshot { lines in
            let i = try #require(lines.firstIndex { $0.contains(#""businessMeals":[{"id":""#) })
            let range = try #require(lines[i].range(of: #""businessMeals":\[\{"id":"[^"]*"\}"#, options: .regularExpression))
            // A typed reference with its keys in another order sends the line to the tree decoder.
            lines[i].replaceSubrange(range, with: #""businessMeals":"# + (slowPath ? #"[{"id":"zurich-reunion","type":"BusinessMeal"}"# : #"[{"id":"zurich-reunion"}"#))
        }
        for command in [["query", "--count"], ["get", "zurich-reunion"], ["verify"]] {
            let r = CLIRunner.run(command, store: s)
            #expect(r.code == 2 && r.err.contains("a reference of the wrong type"), "\(command): \(r.err)")
        }
    }

    @Test func aDanglingReferenceIsDamageThatVerifyNamesAndRepairRemoves() throws {
        let s = try damagedStore()
        let query = CLIRunner.run(["query", "--count"], store: s)
        #expect(query.code == 2)
        #expect(query.err.contains("run 'tripstore verify' to list dangling references, 'tripstore verify --repair' to remove them"))
        let verify = CLIRunner.run(["verify"], store: s)
        #expect(verify.code == 2)
        #expect(verify.err.contains(".bucketList holds null in place of a reference (a dangling reference)"))
        #expect(verify.err.hasSuffix("verify: 1 dangling reference; 'tripstore verify --repair' removes it (recorded in history by author 'repair')\n"))
        let repair = CLIRunner.run(["verify", "--repair"], store: s)
        #expect(repair.code == 0)
        #expect(repair.out == "repaired: removed 1 dangling reference as transaction 2 by author 'repair'; 493 objects intact\n")
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
        let history = CLIRunner.run(["history", "--author", "repair", "--format", "jsonl"], store: s)
        #expect(history.out.contains(#""bucketList":{"old":[null,"#))
        #expect(CLIRunner.run(["query", "--count"], store: s).out == "61\n")
    }
}

/// A number past Double's range is an input error everywhere, never a stored null.
@Suite struct CLINumberRangeTests {
    @Test func aNumberTooLargeForADoubleIsAnInputErrorInImportValidateAndUpdate() throws {
        let s = CLIRunner.runRoot + "range-\(UUID().uuidString)"
        let path = CLIRunner.runRoot + "range-\(UUID().uuidString).json"
        try """
        [{"type":"BusinessTrip","id":"b1","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02","purpose":"p","expenseCode":"E","perDiemRate":1e400,"mileageRate":0.5}}]
        """.write(toFile: path, atomically: false, encoding: .utf8)
        for command in [["validate", path], ["import", path]] {
            let r = CLIRunner.run(command, store: s)
            #expect(r.code == 1)
            #expect(r.err.contains("record 1: property 'perDiemRate' of BusinessTrip: expected a number within the range of a Double"))
        }
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        let id = CLIRunner.run(["query", "is BusinessTrip", "--format", "ids", "--limit", "1"], store: s).out.trimmingCharacters(in: .whitespacesAndNewlines)
        let update = CLIRunner.run(["update", id, "--set", "perDiemRate=1e400"], store: s)
        #expect(update.code == 1)
        #expect(update.err.contains("expected a number within the range of a Double"))
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        let verified = CLIRunner.run(["verify"], store: s)
        #expect(verified.code == 0, "\(verified.err)")
    }
}

/// Stored strings cannot drive the terminal through table or csv output.
@Suite struct CLIControlCharacterTests {
    @Test func tableAndCsvWriteControlCharactersAsEscapes() throws {
        let s = CLIRunner.runRoot + "controls-\(UUID().uuidString)"
        let path = CLIRunner.runRoot + "controls-\(UUID().uuidString).json"
        try #"[{"type":"Trip","id":"t1","data":{"name":"a\u001b[31mred\u0007\nb\tc\u007f\u0085","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02"}}]"#
            .write(toFile: path, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", path], store: s).code == 0)
        let escaped = #"a\u001b[31mred\u0007\u000ab\u0009c\u007f\u0085"#
        let table = CLIRunner.run(["query", "--format", "table", "--fields", "name"], store: s)
        // Clipped to 40 characters, never inside an escape.
        #expect(table.out.contains(String(escaped.prefix(34)) + "…"))
        #expect(!table.out.contains("\u{1b}") && !table.out.contains("\u{7}"))
        let csv = CLIRunner.run(["query", "--format", "csv", "--fields", "name"], store: s)
        #expect(csv.out == "id,name\nt1,\(escaped)\n")
        let jsonl = CLIRunner.run(["query", "--format", "jsonl"], store: s)
        #expect(jsonl.out.contains(#""name":"a\u001b[31mred\u0007\nb\tc"#))
    }
}

@Suite struct CLIDuplicateReferenceTests {
    @Test func aToManyListingAnObjectTwiceIsAnInputError() throws {
        let s = CLIRunner.runRoot + "twice-\(UUID().uuidString)"
        let path = CLIRunner.runRoot + "twice-\(UUID().uuidString).jsonl"
        try """
        {"type":"BucketListItem","id":"i1","data":{"title":"x","isCompleted":false}}
        {"type":"Trip","id":"t1","data":{"name":"n","destination":"d","startDate":"2026-01-01","endDate":"2026-01-02","bucketList":[{"id":"i1"},{"id":"i1"}]}}
        """.write(toFile: path, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["import", path], store: s)
        #expect(r.code == 1)
        #expect(r.err.contains("line 2 at data.bucketList[1]: property 'bucketList' of Trip: lists id 'i1' twice"))
        #expect(!FileManager.default.fileExists(atPath: s + "/journal-0.jsonl") || CLIRunner.run(["query", "--count"], store: s).out == "0\n")
    }
}

/// Files that are not regular files never hang or exhaust a reader.
@Suite struct CLISpecialFileTests {
    @Test func anImportSourceThatIsNotARegularFileIsRefused() {
        let s = CLIRunner.runRoot + "special-\(UUID().uuidString)"
        let r = CLIRunner.run(["import", "/dev/zero"], store: s)
        #expect(r.code == 1)
        #expect(r.err.contains("not a regular file"))
    }

    @Test func aFIFOInPlaceOfTheImageIsIgnoredAndInPlaceOfTheJournalIsDamage() throws {
        let s = CLIRunner.runRoot + "fifo-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: s).first { $0.hasSuffix(".image") })
        try FileManager.default.removeItem(atPath: s + "/" + image)
        #expect(mkfifo(s + "/" + image, 0o644) == 0)
        #expect(CLIRunner.run(["query", "--count"], store: s).out == "61\n")
        let journal = try #require(try FileManager.default.contentsOfDirectory(atPath: s).first { $0.hasPrefix("journal-") })
        try FileManager.default.removeItem(atPath: s + "/" + journal)
        #expect(mkfifo(s + "/" + journal, 0o644) == 0)
        let r = CLIRunner.run(["query", "--count"], store: s)
        #expect(r.code == 2)
        #expect(r.err.contains("not a regular file"))
    }
}

/// Canonically equivalent ids are one id, stored in NFC (docs/format.md).
@Suite struct CLIIdentifierTests {
    func trip(_ id: String, destination: String = "d") -> String {
        #"{"type":"Trip","id":"\#(id)","data":{"name":"n","destination":"\#(destination)","startDate":"2026-01-01","endDate":"2026-01-02"}}"#
    }

    /// Pairs of one text in NFC and another form of it: a combining accent;
    /// a Hangul syllable and its trailing consonant apart, which Foundation's
    /// composition on Linux leaves apart (`CanonicalText`); all three jamo apart.
    static let forms = [("caf\u{E9}", "cafe\u{301}"), ("\u{AC01}", "\u{AC00}\u{11A8}"), ("\u{AC01}", "\u{1100}\u{1161}\u{11A8}")]

    @Test(arguments: forms) func nfcAndNfdAreOneIdBeforeAndAfterCompaction(_ nfc: String, _ nfd: String) throws {
        let s = CLIRunner.runRoot + "nfc-\(UUID().uuidString)"
        let a = CLIRunner.runRoot + "nfc-\(UUID().uuidString).jsonl"
        let b = CLIRunner.runRoot + "nfd-\(UUID().uuidString).jsonl"
        try trip(nfc).write(toFile: a, atomically: false, encoding: .utf8)
        try trip(nfd).write(toFile: b, atomically: false, encoding: .utf8)
        #expect(CLIRunner.run(["import", a], store: s).code == 0)
        #expect(CLIRunner.run(["import", b], store: s).code == 1)
        #expect(CLIRunner.run(["get", nfd], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        #expect(CLIRunner.run(["import", b], store: s).code == 1)
        #expect(CLIRunner.run(["query", "--count"], store: s).out == "1\n")
        #expect(CLIRunner.run(["delete", nfd], store: s).code == 0)
        #expect(CLIRunner.run(["query", "--count"], store: s).out == "0\n")
        let both = CLIRunner.runRoot + "both-\(UUID().uuidString).jsonl"
        try (trip(nfc) + "\n" + trip(nfd)).write(toFile: both, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["import", both], store: s)
        #expect(r.code == 1)
        #expect(r.err.contains("appears twice"))
    }

    /// Text equal as Swift compares it is one key of an index, whether the
    /// image or the JSON answers, and whether the value is in the snapshot or the journal.
    @Test(arguments: forms) func equivalentTextIsOneKeyFromTheImageAndFromTheJSON(_ nfc: String, _ other: String) throws {
        for (first, second) in [(nfc, other), (other, nfc)] {
            let s = CLIRunner.runRoot + "text-\(UUID().uuidString)"
            let a = CLIRunner.runRoot + "text-\(UUID().uuidString).jsonl", b = CLIRunner.runRoot + "text-\(UUID().uuidString).jsonl"
            try trip("t1", destination: first).write(toFile: a, atomically: false, encoding: .utf8)
            try trip("t2", destination: second).write(toFile: b, atomically: false, encoding: .utf8)
            #expect(CLIRunner.run(["import", a], store: s).code == 0)
            #expect(CLIRunner.run(["compact"], store: s).code == 0)
            #expect(CLIRunner.run(["import", b], store: s).code == 0)
            for literal in [first, second] {
                #expect(CLIRunner.run(["query", "destination == \"\(literal)\"", "--count"], store: s).out == "2\n")
                #expect(CLIRunner.run(["query", "destination ~ \"\(literal)\"", "--count"], store: s).out == "2\n")
            }
            #expect(CLIRunner.run(["compact"], store: s).code == 0)
            let image = try #require(try FileManager.default.contentsOfDirectory(atPath: s).first { $0.hasSuffix(".image") })
            #expect(CLIRunner.run(["query", "destination == \"\(second)\"", "--count"], store: s).out == "2\n")
            try FileManager.default.removeItem(atPath: s + "/" + image)
            #expect(CLIRunner.run(["query", "destination == \"\(second)\"", "--count"], store: s).out == "2\n")
        }
    }

    @Test func anIdWithAControlCharacterIsAnInputError() throws {
        let s = CLIRunner.runRoot + "ctl-\(UUID().uuidString)"
        let a = CLIRunner.runRoot + "ctl-\(UUID().uuidString).jsonl"
        try trip(#"a\u0007b"#).write(toFile: a, atomically: false, encoding: .utf8)
        let r = CLIRunner.run(["import", a], store: s)
        #expect(r.code == 1)
        #expect(r.err.contains("must not hold control characters"))
    }
}

/// `verify` compares the journal's replay state (`journal-N.state`, a cache)
/// with a replay of the journal, and `--repair` deletes one that disagrees.
@Suite struct CLIVerifyJournalStateTests {
    /// The sample store compacted, then `renames` trips renamed one command each.
    func renamedStore(_ renames: Int) throws -> (store: String, ids: [String]) {
        let s = CLIRunner.runRoot + "verify-state-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        let ids = CLIRunner.run(["query", "is Trip", "--format", "ids"], store: s).out.split(separator: "\n").map(String.init)
        for k in 0..<renames {
            #expect(CLIRunner.run(["update", ids[k], "--set", "name=Renamed-\(k)"], store: s).code == 0)
        }
        return (s, ids)
    }

    /// A compaction killed after its snapshot took the place of the old
    /// files, before it removed them, leaves them (a redaction's may hold
    /// the values it removed): `verify` names them, `--repair` removes them.
    @Test func filesANewerSnapshotReplacedAreLeftoversThatRepairRemoves() throws {
        let (s, _) = try renamedStore(3)
        let kept = try ["journal-1.jsonl", "journal-1.state"].map { ($0, try Data(contentsOf: URL(fileURLWithPath: s + "/" + $0))) }
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        for (name, data) in kept { try data.write(to: URL(fileURLWithPath: s + "/" + name)) }
        let noted = CLIRunner.run(["verify"], store: s)
        #expect(noted.code == 0)
        #expect(noted.out.contains("journal-1.jsonl") && noted.out.contains("journal-1.state") && noted.out.contains("left by an interrupted write"))
        let repaired = CLIRunner.run(["verify", "--repair"], store: s)
        #expect(repaired.code == 0)
        #expect(repaired.out.contains("repaired: removed"))
        for (name, _) in kept { #expect(!FileManager.default.fileExists(atPath: s + "/" + name)) }
        // An empty folder at such a name goes too; one that holds something is named, and stays.
        try FileManager.default.createDirectory(atPath: s + "/journal-1.state", withIntermediateDirectories: false)
        #expect(CLIRunner.run(["verify", "--repair"], store: s).out.contains("repaired: removed"))
        #expect(!FileManager.default.fileExists(atPath: s + "/journal-1.state"))
        try FileManager.default.createDirectory(atPath: s + "/journal-1.state/inside", withIntermediateDirectories: true)
        let kept2 = CLIRunner.run(["verify", "--repair"], store: s)
        #expect(kept2.code == 2)
        #expect(kept2.err.contains("could not be removed"))
    }

    /// Only a file of its own is the state: a folder or a link at its name is an error that `--repair` removes.
    @Test func aFolderOrALinkAtTheStatesNameIsRemovedByRepair() throws {
        let (s, _) = try renamedStore(2)
        let state = s + "/journal-1.state"
        try FileManager.default.removeItem(atPath: state)
        try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
        let found = CLIRunner.run(["verify"], store: s)
        #expect(found.code == 2)
        #expect(found.err.contains("not a regular file"))
        #expect(CLIRunner.run(["verify", "--repair"], store: s).code == 0)
        #expect(!FileManager.default.fileExists(atPath: state))
        // A link to a file elsewhere: never written through.
        let elsewhere = s + "-elsewhere"
        try Data("keep".utf8).write(to: URL(fileURLWithPath: elsewhere))
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: elsewhere)
        let ids = CLIRunner.run(["query", "is Trip", "--format", "ids"], store: s).out.split(separator: "\n").map(String.init)
        for k in 0..<3 { #expect(CLIRunner.run(["update", ids[k], "--set", "name=Linked-\(k)"], store: s).code == 0) }
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep")
        #expect(CLIRunner.run(["verify"], store: s).err.contains("not a regular file"))
        #expect(CLIRunner.run(["verify", "--repair"], store: s).code == 0)
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
        #expect(try String(contentsOfFile: elsewhere, encoding: .utf8) == "keep")
    }

    /// A journal line the state covers, edited and sealed again, unbinds
    /// the state from there: every command answers what the JSON says.
    @Test func anEarlierJournalLineEditedIsWhatEveryCommandReads() throws {
        let (s, _) = try renamedStore(4)
        let journal = s + "/journal-1.jsonl"
        var lines = try [UInt8](Data(contentsOf: URL(fileURLWithPath: journal))).split(separator: 0x0A).map(Array.init)
        let text = String(decoding: lines[1], as: UTF8.self).replacingOccurrences(of: "Renamed-1", with: "Renamed-X")
        let body = Array(text.utf8).prefix(lines[1].count - JournalFormat.checksumSuffixLength)
        lines[1] = Array(JournalFormat.seal(Array(body) + Array("}".utf8)).dropLast())
        try Data(lines.flatMap { $0 + [0x0A] }).write(to: URL(fileURLWithPath: journal))
        #expect(CLIRunner.run(["query", "name == \"Renamed-X\"", "--count"], store: s).out.hasPrefix("1"))
        #expect(CLIRunner.run(["query", "name == \"Renamed-1\"", "--count"], store: s).out.hasPrefix("0"))
        #expect(CLIRunner.run(["stats"], store: s).out.contains("covering 1 transactions (opened from it)"))
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
    }

    /// A state record forged with good checksums (bytes that are not a
    /// record of its type) is image damage. A command that checks the image
    /// as it opens (`export`) meets it then, and opens from the JSON: it
    /// prints the store once, never half from the image and then again.
    @Test func aForgedStateRecordMakesExportRunFromTheJSONOnce() throws {
        let (s, _) = try renamedStore(3)
        let state = s + "/journal-1.state"
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state)))
        // The first frame (after the 64-byte header): length, checksum, a
        // 48-byte payload header, then its first record: row, entity, length, bytes.
        func u32(_ at: Int) -> Int { Int(bytes[at]) | Int(bytes[at + 1]) << 8 | Int(bytes[at + 2]) << 16 | Int(bytes[at + 3]) << 24 }
        let payload = 64 + 8, record = payload + 48
        bytes[record + 10 + u32(record + 6) - 1] = 0xEE
        let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[payload..<(payload + u32(64))])) }
        for k in 0..<4 { bytes[68 + k] = UInt8(truncatingIfNeeded: crc >> (8 * k)) }
        try Data(bytes).write(to: URL(fileURLWithPath: state))
        let objects = CLIRunner.run(["stats"], store: s).out.split(separator: "\n").first { $0.hasPrefix("objects") }
        let exported = CLIRunner.run(["export", "--format", "jsonl"], store: s)
        #expect(exported.code == 0)
        #expect("objects      \(exported.out.split(separator: "\n").count)" == objects.map(String.init))
        // `verify` names the state, whose open fell back to the JSON; `--repair` deletes it.
        let found = CLIRunner.run(["verify"], store: s)
        #expect(found.code == 2)
        #expect(found.err.contains("journal-1.state") && found.err.contains("names rows the image holds otherwise"))
        #expect(CLIRunner.run(["verify", "--repair"], store: s).code == 0)
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
    }

    @Test func verifyComparesTheStateWithTheJournal() throws {
        let (s, _) = try renamedStore(5)
        let state = s + "/journal-1.state"
        #expect(FileManager.default.fileExists(atPath: state))
        let ok = CLIRunner.run(["verify"], store: s)
        #expect(ok.code == 0)
        #expect(ok.out.contains("the journal's replay state verified"))
        #expect(CLIRunner.run(["stats"], store: s).out.contains("state        journal-1.state, "))
        #expect(CLIRunner.run(["stats"], store: s).out.contains("covering 5 transactions (opened from it)"))
        // Damage its checksums do not catch (one value forged, the frame sealed again).
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: state)))
        let value = Array("Renamed-2".utf8)
        let at = try #require((0..<(bytes.count - value.count)).first { Array(bytes[$0..<($0 + value.count)]) == value })
        bytes[at + value.count - 1] = UInt8(ascii: "7")
        // The frame that holds it: frames follow the 64-byte header, each a length, a checksum and its payload.
        var frame = 64
        while true {
            let length = Int(bytes[frame]) | Int(bytes[frame + 1]) << 8 | Int(bytes[frame + 2]) << 16 | Int(bytes[frame + 3]) << 24
            if at < frame + 8 + length {
                let crc = bytes.withUnsafeBytes { CRC32C.checksum(UnsafeRawBufferPointer(rebasing: $0[(frame + 8)..<(frame + 8 + length)])) }
                for k in 0..<4 { bytes[frame + 4 + k] = UInt8(truncatingIfNeeded: crc >> (8 * k)) }
                break
            }
            frame += 8 + length
        }
        try Data(bytes).write(to: URL(fileURLWithPath: state))
        let found = CLIRunner.run(["verify"], store: s)
        #expect(found.code == 2)
        #expect(found.err.contains("journal-1.state: it holds another"))
        let repaired = CLIRunner.run(["verify", "--repair"], store: s)
        #expect(repaired.code == 0)
        #expect(repaired.out.contains("repaired: deleted"))
        #expect(!FileManager.default.fileExists(atPath: state))
        let after = CLIRunner.run(["verify"], store: s)
        #expect(after.code == 0, "\(after.err)")
        #expect(!after.out.contains("replay state"))
        #expect(CLIRunner.run(["query", "name == \"Renamed-7\"", "--count"], store: s).out == "0\n")
    }

    /// A journal cut back at a line boundary while its replay state records
    /// the line after: reads answer without it and warn, writes and
    /// `verify` (with `--repair`) stop with exit 2 and change nothing;
    /// deleting the state, as they say, is the way on.
    @Test func aJournalBehindItsReplayStateIsNamedAndNeverWrittenPast() throws {
        let s = CLIRunner.runRoot + "behind-\(UUID().uuidString)"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: s).code == 0)
        #expect(CLIRunner.run(["compact"], store: s).code == 0)
        let id = try #require(CLIRunner.run(["query", "is Trip", "--format", "ids"], store: s).out.split(separator: "\n").first.map(String.init))
        for n in 1...20 { #expect(CLIRunner.run(["update", id, "--set", "name=\"n\(n)\""], store: s).code == 0) }
        let files = try FileManager.default.contentsOfDirectory(atPath: s)
        let journal = s + "/" + (try #require(files.first { $0.hasPrefix("journal-") && $0.hasSuffix(".jsonl") }))
        let state = journal.replacingOccurrences(of: ".jsonl", with: ".state")
        #expect(FileManager.default.fileExists(atPath: state))
        var lines = try String(contentsOfFile: journal, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast(3)  // the two last lines and what follows the last newline
        try Data((lines.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: journal))
        let before = try FileManager.default.contentsOfDirectory(atPath: s).sorted().map { ($0, try Data(contentsOf: URL(fileURLWithPath: s + "/" + $0))) }
            .filter { $0.0 != "tripstore.lock" }
        let get = CLIRunner.run(["get", id], store: s)
        #expect(get.code == 0)
        #expect(get.out.contains("\"n18\""))
        #expect(get.err.contains("transactions 20 to 21 are not in it") && get.err.contains("delete journal-"), "\(get.err)")
        // A follower warns too, once, however many times it opens the store.
        let followErr = CLIRunner.scratch() + "/follow-behind.err"
        _ = FileManager.default.createFile(atPath: followErr, contents: nil)
        let follower = Process()
        follower.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        follower.arguments = ["--store", s, "history", "--follow", "--since", "0"]
        follower.standardOutput = FileHandle.nullDevice
        follower.standardError = FileHandle(forWritingAtPath: followErr)
        try follower.run()
        var warned = ""
        for _ in 0..<200 where !warned.contains("not in it") {
            usleep(50_000)
            warned = (try? String(contentsOfFile: followErr, encoding: .utf8)) ?? ""
        }
        follower.terminate()
        follower.waitUntilExit()
        #expect(follower.terminationStatus == 0)
        #expect(warned.components(separatedBy: "transactions 20 to 21 are not in it").count == 2, "\(warned)")
        // Asked for a lost transaction's state: out of reach, and why.
        let lost = CLIRunner.run(["get", id, "--as-of", "21"], store: s)
        #expect(lost.code == 1 && lost.err.contains("--as-of reaches tokens") && lost.err.contains("transactions 20 to 21 are not in it"), "\(lost.err)")
        for args in [["update", id, "--set", "name=\"x\""], ["verify"], ["verify", "--repair"], ["compact"], ["compact", "--background"]] {
            let r = CLIRunner.run(args, store: s)
            #expect(r.code == 2, "\(args)")
            #expect(r.err.contains("transactions 20 to 21 are not in it"), "\(args): \(r.err)")
        }
        // A dry run writes nothing: it reads, and warns as a read does.
        let dry = CLIRunner.run(["delete", id, "--dry-run"], store: s)
        #expect(dry.code == 0 && dry.out.contains("would delete") && dry.err.contains("transactions 20 to 21 are not in it"), "\(dry.err)")
        let after = try FileManager.default.contentsOfDirectory(atPath: s).sorted().map { ($0, try Data(contentsOf: URL(fileURLWithPath: s + "/" + $0))) }
            .filter { $0.0 != "tripstore.lock" }
        #expect(after.map(\.0) == before.map(\.0) && zip(after, before).allSatisfy { $0.1 == $1.1 }, "nothing changed")
        // Cut inside the next line: one warning, with no torn tail for a writer to cut (none will).
        let whole = try Data(contentsOf: URL(fileURLWithPath: journal))
        try (whole + Data("{\"token\":20,".utf8)).write(to: URL(fileURLWithPath: journal))
        let torn = CLIRunner.run(["get", id], store: s)
        #expect(torn.code == 0)
        #expect(torn.err.split(separator: "\n").count == 1 && torn.err.contains("transactions 20 to 21 are not in it"), "\(torn.err)")
        #expect(!torn.err.contains("verify --repair") && !torn.err.contains("incomplete"), "\(torn.err)")
        // The journal missing altogether: nothing to compact, and still refused, not passed over.
        try FileManager.default.removeItem(atPath: journal)
        let missing = CLIRunner.run(["compact", "--background"], store: s)
        #expect(missing.code == 2 && missing.err.contains("it is missing"), "\(missing.err)")
        #expect(!FileManager.default.fileExists(atPath: journal))
        try whole.write(to: URL(fileURLWithPath: journal))
        try FileManager.default.removeItem(atPath: state)
        #expect(CLIRunner.run(["verify"], store: s).code == 0)
        #expect(CLIRunner.run(["update", id, "--set", "name=\"x\""], store: s).code == 0)
    }
}
