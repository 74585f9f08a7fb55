import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem
import TripStoreModels

@Suite struct TornTailAndLockTests {
    let schema = TripSchema.schema

    func commit(_ id: String, to store: Store) throws {
        try TestStores.commit(TestStores.trip(id), to: store)
    }

    /// White space after the last newline makes no line, but the next line
    /// appended after it would not read back: it is a torn tail like any other.
    @Test(arguments: ["   ", "\t", " \r"])
    func whiteSpaceAfterTheLastLineIsATornTail(_ tail: String) throws {
        let folder = TestFolders.make("torn-space")
        let writer = try Store.open(folder, schema: schema, access: .write)
        try commit("t1", to: writer)
        writer.close()
        let handle = try #require(FileHandle(forWritingAtPath: folder + "/journal-0.jsonl"))
        handle.seekToEndOfFile()
        handle.write(Data(tail.utf8))
        handle.closeFile()

        let reader = try Store.open(folder, schema: schema, access: .read)
        #expect(reader.hasTornTail)
        #expect(reader.warnings.contains { if case .tornTail(_, false) = $0 { return true } else { return false } })

        let again = try Store.open(folder, schema: schema, access: .write)
        #expect(!again.hasTornTail, "the writer cut it")
        try commit("t2", to: again)
        again.close()
        let after = try Store.open(folder, schema: schema, access: .read)
        #expect(after.lastToken == 2 && after.object(id: "t2") != nil && !after.hasTornTail)
    }

    /// A failed first import removes the folder it made, under the lock; a
    /// writer that was waiting for that lock ends up holding the folder's
    /// own lock file, never a removed one that locks nothing.
    @Test func aWriterWaitingWhileTheFolderIsRemovedHoldsTheFoldersLock() throws {
        for round in 0..<20 {
            let folder = TestFolders.make("lock-removed-\(round)")
            var first: StoreLock? = try StoreLock(folder: folder, wait: 0)
            _ = FileManager.default.createFile(atPath: folder + "/journal-0.jsonl", contents: Data())
            let acquired = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var waiter: StoreLock?
            Thread.detachNewThread {
                waiter = try? StoreLock(folder: folder, wait: 10)
                acquired.signal()
            }
            usleep(UInt32(1_000 * (round % 5)))
            first = nil
            _ = first
            StoreFiles(folder: folder).removeIfUnused()
            #expect(acquired.wait(timeout: .now() + 20) == .success)
            let held = try #require(waiter)
            var open = stat(), named = stat()
            #expect(fstat(held.fd, &open) == 0 && stat(folder + "/" + StoreLock.fileName, &named) == 0,
                    "round \(round): the lock file the waiter holds is still there")
            #expect(open.st_ino == named.st_ino, "round \(round)")
            #expect(throws: StoreError.self) { try StoreLock(folder: folder, wait: 0) }
            waiter = nil
        }
    }
}
