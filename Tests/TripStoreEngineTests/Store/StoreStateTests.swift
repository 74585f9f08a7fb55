import Foundation
import Testing
@testable import TripStoreEngine
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

/// A store is in one state, and one check decides whether a write may
/// happen: every public write refuses every state but `.writing`.
@Suite struct StoreStateTests {
    let schema = TripSchema.schema

    /// A writing store with three transactions, one trip each.
    func storeWithThreeSaves(_ name: String, options: StoreOptions = StoreOptions()) throws -> (Store, String) {
        let folder = TestFolders.make(name)
        let store = try Store.open(folder, schema: schema, access: .write, options: options)
        for k in 1...3 { try TestStores.commit(TestStores.trip("t\(k)"), to: store, timestamp: Double(1000 * k)) }
        return (store, folder)
    }

    /// Calls one public write entry point; what it throws, if anything.
    func attempt(_ write: StoreWrite, on store: Store) -> (any Error)? {
        do {
            switch write {
            case .commit:
                var tx = store.transaction()
                try tx.insert("Trip", values: ["name": .string("n"), "destination": .string("d"),
                                                          "startDate": .date(0), "endDate": .date(0)])
                try store.commit(tx, author: "x")
            case .compact: try store.compact()
            case .pruneHistory: try store.pruneHistory(before: 2)
            case .redact: try Redactor(store).redact(ids: ["t1"], author: "x")
            case .repair: _ = try store.removeDanglingReferences(author: "x")
            case .apply: try FeedApplier(store).apply(.object([]), line: 1)
            case .bulkImport:
                var input = TestStores.trip("bulk")
                _ = try BulkImporter(store).insert(&input, author: "x")
            case .migrate:
                var d = store.schema.descriptions
                d[0].attributes.append(AttributeDescription("added", .string, optional: true))
                _ = try Migrator(store).migrate(to: try Schema(d), author: "x")
            }
            return nil
        } catch {
            return error
        }
    }

    func expectEveryWriteRefused(on store: Store, state: StoreState, _ comment: Comment) {
        for write in StoreWrite.allCases {
            let error = attempt(write, on: store)
            guard case StoreError.notWritable(let refused, let at)? = error else {
                Issue.record("\(comment): \(write) was not refused as not writable: \(error.map { "\($0)" } ?? "it succeeded")")
                continue
            }
            #expect(refused == write && at == state, "\(comment)")
        }
    }

    @Test func aReadOnlyStoreRefusesEveryWrite() throws {
        let (writer, folder) = try storeWithThreeSaves("state-read")
        writer.close()
        let reader = try Store.open(folder, schema: schema, access: .read)
        expectEveryWriteRefused(on: reader, state: .reading, "read-only")
        #expect(reader.lastToken == 3)
    }

    @Test func thePastRefusesEveryWriteAndTheLiveStoreKeepsItsSaves() throws {
        let (store, folder) = try storeWithThreeSaves("state-past")
        let past = try store.past(at: .token(1))
        #expect(past.state == .past(token: 1))
        #expect(past.object(id: "t1") != nil && past.object(id: "t2") == nil)
        expectEveryWriteRefused(on: past, state: .past(token: 1), "past")
        // The live store was never turned into the past: it still writes, and
        // what it writes is the present (the data loss this state machine ends).
        #expect(store.state == .writing)
        #expect(store.object(id: "t3") != nil)
        try store.compact()
        _ = try store.pruneHistory(before: 1)
        store.close()
        let reopened = try Store.open(folder, schema: schema, access: .read)
        #expect(reopened.lastToken == 3)
        #expect(["t1", "t2", "t3"].allSatisfy { reopened.object(id: $0) != nil })
        #expect(reopened.history.map(\.token) == [1, 2, 3])
        #expect(reopened.checkInvariants().isEmpty)
    }

    @Test func aClosedStoreRefusesEveryWrite() throws {
        let (store, _) = try storeWithThreeSaves("state-closed")
        store.close()
        #expect(store.state == .closed)
        expectEveryWriteRefused(on: store, state: .closed, "closed")
    }

    @Test func aStoreWhoseSnapshotFailedIsBrokenAndRefusesEveryWrite() throws {
        var options = StoreOptions()
        options.snapshotCommitChanges = 1  // every commit writes a snapshot
        let (store, folder) = try storeWithThreeSaves("state-broken", options: options)
        // The next snapshot's temporary file cannot be created: a folder is in its way.
        try FileManager.default.createDirectory(atPath: folder + "/snapshot-4.jsonl.tmp", withIntermediateDirectories: false)
        #expect(attempt(.commit, on: store) != nil)
        guard case .broken = store.state else {
            Issue.record("a failed snapshot left the store \(store.state)")
            return
        }
        expectEveryWriteRefused(on: store, state: store.state, "broken")
        store.close()
        try FileManager.default.removeItem(atPath: folder + "/snapshot-4.jsonl.tmp")
        // The files still hold the three saves, and a new open writes again.
        let again = try Store.open(folder, schema: schema, access: .write, options: options)
        #expect(again.lastToken == 3 && again.state == .writing)
        #expect(attempt(.commit, on: again) == nil)
    }

    @Test func aStoreOpenedAsOfATokenIsThePastFromTheStart() throws {
        let (store, folder) = try storeWithThreeSaves("state-open-as-of")
        store.close()
        let then = try Store.open(folder, schema: schema, asOf: .time(ISOTime(seconds: 2500)))
        #expect(then.state == .past(token: 2))
        #expect(then.object(id: "t2") != nil && then.object(id: "t3") == nil)
        #expect(throws: StoreError.self) { try Store.open(folder, schema: schema, asOf: .token(9)) }
    }
}
