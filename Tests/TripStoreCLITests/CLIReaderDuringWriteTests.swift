import Foundation
import Testing

/// A reader holds no lock: what a writer does to the journal while a
/// reader opens it (here, cutting the torn tail the reader met) changes
/// neither the reader's exit nor its answer.
@Suite(.serialized) struct CLIReaderDuringWriteTests {
    /// Whether process `pid` holds a descriptor of `path`.
    func holds(_ pid: Int32, _ path: String) -> Bool {
        let fds = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).contains {
            (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + $0)) == path
        }
    }

    /// Found by a hostile review: the reader took the journal's size, a
    /// writer cut the torn tail under it, and the reader's read came up
    /// short and failed with whatever `errno` an earlier call had left.
    @Test func aReaderWhoseTornTailAWriterCutsMeanwhileAnswers() throws {
        let store = CLIRunner.scratch() + "/store"
        #expect(CLIRunner.run(["import", CLIRunner.projectRoot + "/SampleData/trips.json"], store: store).code == 0)
        #expect(CLIRunner.run(["compact"], store: store).code == 0)  // an image, which the replay state needs
        for k in 0..<3 {
            #expect(CLIRunner.run(["update", "rome-summit", "--set", "purpose=\"Plan \(k)\""], store: store).code == 0)
        }
        let journal = try #require(try FileManager.default.contentsOfDirectory(atPath: store).first { $0.hasPrefix("journal-") && $0.hasSuffix(".jsonl") })
        let path = store + "/" + journal
        // The replay state behind a link (never followed): the reader's last failed call leaves ELOOP in
        // errno, which the short read used to report; with ENOENT there the open was retried and hid it.
        let state = store + "/" + journal.replacingOccurrences(of: ".jsonl", with: ".state")
        #expect(FileManager.default.fileExists(atPath: state))
        try FileManager.default.moveItem(atPath: state, toPath: store + "/moved.state")
        try FileManager.default.createSymbolicLink(atPath: state, withDestinationPath: "moved.state")
        // A killed writer's half line, longer than the line the next writer appends where it was.
        let handle = try #require(FileHandle(forWritingAtPath: path))
        handle.seekToEndOfFile()
        handle.write(Data(repeating: UInt8(ascii: "x"), count: 64 << 10))
        try handle.close()

        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: CLIRunner.binary)
        reader.arguments = ["--store", store, "get", "rome-summit"]
        var env = ProcessInfo.processInfo.environment
        env["TRIPSTORE_PAUSE_AT"] = "journal-opened"
        reader.environment = env
        let out = Pipe(), err = Pipe()
        reader.standardOutput = out
        reader.standardError = err
        try reader.run()
        var opened = false
        for _ in 0..<200 where !opened {
            opened = holds(reader.processIdentifier, path)
            if !opened { usleep(10_000) }
        }
        #expect(opened, "the reader opened the journal")
        #expect(CLIRunner.run(["update", "rome-summit", "--set", "purpose=\"Plan 3\""], store: store).code == 0)
        let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let errors = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        #expect(reader.terminationStatus == 0, "\(errors)")
        #expect(output.contains("Plan 2") || output.contains("Plan 3"), "\(output)")
        #expect(!errors.contains("error"), "\(errors)")
    }
}
