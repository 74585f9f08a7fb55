import Foundation

/// Paths for tests: fresh temporary folders and the project's own files.
enum TestFolders {
    static let projectRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// This test process's own folder under the system's temporary folder
    /// (with a slash at the end), removed when the process exits, so that a
    /// test run leaves nothing behind.
    static let runRoot: String = {
        let path = NSTemporaryDirectory() + "tripstore-test-run-\(getpid())/"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestFolders.runRoot) }
        return path
    }()

    /// A new empty folder under `runRoot`.
    static func make(_ name: String = "store") -> String {
        let path = runRoot + "tripstore-tests/\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
