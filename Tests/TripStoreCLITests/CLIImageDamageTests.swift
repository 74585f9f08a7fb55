import Foundation
import Testing
import TripStoreEngine
import TripStoreModels

/// A command-line reader maps the snapshot image and checks each piece the
/// first time it touches it: damage found then (after open) must give the
/// same answer as the JSON, with a warning, and never a crash.
@Suite struct CLIImageDamageTests {
    /// A store of about 3,400 objects (four groups of rows), compacted, with a journal on top.
    static func makeStore() throws -> (folder: String, ids: [String]) {
        let folder = CLIRunner.scratch()
        var g = TripDataGenerator(seed: 77)
        let file = folder + ".json"
        try Data(g.jsonArray(trips: 400)).write(to: URL(fileURLWithPath: file))
        #expect(CLIRunner.run(["import", file], store: folder).code == 0)
        #expect(CLIRunner.run(["compact"], store: folder).code == 0)
        let ids = CLIRunner.run(["query", "is Trip", "--format", "ids"], store: folder).out.split(separator: "\n").map(String.init)
        #expect(CLIRunner.run(["update", ids[3], "--set", "destination=Roma"], store: folder).code == 0)
        #expect(CLIRunner.run(["delete", ids[5]], store: folder).code == 0)
        return (folder, ids)
    }

    static func commands(_ ids: [String]) -> [[String]] {
        [["query", "is BusinessTrip && destination ~ \"o\"", "--count"],
         ["query", "is Trip", "--sort", "name", "--format", "jsonl"],
         ["query", "count(bucketList) > 2 && is PersonalTrip", "--format", "ids"],
         ["get", ids[0]], ["get", ids[3], "--expand"], ["get", ids[ids.count - 1]], ["get", ids[5]],
         ["stats"],
         // Time travel rebuilds the objects the journal changed from the rows it reads.
         ["query", "is Trip", "--count", "--as-of", "1"], ["get", ids[5], "--as-of", "1"]]
    }

    static func answers(_ folder: String, _ commands: [[String]]) -> [String] {
        commands.map { c in
            let r = CLIRunner.run(c, store: folder)
            return "\(r.code) \(r.out)"
        }
    }

    @Test func aFlippedByteAnywhereInTheImageGivesTheJSONsAnswer() throws {
        let (folder, ids) = try Self.makeStore()
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".image") })
        let path = folder + "/" + image
        let good = try Data(contentsOf: URL(fileURLWithPath: path))
        let commands = Self.commands(ids)
        // A sound image under a journal that changed rows is never called damaged
        // (the jsonl listing is long enough to make the console check everything).
        for c in commands { #expect(!CLIRunner.run(c, store: folder).err.contains("warning"), "\(c)") }
        try FileManager.default.removeItem(atPath: path)
        let expected = Self.answers(folder, commands).map { $0.replacingOccurrences(of: "none (opened from the JSON)", with: "IMAGE") }
        var warned = 0
        // About 50 bytes spread over the file: the header, the directory,
        // every column, the lists and the records.
        for at in stride(from: 5, to: good.count, by: good.count / 50 | 1) {
            var bad = good
            bad[at] ^= 0x20
            try bad.write(to: URL(fileURLWithPath: path))
            for (k, c) in commands.enumerated() {
                let r = CLIRunner.run(c, store: folder)
                let answer = "\(r.code) \(r.out)".replacingOccurrences(of: "none (opened from the JSON)", with: "IMAGE")
                    .replacingOccurrences(of: image + ", ", with: "IMAGE").replacingOccurrences(of: #"IMAGE\d[^\n]*"#, with: "IMAGE", options: .regularExpression)
                if c[0] != "stats" { #expect(answer == expected[k], "byte \(at): \(c)") }
                if r.err.contains("answered from the JSON instead") { warned += 1 }
            }
        }
        // Many flips land in pieces that are checked only when a command touches them.
        #expect(warned >= 10)
    }

    @Test func aWriterThatMeetsDamageWritesNothingAndRunsAgainFromTheJSON() throws {
        let (folder, ids) = try Self.makeStore()
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".image") })
        let path = folder + "/" + image
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        // In the last record (found by its id, which a record holds packed), a byte of its first value.
        let at = try #require(bytes.lastRange(of: CLIRunner.packedRecordID(ids.sorted().last!))).upperBound + 3
        bytes[at] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let last = ids.sorted().last!
        let r = CLIRunner.run(["update", last, "--set", "name=After damage"], store: folder)
        #expect(r.code == 0, "\(r.err)")
        #expect(r.err.contains("answered from the JSON instead"))
        let h = CLIRunner.run(["history", "--format", "jsonl"], store: folder).out.split(separator: "\n")
        // Import, update, delete, and this update once.
        #expect(h.count == 4)
        #expect(CLIRunner.run(["get", last], store: folder).out.contains("\"name\": \"After damage\""))
        #expect(CLIRunner.run(["verify"], store: folder).code == 2)
        #expect(CLIRunner.run(["verify", "--repair"], store: folder).code == 0)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    // Run again from the JSON, an import reads the same standard input: a
    // pipe's bytes are gone once read, and an empty second read once
    // committed nothing, saying "unchanged", exit 0.
    @Test func anImageDamagedUnderAnImportFromAPipeImportsEverything() throws {
        let (folder, ids) = try Self.makeStore()
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasSuffix(".image") })
        let path = folder + "/" + image
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        let last = ids.sorted().last!
        let at = try #require(bytes.lastRange(of: CLIRunner.packedRecordID(last))).upperBound + 3
        bytes[at] ^= 0x01
        try bytes.write(to: URL(fileURLWithPath: path))
        let envelope = CLIRunner.run(["get", last], store: folder).out
            .replacingOccurrences(of: #""name" : "[^"]*""#, with: #""name" : "Piped""#, options: .regularExpression)
            .replacingOccurrences(of: #""name": "[^"]*""#, with: #""name": "Piped""#, options: .regularExpression)
        let half = envelope.utf8.count / 2
        let pieces = [Array(envelope.utf8.prefix(half)), Array(envelope.utf8.dropFirst(half))]
        let r = CLIRunner.run(["import", "--mode", "upsert", "-"], store: folder, input: .arriving(pieces))
        #expect(r.code == 0 && r.out.contains("committed"), "\(r.out) \(r.err)")
        #expect(r.err.contains("answered from the JSON instead"), "\(r.err)")
        #expect(CLIRunner.run(["get", last], store: folder).out.contains("\"name\": \"Piped\""))
    }

    /// A copied folder's image was made beside the other copy of the
    /// snapshot. It serves the copy once the copy's bytes match the checksum
    /// both name (a reader checks them at each open; `verify` says so), and
    /// the next writer binds it to the copy. Every answer is the JSON's.
    @Test func aCopiedStoresImageServesTheCopyAndTheNextWriterBindsIt() throws {
        let (folder, ids) = try Self.makeStore()
        let copy = CLIRunner.scratch()
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        let v = CLIRunner.run(["verify"], store: copy)
        #expect(v.code == 0, "\(v.err)")
        #expect(v.out.contains("was made beside another copy of the snapshot file"), "\(v.out)")
        #expect(v.out.contains("the image"), "\(v.out)")
        #expect(CLIRunner.run(["stats"], store: copy).out.contains("(opened from it)"))
        let reads = Self.commands(ids).filter { $0 != ["stats"] }  // (which names the folder)
        #expect(Self.answers(copy, reads) == Self.answers(folder, reads))
        #expect(CLIRunner.run(["update", ids[7], "--set", "name=In the copy"], store: copy).code == 0)
        let after = CLIRunner.run(["verify"], store: copy)
        #expect(after.code == 0 && after.out.contains("the image") && !after.out.contains("another copy"), "\(after.out)")
        #expect(CLIRunner.run(["stats"], store: copy).out.contains("(opened from it)"))
        #expect(CLIRunner.run(["get", ids[7]], store: copy).out.contains("In the copy"))
    }

    /// A copy whose snapshot was changed without its checksum (same size)
    /// is never answered from the image of the original: the open reads the
    /// JSON and reports the damage, as it does without an image.
    @Test func aCopiedSnapshotThatFailsItsChecksumIsNotAnsweredFromTheImage() throws {
        let (folder, ids) = try Self.makeStore()
        let copy = CLIRunner.scratch()
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        let snapshot = try #require(try FileManager.default.contentsOfDirectory(atPath: copy).first { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jsonl") })
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: copy + "/" + snapshot)))
        // One letter of a trip's name, the same length: only the checksum tells.
        let name = Array(#""name":""#.utf8)
        let at = try #require((0..<(bytes.count - name.count)).first { bytes[$0..<($0 + name.count)].elementsEqual(name) && $0 > bytes.count / 2 })
        bytes[at + name.count] = bytes[at + name.count] == UInt8(ascii: "X") ? UInt8(ascii: "Y") : UInt8(ascii: "X")
        try Data(bytes).write(to: URL(fileURLWithPath: copy + "/" + snapshot))
        for c in [["get", ids[0]], ["query", "is Trip", "--count"]] {
            let r = CLIRunner.run(c, store: copy)
            #expect(r.code == 2 && r.err.contains("checksum"), "\(c) \(r.code) \(r.out) \(r.err)")
        }
    }

    /// The snapshot the image was made beside, changed in place since (the
    /// same file: touched, or edited in place), is read from the JSON, as
    /// before copies were served: its checksum tells damage, not an edit
    /// made to keep it. The next writer writes the image again.
    @Test func aSnapshotChangedInPlaceIsReadFromTheJSON() throws {
        let (folder, ids) = try Self.makeStore()
        let snapshot = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jsonl") })
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 3600)], ofItemAtPath: folder + "/" + snapshot)
        #expect(CLIRunner.run(["stats"], store: folder).out.contains("(does not match; opened from the JSON)"))
        let v = CLIRunner.run(["verify"], store: folder)
        #expect(v.code == 0 && v.out.contains("the snapshot file was changed or touched since it was made"), "\(v.out)")
        #expect(CLIRunner.run(["update", ids[7], "--set", "name=After the touch"], store: folder).code == 0)
        #expect(CLIRunner.run(["stats"], store: folder).out.contains("(opened from it)"))
    }

    /// The temporary files a writer makes beside the store's have fixed
    /// names, and a copied or restored folder may bring a link to anywhere
    /// under one: it is removed, never written through.
    @Test func aLinkWhereATemporaryFileGoesIsNeverWrittenThrough() throws {
        let (folder, ids) = try Self.makeStore()
        let copy = CLIRunner.scratch()
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: folder, toPath: copy)
        let victim = CLIRunner.scratch() + "-victim.txt"
        try Data("precious".utf8).write(to: URL(fileURLWithPath: victim))
        // The image bound to the copy at the update (token 1's), then the snapshot and image of token 4 by `compact`.
        for name in ["snapshot-1.image.tmp", "snapshot-4.jsonl.tmp", "snapshot-4.image.tmp", "schema.json.tmp"] {
            try FileManager.default.createSymbolicLink(atPath: copy + "/" + name, withDestinationPath: victim)
        }
        #expect(CLIRunner.run(["update", ids[7], "--set", "name=Linked"], store: copy).code == 0)
        #expect(CLIRunner.run(["compact"], store: copy).code == 0)
        #expect(try String(contentsOfFile: victim, encoding: .utf8) == "precious")
        let v = CLIRunner.run(["verify"], store: copy)
        #expect(v.code == 0, "\(v.out) \(v.err)")
        #expect(CLIRunner.run(["get", ids[7]], store: copy).out.contains("Linked"))
    }

    /// An image whose snapshot was replaced by another of the same token
    /// (another size or checksum: rewritten, or edited and sealed again) is
    /// stale, not damage: `verify` says so and succeeds, and reads answer from the JSON.
    @Test func anImageOfASnapshotReplacedSinceIsStaleNotDamage() throws {
        let (folder, ids) = try Self.makeStore()
        #expect(CLIRunner.run(["compact"], store: folder).code == 0)
        let image = try #require(try FileManager.default.contentsOfDirectory(atPath: folder).first { $0.hasPrefix("snapshot-") && $0.hasSuffix(".image") })
        let old = try Data(contentsOf: URL(fileURLWithPath: folder + "/" + image))
        // The same token's snapshot written again with less history, then the old image put back.
        #expect(CLIRunner.run(["history", "prune", "--before", "3"], store: folder).code == 0)
        try old.write(to: URL(fileURLWithPath: folder + "/" + image))
        let v = CLIRunner.run(["verify"], store: folder)
        #expect(v.code == 0 && v.out.contains("the snapshot file was replaced or changed since it was made"), "\(v.out) \(v.err)")
        #expect(CLIRunner.run(["stats"], store: folder).out.contains("(does not match; opened from the JSON)"))
        #expect(CLIRunner.run(["get", ids[3]], store: folder).out.contains("Roma"))
    }
}
