import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// Every reader of bytes fed mutated and truncated input with fixed seeds:
/// nothing traps, and each says yes or names what is wrong. A few thousand
/// cases in CI; `TRIPSTORE_FUZZ_CASES=N` runs N per reader.
@Suite(.serialized) struct ReaderFuzzTests {
    static let cases = ProcessInfo.processInfo.environment["TRIPSTORE_FUZZ_CASES"].flatMap(Int.init) ?? 400

    /// Flips, inserts, deletes or cuts bytes.
    static func mutate(_ bytes: [UInt8], _ rng: inout RandomQueries) -> [UInt8] {
        var b = bytes
        for _ in 0..<(1 + rng.int(4)) {
            guard !b.isEmpty else { break }
            let at = rng.int(b.count)
            switch rng.int(6) {
            case 0: b[at] ^= UInt8(1 << rng.int(8))
            case 1: b[at] = rng.pick([0x00, 0x22, 0x5C, 0x7B, 0x7D, 0x5B, 0x5D, 0x2C, 0x3A, 0x0A, 0xFF, 0xC3, 0x30, 0x65])
            case 2: b.insert(rng.pick([0x22, 0x7B, 0x5B, 0x2D, 0x31, 0x0A, 0xE2]), at: at)
            case 3: b.remove(at: at)
            case 4: b.removeLast(min(b.count, 1 + rng.int(64)))
            default: b.replaceSubrange(at..<min(b.count, at + 8), with: Array("1e400".utf8))
            }
        }
        return b
    }

    static let sample: [UInt8] = {
        var g = TripDataGenerator(seed: 5)
        return g.jsonArray(trips: 12)
    }()

    @Test func theJSONReaderAndTheEnvelopeDecoderNeverTrap() {
        var rng = RandomQueries(state: 101)
        var accepted = 0, refused = 0
        for _ in 0..<Self.cases {
            let input = Self.mutate(Self.sample, &rng)
            if (try? JSONReader.parse(input)) != nil { accepted += 1 }
            do {
                _ = try EnvelopeInput.decode(input, schema: TripSchema.schema, maxErrors: 5)
            } catch is EnvelopeErrors {
                refused += 1
            } catch is JSONSyntaxError {
                refused += 1
            } catch {
                Issue.record("unexpected error \(error)")
            }
        }
        #expect(refused > 0)
    }

    /// The query's number reader for `Int` comparisons (`IntegerLiteral`):
    /// mutated literals never trap, and where a Double holds the value
    /// exactly (few digits, small exponent) it agrees with the Double's floor.
    @Test func theIntegerLiteralReaderAgreesWhereADoubleIsExact() {
        var rng = RandomQueries(state: 103)
        let seeds = ["9223372036854775807", "-9223372036854775808.5", "1e19", "0.001", "-2.5e-3", "12.000e+2", "+7"]
        for _ in 0..<Self.cases {
            _ = IntegerLiteral(String(decoding: Self.mutate(Array(rng.pick(seeds).utf8), &rng), as: UTF8.self))
            // Up to 12 digits, 0 to 3 of them after the point, times 10^-2...10^2: exact as a Double.
            let whole = rng.int(1_000_000_000), fraction = rng.int(1000), places = rng.int(4), exponent = rng.int(5) - 2
            let negative = rng.int(2) == 0
            var text = (negative ? "-" : "") + String(whole)
            if places > 0 { text += "." + String(String(fraction).prefix(places)).padding(toLength: places, withPad: "0", startingAt: 0) }
            if exponent != 0 { text += "e\(exponent)" }
            // The value times 1000 is a whole number below 2^53; its floor divided back is exact.
            let scaledText = String(text.split(separator: "e")[0])
            guard let scaled = Double(scaledText).map({ ($0 * 1000).rounded() }) else { continue }
            let thousandths = exponent >= 0 ? scaled * pow(10, Double(exponent)) : scaled
            let divisor = exponent >= 0 ? 1000.0 : 1000.0 * pow(10, Double(-exponent))
            let floor = (thousandths / divisor).rounded(.down)
            let isWhole = (thousandths.truncatingRemainder(dividingBy: divisor)) == 0
            let expected: IntegerLiteral = isWhole ? .exact(Int64(floor)) : .between(floor: Int64(floor))
            #expect(IntegerLiteral(text) == expected, "\(text)")
        }
    }

    @Test func theSchemaReadersNeverTrap() {
        var rng = RandomQueries(state: 77)
        let record = SchemaRecordFormat.bytes(FilmSchema.schema)
        let file = SchemaFile.bytes(FilmSchema.schema, pretty: true)
        #expect((try? SchemaRecordFormat.read(record))?.fingerprint == FilmSchema.schema.fingerprint)
        #expect((try? SchemaFile.read(file))?.fingerprint == FilmSchema.schema.fingerprint)
        var refused = 0
        for k in 0..<Self.cases {
            let input = Self.mutate(k % 2 == 0 ? record : file, &rng)
            if k % 2 == 0 {
                // A damaged record is refused: the checksum catches every mutation.
                if (try? SchemaRecordFormat.read(input)) == nil { refused += 1 } else { #expect(input == record) }
            } else if (try? SchemaFile.read(input)) == nil {
                refused += 1
            }
        }
        #expect(refused > Self.cases / 4)
    }

    /// A small store with a snapshot, an image and a journal after it.
    func store() throws -> String {
        let folder = TestFolders.make("fuzz")
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var tx = store.transaction()
        try store.stage(try EnvelopeInput.decode(Self.sample, schema: store.schema), mode: .insert, into: &tx)
        try store.commit(tx, author: "fuzz", timestamp: 1_800_000_000)
        try store.compact()
        let trips = try store.run(try Query("is Trip")).rows
        var change = store.transaction()
        let name = store.schema.entity(named: "Trip")!.property(named: "name")!.slot
        change.setAttribute(trips[0], slot: name, to: .string("renamed"))
        try change.delete(trips[1])
        try store.commit(change, author: "fuzz", timestamp: 1_800_000_100)
        store.close()
        return folder
    }

    static func lastRange(of needle: [UInt8], in bytes: [UInt8]) -> Range<Int>? {
        guard needle.count <= bytes.count else { return nil }
        for start in stride(from: bytes.count - needle.count, through: 0, by: -1) where bytes[start..<(start + needle.count)].elementsEqual(needle) {
            return start..<(start + needle.count)
        }
        return nil
    }

    func answers(_ folder: String, image: Bool) throws -> [String] {
        var options = StoreOptions()
        options.useSnapshotImage = image
        options.imageChecks = .atOpen  // damage shows at open: the JSON answers
        let store = try Store.open(folder, schema: TripSchema.schema, access: .read, options: options)
        #expect(store.checkInvariants() == [])
        return store.table.rowsSortedByID().compactMap { store.table.object(at: $0).map { "\($0.id) \($0.values.count)" } }
    }

    /// A damaged snapshot or journal opens to the same store or is refused as
    /// damage (or, for a cut last line, read without it); it never traps.
    @Test(arguments: ["snapshot", "journal"])
    func damagedStoreFilesAreRefusedOrReadNeverTrap(_ which: String) throws {
        let folder = try store()
        let files = try FileIO.listDirectory(folder)
        let name = try #require(files.first { $0.hasPrefix(which + "-") && $0.hasSuffix(".jsonl") })
        let path = folder + "/" + name
        let good = try FileIO.readFile(path)
        for image in files where image.hasSuffix(".image") { FileIO.unlink(folder + "/" + image) }
        var rng = RandomQueries(state: which == "snapshot" ? 202 : 303)
        var refused = 0
        for _ in 0..<(Self.cases / 4) {
            try Data(Self.mutate(good, &rng)).write(to: URL(fileURLWithPath: path))
            do {
                _ = try answers(folder, image: false)
            } catch is StoreError {
                refused += 1
            } catch is IOError {
                refused += 1
            }
        }
        #expect(refused > 0)
    }

    /// A damaged image changes no answer: it is ignored, and the JSON decides.
    @Test func aDamagedImageNeverChangesAnAnswer() throws {
        let folder = try store()
        let expected = try answers(folder, image: false)
        let image = try #require(try FileIO.listDirectory(folder).first { $0.hasSuffix(".image") })
        let path = folder + "/" + image
        let good = try FileIO.readFile(path)
        var rng = RandomQueries(state: 404)
        for _ in 0..<(Self.cases / 4) {
            try Data(Self.mutate(good, &rng)).write(to: URL(fileURLWithPath: path))
            #expect(try answers(folder, image: true) == expected)
        }
    }

    /// Random stores, random commits after the snapshot, and random queries,
    /// answered from the image (checked at open, or piece by piece) and from the JSON alone.
    @Test(arguments: [ImageChecks.atOpen, .onFirstTouch])
    func theImageAnswersEveryQueryAsTheJSONDoes(_ checks: TripStoreCore.ImageChecks) throws {
        var rng = RandomQueries(state: 505)
        for seed in 0..<3 {
            let folder = TestFolders.make("image-diff")
            var g = TripDataGenerator(seed: UInt64(seed + 40))
            let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
            var tx = writer.transaction()
            // Enough trips for several groups of 256 values in the saved indexes.
            try writer.stage(try EnvelopeInput.decode(g.jsonArray(trips: 400), schema: writer.schema), mode: .insert, into: &tx)
            try writer.commit(tx, author: "diff")
            try writer.compact()
            // Random commits on top of the image: renames, deletes, new trips.
            let trips = try writer.run(try Query("is Trip")).rows
            let name = writer.schema.entity(named: "Trip")!.property(named: "name")!.slot
            for k in 0..<20 {
                var change = writer.transaction()
                let row = trips[rng.int(trips.count)]
                guard change.object(at: row) != nil else { continue }
                switch k % 3 {
                case 0: change.setAttribute(row, slot: name, to: .string("renamed \(k)"))
                case 1: try change.delete(row)
                default:
                    var more = TripDataGenerator(seed: UInt64(900 + k))
                    try writer.stage(try EnvelopeInput.decode(more.jsonArray(trips: 1), schema: writer.schema), mode: .upsert, into: &change)
                }
                try writer.commit(change, author: "diff")
            }
            writer.close()
            var json = StoreOptions()
            json.useSnapshotImage = false
            var lazy = StoreOptions()
            lazy.imageChecks = checks
            let fromImage = try Store.open(folder, schema: TripSchema.schema, access: .read, options: lazy)
            let fromJSON = try Store.open(folder, schema: TripSchema.schema, access: .read, options: json)
            #expect(fromImage.loadedFromImage && !fromJSON.loadedFromImage)
            for _ in 0..<100 {
                let q = rng.query()
                let a = try? fromImage.run(try Query(q)).rows.map { fromImage.table.id(at: $0) }
                let b = try? fromJSON.run(try Query(q)).rows.map { fromJSON.table.id(at: $0) }
                #expect(a == b, "\(q)")
                // Counts (an index range answers them without rows) and a sorted page (walking an index in order).
                #expect((try? fromImage.run(try Query(q), countOnly: true).total) == (try? fromJSON.run(try Query(q), countOnly: true).total), "\(q)")
                let sort = rng.pick(["startDate", "name", "perDiemRate", "destination"])
                let descending = rng.int(2) == 0
                let page = { (s: Store) in try? s.run(try Query(q, sort: [SortKey(sort, descending: descending)], limit: 7)).rows.map { s.table.id(at: $0) } }
                #expect(page(fromImage) == page(fromJSON), "\(q) sorted by \(sort)")
            }
            #expect(fromImage.imageDamage == nil)
            #expect(fromImage.checkInvariants() == [])
        }
    }

    /// Damage found after a piece-by-piece open is reported, and a commit then writes nothing.
    /// A compacted store of 150 trips (two groups of rows at least) whose
    /// image's last record then has a bit flipped.
    func storeWithDamagedImage(_ name: String, seed: UInt64) throws -> String {
        let folder = TestFolders.make(name)
        var g = TripDataGenerator(seed: seed)
        let writer = try Store.open(folder, schema: TripSchema.schema, access: .write)
        var load = writer.transaction()
        try writer.stage(try EnvelopeInput.decode(g.jsonArray(trips: 150), schema: writer.schema), mode: .insert, into: &load)
        try writer.commit(load, author: "t")
        try writer.compact()
        writer.close()
        #expect(try answers(folder, image: true).count > 1024)
        let image = try #require(try FileIO.listDirectory(folder).first { $0.hasSuffix(".image") })
        var bytes = try FileIO.readFile(folder + "/" + image)
        // In the last record, found by the last id (packed, as records hold a UUID: `RecordID`).
        let last = try #require(try answers(folder, image: false).last?.split(separator: " ").first)
        var packed = [UInt8](repeating: 0, count: RecordID.packedCount)
        let isUUID = Array(last.utf8).withUnsafeBytes { text in packed.withUnsafeMutableBytes { RecordID.pack(text, into: $0.baseAddress!) } }
        #expect(isUUID)
        let at = try #require(Self.lastRange(of: [RecordID.packedMarker] + packed, in: bytes)).upperBound + 3
        bytes[at] ^= 0x10
        try Data(bytes).write(to: URL(fileURLWithPath: folder + "/" + image))
        return folder
    }

    /// A compaction found damage in the image (checked before it reads the
    /// table) and refuses: the snapshot stays as it was, never a smaller one.
    @Test func damageInTheImageStopsACompaction() throws {
        let folder = try storeWithDamagedImage("compact-damage", seed: 43)
        let snapshot = try #require(try FileIO.listDirectory(folder).first { $0.hasPrefix("snapshot-") && $0.hasSuffix(".jsonl") })
        let before = try FileIO.readFile(folder + "/" + snapshot)
        var lazy = StoreOptions()
        lazy.imageChecks = .onFirstTouch
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: lazy)
        #expect(store.loadedFromImage)
        #expect(throws: StoreError.self) { try store.compact() }
        store.close()
        #expect(try FileIO.readFile(folder + "/" + snapshot) == before)
        #expect(try answers(folder, image: true) == answers(folder, image: false))
    }

    @Test func damageFoundAfterOpenStopsACommit() throws {
        let folder = try storeWithDamagedImage("late-damage", seed: 41)
        var lazy = StoreOptions()
        lazy.imageChecks = .onFirstTouch
        let store = try Store.open(folder, schema: TripSchema.schema, access: .write, options: lazy)
        #expect(store.loadedFromImage && store.imageDamage == nil)
        let journal = try FileIO.readFile(folder + "/" + (try FileIO.listDirectory(folder).first { $0.hasPrefix("journal-") })!)
        let all = store.table.liveRows
        for row in all { _ = store.table.object(at: row) }  // every record read: the damaged one among them
        #expect(store.imageDamage != nil)
        var tx = store.transaction()
        let name = store.schema.entity(named: "Trip")!.property(named: "name")!.slot
        let trip = try #require(all.first { store.schema.entities[store.table.entity(at: $0)!].property(named: "name")?.slot == name })
        tx.setAttribute(trip, slot: name, to: .string("never written"))
        #expect(throws: StoreError.self) { try store.commit(tx, author: "t") }
        #expect(try FileIO.readFile(folder + "/" + (try FileIO.listDirectory(folder).first { $0.hasPrefix("journal-") })!) == journal)
        store.close()
        // Opened again, it is found at once and the JSON is read instead.
        #expect(try answers(folder, image: true) == answers(folder, image: false))
    }
}
