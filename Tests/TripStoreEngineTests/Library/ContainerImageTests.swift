import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreSystem
import TripStoreModels

/// A `ModelContainer` maps the snapshot image and checks each piece when a
/// read first touches it, as the command line does: the open costs the same
/// at any size, and work that touches a damaged piece is done again on the
/// store read from its JSON.
@Suite struct ContainerImageTests {
    /// A store of the sample data with a snapshot and its image; the names of
    /// two trips whose rows are in different groups of the image.
    static func makeStore(_ name: String) throws -> (folder: String, damaged: String, sound: String, damagedRow: RowID) {
        let store = try TestStores.sampleTrips(name)
        let folder = store.files.folder
        try store.compact()
        store.close()
        let reader = try Store.open(folder, schema: TripSchema.schema, access: .read)
        defer { reader.close() }
        let trips = try reader.run(try Query("is Trip")).rows
        let a = try #require(trips.first), b = try #require(trips.last { $0 >> SnapshotImage.groupShift != a >> SnapshotImage.groupShift })
        guard case .string(let damaged) = reader.table.value(at: a, slot: 0), case .string(let sound) = reader.table.value(at: b, slot: 0) else {
            throw TestFailure("no names")
        }
        return (folder, damaged, sound, a)
    }

    struct TestFailure: Error { let text: String; init(_ t: String) { text = t } }

    /// Flips a byte of a row's record in the image file.
    static func damageRecord(_ folder: String, row: RowID) throws {
        let store = try Store.open(folder, schema: TripSchema.schema, access: .read)
        let image = try #require(store.table.image)
        let at = image.layout.records + Int(image.recordOffset(Int(row))) + 20
        let path = store.imagePath
        store.close()
        var bytes = try FileIO.readFile(path)
        bytes[at] ^= 0x20
        let fd = try FileIO.open(path, O_WRONLY)
        try bytes.withUnsafeBytes { try FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: $0[at...at]), at: at, path: path) }
        FileIO.close(fd)
    }

    static func fetch(_ context: ModelContext, name: String) throws -> [Trip] {
        try context.fetch(FetchDescriptor<Trip>(predicate: #Predicate { $0.name == name }))
    }

    // Damage met in the middle of a context's work: the container reads the
    // store again from its JSON, once, and the work goes on with what the
    // context holds (fetched objects, pending changes) as it was.
    @Test func aFetchThatTouchesADamagedPieceIsAnsweredFromTheJSON() throws {
        let (folder, damaged, sound, row) = try Self.makeStore("container-image-lazy")
        try Self.damageRecord(folder, row: row)
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        #expect(container.store.loadedFromImage)
        let context = ModelContext(container)
        let kept = try #require(try Self.fetch(context, name: sound).first)
        kept.destination = "Pending, still"
        #expect(try Self.fetch(context, name: damaged).map(\.name) == [damaged])
        guard case .imageReadAgain(_, _, let rebuilt)? = container.warnings.last else {
            Issue.record("no warning: \(container.warnings)")
            return
        }
        #expect(rebuilt && container.store.imageDamage == nil)
        #expect(kept.destination == "Pending, still" && context.hasChanges)
        _ = kept.bucketList.map(\.title)  // a fault loads from the new store
        #expect(try context.save(author: "t") != nil)
        // The writer wrote a new image: another process opens it sound.
        container.close()
        let next = try Store.open(folder, schema: TripSchema.schema, access: .read, options: { var o = StoreOptions(); o.imageChecks = .atOpen; return o }())
        #expect(next.loadedFromImage && next.imageDamage == nil)
        #expect(next.object(id: kept.persistentModelID)?.values[1] == .string("Pending, still"))
        next.close()
    }

    // Read again from the JSON, the past stays the past (not the store now).
    @Test func thePastThatMeetsDamageIsRebuiltAtItsToken() throws {
        let (folder, damaged, _, row) = try Self.makeStore("container-image-past")
        try Self.damageRecord(folder, row: row)
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        let token = container.withStore { $0.lastToken }
        let past = try container.asOf(token)  // mapping the damaged image
        let now = ModelContext(container)
        let renamed = try #require(try Self.fetch(now, name: damaged).first)
        renamed.name = "Renamed later"
        try now.save(author: "t")
        let then = ModelContext(past)
        #expect(try Self.fetch(then, name: damaged).map(\.name) == [damaged])
        #expect(try Self.fetch(then, name: "Renamed later").isEmpty)
        if case .past(let t) = past.withStore({ $0.state }) { #expect(t == token) } else { Issue.record("not the past") }
        #expect(past.warnings.contains { if case .imageReadAgain = $0 { true } else { false } })
    }

    @Test func aSaveThatMeetsDamageCommitsFromTheJSON() throws {
        let (folder, _, sound, row) = try Self.makeStore("container-image-save")
        try Self.damageRecord(folder, row: row)
        let container = try ModelContainer(folder: folder, models: TripSchema.models)
        let context = ModelContext(container)
        let trip = try #require(try Self.fetch(context, name: sound).first)
        trip.destination = "Saved after the damage"
        _ = container.store.table.object(at: row)  // another read meets the damaged piece first
        #expect(container.store.imageDamage != nil)
        let saved = try #require(try context.save(author: "t"))
        #expect(saved.changes.map(\.id) == [trip.persistentModelID])
        #expect(container.store.imageDamage == nil && !context.hasChanges)
        #expect(try Self.fetch(context, name: sound).first?.destination == "Saved after the damage")
    }

    // The policy a program that opens stores for a piece of work uses (each
    // `tripstore` command does): run again from the JSON unless committed.
    @Test func imageRecoveryRunsTheWorkAgainFromTheJSON() throws {
        let (folder, damaged, _, row) = try Self.makeStore("image-recovery")
        try Self.damageRecord(folder, row: row)
        var opened: Store?
        var runs: [Bool] = []
        let query = try Query("name == \"\(damaged)\"")
        let (count, outcome) = try ImageRecovery.run(damage: { opened?.imageDamage.map { (opened!.imagePath, $0) } },
                                                     committed: { false }) { fromJSON in
            runs.append(fromJSON)
            var options = StoreOptions()
            options.useSnapshotImage = !fromJSON
            let store = try Store.open(folder, schema: TripSchema.schema, access: .read, options: options)
            opened = store
            return try store.run(query).rows.compactMap { store.object(at: $0)?.id }.count
        }
        #expect(runs == [false, true] && count == 1)
        guard case .ranAgainFromJSON(let file, _) = outcome else {
            Issue.record("\(outcome)")
            return
        }
        #expect(file.hasSuffix(".image"))
        // Work that committed keeps its result: it is not done twice.
        var twice = 0
        let (_, after) = try ImageRecovery.run(damage: { (file: "x.image", detail: "bad") }, committed: { true }) { _ in twice += 1 }
        #expect(twice == 1 && after == .damagedAfterCommit(file: "x.image", detail: "bad"))
    }

    @Test func checksAtOpenReadTheJSONInsteadOfADamagedImage() throws {
        let (folder, damaged, sound, row) = try Self.makeStore("container-image-at-open")
        try Self.damageRecord(folder, row: row)
        var options = StoreOptions()
        options.imageChecks = .atOpen
        let container = try ModelContainer(folder: folder, models: TripSchema.models, options: options)
        #expect(!container.store.loadedFromImage)
        let context = ModelContext(container)
        #expect(try Self.fetch(context, name: damaged).map(\.name) == [damaged])
        #expect(try Self.fetch(context, name: sound).map(\.name) == [sound])
    }
}
