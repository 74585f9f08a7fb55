import Foundation
import Testing
@testable import TripStoreCLI
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A write to a store whose first import is still running waits for the
/// lock, as any writer does, instead of finding "no store" at once.
@Suite struct CLIWaitForFirstImportTests {
    /// Holds the writer's lock of `folder`, as an import in progress does.
    static func holdLock(_ folder: String) throws -> Int32 {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let fd = open(folder + "/tripstore.lock", O_RDWR | O_CREAT, 0o644)
        try #require(fd >= 0 && flock(fd, LOCK_EX) == 0)
        return fd
    }

    @Test func anUpdateWaitsForTheFirstImportAndThenCommits() throws {
        let made = CLIRunner.scratch() + "/made", folder = CLIRunner.scratch() + "/importing"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: made).code == 0)
        let lock = try Self.holdLock(folder)
        let update = try CLIRunner.start(["--store", folder, "--wait", "30", "update", "rome-summit", "--set", "destination=Roma"])
        usleep(400_000)
        #expect(update.isRunning, "the update waits for the lock")
        // The import commits: its files appear, then it lets go of the lock.
        for name in try FileManager.default.contentsOfDirectory(atPath: made) where name != "tripstore.lock" {
            try FileManager.default.copyItem(atPath: made + "/" + name, toPath: folder + "/" + name)
        }
        close(lock)
        update.waitUntilExit()
        #expect(update.terminationStatus == 0)
        #expect(CLIRunner.run(["query", "destination == \"Roma\"", "--count"], store: folder).out == "1\n")
    }

    @Test func anUpdateThatWaitedForAFailedFirstImportFindsNoStoreAndLeavesNoFolder() throws {
        let folder = CLIRunner.scratch() + "/failing"
        let lock = try Self.holdLock(folder)
        let update = try CLIRunner.start(["--store", folder, "--wait", "30", "update", "rome-summit", "--set", "destination=Roma"])
        usleep(400_000)
        #expect(update.isRunning, "the update waits for the lock")
        // The import fails: it removes what it made, then lets go of the lock.
        unlink(folder + "/tripstore.lock")
        rmdir(folder)
        close(lock)
        update.waitUntilExit()
        #expect(update.terminationStatus == 1)
        #expect(!FileManager.default.fileExists(atPath: folder))
    }

    @Test func aRefusedFeedLeavesNoNewFolder() throws {
        let primary = CLIRunner.scratch() + "/primary", standby = CLIRunner.scratch() + "/standby"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: primary).code == 0)
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "destination=Roma"], store: primary).code == 0)
        // Token 2 alone: the standby has no token 1, and the line updates what is not there.
        let feed = CLIRunner.run(["history", "--format", "feed", "--since", "1"], store: primary).out
        let line = feed.replacingOccurrences(of: #""token":2"#, with: #""token":1"#)
        let r = CLIRunner.run(["apply", "-"], store: standby, stdin: line)
        #expect(r.code == 1, "\(r.err)")
        #expect(!FileManager.default.fileExists(atPath: standby), "\(r.err)")
    }
}
