import TripStoreFormat
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The journal that follows a snapshot, `journal-<token>.jsonl`: one line per
/// transaction committed since, each sealed with its checksum (`JournalFormat`).
///
/// A transaction is committed when its line is on disk: `append` writes the
/// line and flushes it (and the folder, for a new file); on a failure it cuts
/// what it wrote, so the next line never follows a partial one. A line cut
/// short by a crash is the torn tail: readers ignore it, and a writer cuts it
/// before it appends (`cutTornTail`).
final class Journal {
    /// The file.
    let path: String
    private let folder: String
    /// Bytes of complete lines: where the next line goes.
    var size = 0
    /// Complete lines: the transactions committed since the snapshot.
    var transactions = 0
    /// The bytes of its longest complete line, newline included (see
    /// `StoreOptions.snapshotAfterLineBytes`).
    var longestLine = 0
    /// Where a torn last line starts, if the file ends with one.
    var tornTail: Int?
    /// Its replay state, when the store was opened from the snapshot's image
    /// (whose rows the state names): read at open, kept by the writer.
    var state: JournalState?
    /// Open between appends of a writer.
    private var fd: Int32 = -1

    init(folder: String, path: String) {
        self.folder = folder
        self.path = path
    }

    /// Appends one sealed line and makes it durable.
    func append(_ line: [UInt8]) throws {
        var isNew = false
        if fd < 0 {
            isNew = !FileIO.exists(path)
            fd = try FileIO.open(path, O_WRONLY | O_APPEND | O_CREAT)
        }
        let fd = self.fd
        do {
            if CrashPoint.armed == "journal-mid-write" {
                try line.withUnsafeBytes { p in
                    try FileIO.writeAll(fd, UnsafeRawBufferPointer(rebasing: p[0..<(p.count / 2)]), path: path)
                }
                try? FileIO.fsync(fd, path: path)
                CrashPoint.hit("journal-mid-write")
            }
            try FileIO.writeAll(fd, line, path: path)
            CrashPoint.hit("journal-before-fsync")
            try FileIO.fsync(fd, path: path, dataOnly: true)
            if isNew { try FileIO.fsyncDirectory(folder) }
        } catch {
            // Leave no partial line behind for the next commit to follow.
            FileIO.truncate(fd, to: size)
            throw error
        }
        size += line.count
        transactions += 1
        longestLine = max(longestLine, line.count)
        CrashPoint.hit("journal-after-fsync")
    }

    /// Counts a complete line read from the file (its newline not in `line`).
    func counted(_ line: UnsafeBufferPointer<UInt8>) {
        transactions += 1
        longestLine = max(longestLine, line.count + 1)
    }

    /// Cuts a torn last line off the file, keeping every complete one (writers only).
    func cutTornTail() throws {
        guard let cut = tornTail else { return }
        let fd = try FileIO.open(path, O_WRONLY)
        defer { FileIO.close(fd) }
        try FileIO.truncate(fd, to: cut, path: path)
        try FileIO.fsync(fd, path: path)
        tornTail = nil
        size = cut
    }

    /// Closes the file if a writer has it open.
    func close() {
        if fd >= 0 { FileIO.close(fd) }
        fd = -1
        state?.close()
    }

    deinit { close() }
}
