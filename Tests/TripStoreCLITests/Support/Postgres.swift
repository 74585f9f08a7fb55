import Foundation
import Testing

/// The PostgreSQL server the feed's tests use (docs/postgres.md): the one `.ci/run`
/// starts (`PGHOST`, `PGPORT`, `PGUSER`), reached through `psql`. Each test
/// makes a database of its own. Where `TRIPSTORE_TEST_POSTGRES=required`
/// (CI), a server that cannot be reached fails the tests instead of
/// skipping them.
enum Postgres {
    static var required: Bool { ProcessInfo.processInfo.environment["TRIPSTORE_TEST_POSTGRES"] == "required" }

    /// Why the server cannot be used, or nil when it answers.
    static let problem: String? = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/psql") else { return "psql is not installed (/usr/bin/psql)" }
        let r = psql(["-d", "postgres", "-tAc", "select 1"])
        return r.status == 0 && r.out.trimmingCharacters(in: .whitespacesAndNewlines) == "1" ? nil
            : "no PostgreSQL server answers at PGHOST=\(ProcessInfo.processInfo.environment["PGHOST"] ?? "(unset)") "
              + "PGPORT=\(ProcessInfo.processInfo.environment["PGPORT"] ?? "(unset)"): \(r.err.prefix(300)); .ci/run starts one"
    }()

    /// Whether the tests can run; records an issue (fails) where the server is required but absent.
    static func available() -> Bool {
        guard let problem else { return true }
        if required { Issue.record(Comment(rawValue: "PostgreSQL is required here and cannot be used: \(problem)")) }
        return false
    }

    /// A new empty database's name.
    static func database() -> String {
        let name = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        _ = psql(["-d", "postgres", "-c", "CREATE DATABASE \(name)"])
        return String(name)
    }

    struct Result {
        var status: Int32
        var out: String
        var err: String
    }

    /// Runs `psql ARGS` with `input` (or the file `inputFile`) on its standard input.
    @discardableResult
    static func psql(_ args: [String], input: Data? = nil, inputFile: String? = nil) -> Result {
        let scratch = NSTemporaryDirectory() + "tripstore-psql-\(UUID().uuidString)"
        defer {
            try? FileManager.default.removeItem(atPath: scratch + ".in")
            try? FileManager.default.removeItem(atPath: scratch + ".err")
        }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        p.arguments = ["-X", "-q"] + args
        let out = Pipe()
        p.standardOutput = out
        _ = FileManager.default.createFile(atPath: scratch + ".err", contents: nil)
        p.standardError = FileHandle(forWritingAtPath: scratch + ".err")
        if let inputFile {
            p.standardInput = FileHandle(forReadingAtPath: inputFile)
        } else if let input {
            _ = FileManager.default.createFile(atPath: scratch + ".in", contents: input)
            p.standardInput = FileHandle(forReadingAtPath: scratch + ".in")
        } else {
            p.standardInput = FileHandle.nullDevice
        }
        do { try p.run() } catch { return Result(status: -1, out: "", err: "\(error)") }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        let errData = (try? Data(contentsOf: URL(fileURLWithPath: scratch + ".err"))) ?? Data()
        return Result(status: p.terminationStatus, out: String(decoding: outData, as: UTF8.self), err: String(decoding: errData, as: UTF8.self))
    }

    /// One value from a query.
    static func value(_ db: String, _ sql: String) -> String {
        psql(["-d", db, "-tAc", sql]).out.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
