import Foundation
import TripStoreCLI
#if canImport(Glibc)
import Glibc
#endif

/// Runs `tripstore` in-process (fast) or as a real process (for crash and lock tests).
enum CLIRunner {
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
        atexit { try? FileManager.default.removeItem(atPath: CLIRunner.runRoot) }
        return path
    }()

    /// A new empty folder under `runRoot`.
    static func scratch() -> String {
        let path = runRoot + "tripstore-cli-tests/\(UUID().uuidString)"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// How a record in memory and in the image holds a UUID id (`RecordID`):
    /// a zero byte, then the 16 bytes its 32 hex digits spell.
    static func packedRecordID(_ uuid: String) -> Data {
        let digits = uuid.utf8.filter { $0 != UInt8(ascii: "-") }.map { c in c <= 0x39 ? c - 0x30 : c - 0x37 }
        return Data([0] + stride(from: 0, to: digits.count, by: 2).map { digits[$0] << 4 | digits[$0 + 1] })
    }

    struct Result {
        var code: Int32
        var out: String
        var err: String
    }

    /// In-process, with a captured console.
    static func run(_ args: [String], store: String? = nil, stdin: String = "", env: [String: String] = [:]) -> Result {
        run(args, store: store, input: .text(stdin), env: env)
    }

    /// In-process, reading `input` (`.arriving` reads as a pipe does: once).
    static func run(_ args: [String], store: String? = nil, input: InputSource, env: [String: String] = [:]) -> Result {
        let console = Console.captured()
        var full = args
        if let store { full = ["--store", store] + args }
        let code = TripStoreCLI.run(full, console: console, environment: ["USER": "tester"].merging(env) { $1 }, input: input)
        return Result(code: code, out: console.outText, err: console.errText)
    }

    /// The built binary, beside the test bundle.
    static var binary: String {
        if let b = ProcessInfo.processInfo.environment["TRIPSTORE_BIN"] { return b }
        let candidates = [Bundle.main.bundlePath, Bundle.main.bundlePath + "/..",
                          projectRoot + "/.build/debug", projectRoot + "/.build/release"]
        for c in candidates where FileManager.default.isExecutableFile(atPath: c + "/tripstore") { return c + "/tripstore" }
        for c in (try? FileManager.default.contentsOfDirectory(atPath: projectRoot + "/.build")) ?? [] {
            let p = projectRoot + "/.build/" + c + "/debug/tripstore"
            if FileManager.default.isExecutableFile(atPath: p) { return p }
        }
        return projectRoot + "/.build/debug/tripstore"
    }

    /// Waits until no compaction holds the store's `fold.lock` (at most a minute).
    static func waitForCompactions(_ store: String) {
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            let fd = open(store + "/fold.lock", O_RDONLY)
            if fd < 0 { return }
            defer { close(fd) }
            if flock(fd, LOCK_EX | LOCK_NB) == 0 {
                flock(fd, LOCK_UN)
                return
            }
            usleep(50_000)
        }
    }

    /// Starts the binary as a child process (`stderr`: into a `Pipe` at `standardError`).
    static func start(_ args: [String], env: [String: String] = [:], executable: String? = nil, stderr: Bool = false) throws -> Process {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable ?? binary)
        p.arguments = executable == nil ? args : Array(args.dropFirst())
        var e = ProcessInfo.processInfo.environment
        e["USER"] = "tester"
        for (k, v) in env { e[k] = v }
        p.environment = e
        p.standardOutput = FileHandle.nullDevice
        p.standardError = stderr ? Pipe() : FileHandle.nullDevice
        try p.run()
        return p
    }

    /// Runs the binary to the end; returns its exit status and how it ended.
    /// `executable` runs another program instead (`args[0]` names it, as in a shell).
    static func runProcess(_ args: [String], env: [String: String] = [:], executable: String? = nil) throws -> (status: Int32, killed: Bool) {
        let p = try start(args, env: env, executable: executable)
        p.waitUntilExit()
        return (p.terminationStatus, p.terminationReason == .uncaughtSignal)
    }
}
