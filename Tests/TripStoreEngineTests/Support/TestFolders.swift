import Foundation

/// Paths for tests: fresh temporary folders and the project's own files.
enum TestFolders {
    static let projectRoot: String = {
        var url = URL(fileURLWithPath: #filePath)
        for _ in 0..<4 { url.deleteLastPathComponent() }
        return url.path
    }()

    /// A new empty folder under the system's temporary folder.
    static func make(_ name: String = "store") -> String {
        let path = NSTemporaryDirectory() + "tripstore-tests/\(name)-\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}
