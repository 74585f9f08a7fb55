#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A failed system call: which call, on which path, and errno's text.
public struct IOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The system call or step that failed ("open", "write", "fsync").
    public var operation: String
    /// The file or folder it was about.
    public var path: String
    /// The `errno` value, or `notRegularFile` (see `reason` for the typed form).
    package var code: Int32

    package init(operation: String, path: String, code: Int32) {
        self.operation = operation
        self.path = path
        self.code = code
    }

    /// "operation path: reason", as `strerror` words the code.
    public var description: String {
        "\(operation) \(path): " + (code == IOError.notRegularFile ? "not a regular file" : String(cString: strerror(code)))
    }

    /// The code for a path that is a folder, a FIFO, a device or a socket
    /// where a regular file is needed (no errno says that).
    package static let notRegularFile: Int32 = -1

    /// Why a system call failed.
    public enum Reason: Sendable, Equatable {
        /// The call set `errno` to this (`ENOENT`, `EACCES`, `ENOSPC`, …).
        case system(errno: Int32)
        /// The path is a folder, a FIFO, a device or a socket where a regular file is needed.
        case notARegularFile
    }

    /// Why it failed.
    public var reason: Reason { code == Self.notRegularFile ? .notARegularFile : .system(errno: code) }
}

/// Every system call the store makes goes through here: retried on `EINTR`,
/// returning typed errors.
public enum FileIO {

    package static func open(_ path: String, _ flags: Int32, mode: mode_t = 0o644) throws -> Int32 {
        while true {
            let fd = systemOpen(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno != EINTR { throw IOError(operation: "open", path: path, code: errno) }
        }
    }

    package static func close(_ fd: Int32) {
        _ = systemClose(fd)
    }

    /// Reads up to `buffer.count` bytes at `offset`; the count read, or -1 on an error.
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, at offset: Int) -> Int {
        var done = 0
        while done < buffer.count {
            let n = pread(fd, buffer.baseAddress! + done, buffer.count - done, off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                return -1
            }
            if n == 0 { break }
            done += n
        }
        return done
    }

    /// Turns `O_DIRECT` on or off; whether it is on afterwards.
    package static func setDirect(_ fd: Int32, _ on: Bool) -> Bool {
        #if os(Linux) && (arch(x86_64) || arch(arm64))
        // Glibc leaves O_DIRECT out of its module (it needs _GNU_SOURCE); its value differs by architecture.
        #if arch(x86_64)
        let odirect: Int32 = 0o40000
        #else
        let odirect: Int32 = 0o200000
        #endif
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0 else { return false }
        let wanted = on ? flags | odirect : flags & ~odirect
        return fcntl(fd, F_SETFL, wanted) == 0 && on
        #else
        return false
        #endif
    }

    /// The size of an open file.
    package static func size(_ fd: Int32, path: String) throws -> Int {
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw IOError(operation: "stat", path: path, code: errno) }
        return Int(st.st_size)
    }

    /// Opens a regular file for reading: never waits on a FIFO, and refuses
    /// anything that is not a regular file (a device would read for ever).
    package static func openRegular(_ path: String) throws -> Int32 {
        let fd = try open(path, O_RDONLY | O_NONBLOCK)
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let e = IOError(operation: "stat", path: path, code: errno)
            close(fd)
            throw e
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw IOError(operation: "open", path: path, code: IOError.notRegularFile)
        }
        return fd
    }

    /// Reads a whole regular file.
    public static func readFile(_ path: String) throws -> [UInt8] {
        var identity: FileIdentity?
        return try readWhole(path, identity: &identity, hugePages: false)
    }

    /// Reads a big file read whole at every open (a long journal) into 2 MB
    /// pages where the kernel can: a page fault per 2 MB, not per 4 KB.
    public static func readFile(_ path: String, hugePages: Bool) throws -> [UInt8] {
        var identity: FileIdentity?
        return try readWhole(path, identity: &identity, hugePages: hugePages)
    }

    /// Reads a whole regular file, and notes what the file system said of it
    /// once read: reading it again later, the caller can tell whether it is
    /// still the same file with the same contents.
    public static func readFile(_ path: String, identity: inout FileIdentity?) throws -> [UInt8] {
        try readWhole(path, identity: &identity, hugePages: false)
    }

    private static func readWhole(_ path: String, identity: inout FileIdentity?, hugePages: Bool) throws -> [UInt8] {
        let fd = try openRegular(path)
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0 else { throw IOError(operation: "stat", path: path, code: errno) }
        // Read straight into uninitialized storage: zeroing a big file's buffer first costs a pass over it.
        var failure: (any Error)?
        // (Never with a capacity of 0: that writes to the empty array all threads share.)
        let size = max(0, Int(st.st_size))
        var out = size == 0 ? [] : [UInt8](unsafeUninitializedCapacity: size) { buffer, count in
            if hugePages, let base = buffer.baseAddress { MemoryTuning.preferHugePages(UnsafeMutableRawPointer(base), byteCount: size) }
            do {
                count = try read(fd, into: UnsafeMutableRawBufferPointer(buffer), path: path)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
        // The file may have grown since fstat (a writer appending): read the
        // rest, through a buffer on the stack (a fresh heap buffer costs a
        // page fault per 4 KB, on every read of a small file).
        try withUnsafeTemporaryAllocation(byteCount: 4096, alignment: 16) { chunk in
            while true {
                let n = systemRead(fd, chunk.baseAddress!, chunk.count)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw IOError(operation: "read", path: path, code: errno)
                }
                if n == 0 { break }
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[0..<n]))
            }
        }
        identity = FileIdentity.of(fd)
        return out
    }

    /// Reads from the file's position until `buffer` is full or the file
    /// ends; returns how many bytes it read (fewer than the buffer holds only at the end).
    package static func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, path: String) throws -> Int {
        var count = 0
        while count < buffer.count {
            let n = systemRead(fd, buffer.baseAddress! + count, buffer.count - count)
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(operation: "read", path: path, code: errno)
            }
            if n == 0 { break }
            count += n
        }
        return count
    }

    /// Writes all of `bytes` at the file's position (or end, with `O_APPEND`).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, path: String) throws {
        var done = 0
        while done < bytes.count {
            let n = systemWrite(fd, bytes.baseAddress! + done, min(bytes.count - done, 1 << 30))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(operation: "write", path: path, code: errno)
            }
            done += n
        }
    }

    /// The most a write of a file that commands map goes in one piece: the
    /// file system caches each write in a folio up to its size, and a process
    /// that maps the file maps a whole folio at each fault. A command that
    /// reads a few rows of a column written in 2 MB writes counts megabytes
    /// resident for each; in small pieces, a query that walks many rows takes
    /// more faults. This size keeps most of both.
    package static let mappedWritePiece = 256 << 10

    /// Writes all of `bytes` at `offset` (the file position is not used), in
    /// pieces of at most `piece` bytes (`mappedWritePiece` for a file that is mapped).
    package static func writeAll(_ fd: Int32, _ bytes: UnsafeRawBufferPointer, at offset: Int, path: String, piece: Int = 1 << 30) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, min(bytes.count - done, piece), off_t(offset + done))
            if n < 0 {
                if errno == EINTR { continue }
                throw IOError(operation: "write", path: path, code: errno)
            }
            done += n
        }
    }

    package static func writeAll(_ fd: Int32, _ bytes: [UInt8], path: String) throws {
        try bytes.withUnsafeBytes { p in try writeAll(fd, p, path: path) }
    }

    /// Flushes a file to disk; `dataOnly` (fdatasync) skips metadata that is
    /// not needed to read the data back, such as times (the size is still flushed).
    package static func fsync(_ fd: Int32, path: String, dataOnly: Bool = false) throws {
        while (dataOnly ? systemFdatasync(fd) : systemFsync(fd)) != 0 {
            if errno != EINTR { throw IOError(operation: "fsync", path: path, code: errno) }
        }
    }

    /// Flushes a folder, so that a rename or a new file in it survives a crash.
    package static func fsyncDirectory(_ path: String) throws {
        let fd = try open(path, O_RDONLY | O_DIRECTORY)
        defer { close(fd) }
        try fsync(fd, path: path)
    }

    package static func rename(_ from: String, _ to: String) throws {
        if systemRename(from, to) != 0 { throw IOError(operation: "rename", path: from, code: errno) }
    }

    /// Creates `path` anew for this process alone (`flags` add the access
    /// mode): whatever was left there is removed first, a link as the link
    /// itself, and the file is never made through a link, nor over one that
    /// appears meanwhile. For temporary files beside a store's, whose names
    /// are fixed and whose folder a copy or a restore may bring links into.
    package static func createFresh(_ path: String, _ flags: Int32) throws -> Int32 {
        unlink(path)
        return try open(path, flags | O_CREAT | O_EXCL | O_NOFOLLOW)
    }

    /// Replaces `path` with `bytes` all or nothing: a temporary file beside
    /// it, written and flushed, renamed over it, and `folder` flushed.
    package static func replaceDurably(_ path: String, with bytes: [UInt8], folder: String) throws {
        try replaceDurably(path, folder: folder) { fd, temp in try writeAll(fd, bytes, path: temp) }
    }

    /// `replaceDurably`, the contents written by `write` to the temporary
    /// file's descriptor (and path, for its errors).
    package static func replaceDurably(_ path: String, folder: String, write: (Int32, String) throws -> Void) throws {
        let temp = path + ".tmp"
        let fd = try createFresh(temp, O_WRONLY)
        do {
            try write(fd, temp)
            try fsync(fd, path: temp)
            close(fd)
            try rename(temp, path)
            try fsyncDirectory(folder)
        } catch {
            close(fd)
            unlink(temp)
            throw error
        }
    }

    public static func unlink(_ path: String) {
        _ = systemUnlink(path)
    }

    package static func truncate(_ fd: Int32, to size: Int, path: String) throws {
        if ftruncate(fd, off_t(size)) != 0 { throw IOError(operation: "truncate", path: path, code: errno) }
    }

    public static func fileSize(_ path: String) -> Int? {
        var st = stat()
        guard stat(path, &st) == 0 else { return nil }
        return Int(st.st_size)
    }

    package static func isDirectory(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
    }

    public static func exists(_ path: String) -> Bool {
        access(path, F_OK) == 0
    }

    /// Creates a folder and its parents.
    package static func makeDirectory(_ path: String) throws {
        if isDirectory(path) { return }
        var parts = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        var prefix = path.hasPrefix("/") ? "" : "."
        if path.hasPrefix("/") { parts.removeFirst() }
        for p in parts where !p.isEmpty {
            prefix += "/" + p
            if isDirectory(prefix) { continue }
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw IOError(operation: "mkdir", path: prefix, code: errno)
            }
        }
    }

    /// The names in a folder (not `.` or `..`).
    package static func listDirectory(_ path: String) throws -> [String] {
        guard let dir = opendir(path) else { throw IOError(operation: "opendir", path: path, code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

extension FileIO {
    /// Whether an open file is a regular file (not a link target we refuse, a FIFO or a device).
    package static func isRegularFile(_ fd: Int32) -> Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG
    }

    /// Whether `fd` is a regular file with no other name (no hard link elsewhere shares what is written to it).
    package static func isRegularFileOfItsOwn(_ fd: Int32) -> Bool {
        var st = stat()
        return fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_nlink == 1
    }

    /// Removes a file, or an empty folder, at `path` (what a crash or a
    /// person may have left where a store's file goes).
    package static func removeFileOrEmptyFolder(_ path: String) {
        if systemUnlink(path) != 0 && errno == EISDIR { _ = rmdir(path) }
    }

    /// Takes an advisory lock on the whole file without waiting; true when taken.
    package static func tryLock(_ fd: Int32, exclusive: Bool) -> Bool {
        while true {
            if flock(fd, (exclusive ? LOCK_EX : LOCK_SH) | LOCK_NB) == 0 { return true }
            if errno != EINTR { return false }
        }
    }

    package static func unlock(_ fd: Int32) {
        _ = flock(fd, LOCK_UN)
    }

    /// Writes `bytes` at `offset` (the file position is not used).
    package static func write(_ fd: Int32, _ bytes: [UInt8], at offset: Int) -> Bool {
        bytes.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(offset)) } == bytes.count
    }

    /// Cuts a file to `size` bytes; false on failure.
    @discardableResult
    package static func truncate(_ fd: Int32, to size: Int) -> Bool {
        ftruncate(fd, off_t(size)) == 0
    }

    /// A private, writable mapping of `length` bytes of the file from `offset`
    /// (a multiple of `pageSize`); changes never reach the file.
    package static func mapPrivate(_ fd: Int32, length: Int, offset: Int) -> UnsafeMutableRawPointer? {
        guard let p = mmap(nil, length, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, off_t(offset)), p != MAP_FAILED else { return nil }
        // Read what is touched, not its neighbourhood: a cold command touches little.
        _ = madvise(p, length, MADV_RANDOM)
        return p
    }

    /// A read-only mapping of the first `length` bytes of the file, its
    /// pages mapped at once (where the system can) for a reader that reads
    /// them all; nil where the file cannot be mapped. Only for files that
    /// are never cut shorter while they may be mapped: a page past a new
    /// end would fault.
    package static func mapReadOnly(_ fd: Int32, length: Int) -> UnsafeRawPointer? {
        #if os(Linux)
        let flags = MAP_PRIVATE | MAP_POPULATE
        #else
        let flags = MAP_PRIVATE
        #endif
        guard length > 0, let p = mmap(nil, length, PROT_READ, flags, fd, 0), p != MAP_FAILED else { return nil }
        return UnsafeRawPointer(p)
    }

    /// Tells the kernel how a mapping made by `mapPrivate` is about to be
    /// read: all of it, from the start (`true`: its pages are read ahead, in
    /// big reads), or a page here and there (`false`, as it was mapped: a
    /// page at a time as it is touched). Only a hint.
    package static func willRead(_ p: UnsafeMutableRawPointer, length: Int, all: Bool) {
        if all {
            _ = madvise(p, length, MADV_SEQUENTIAL)
            _ = madvise(p, length, MADV_WILLNEED)
        } else {
            _ = madvise(p, length, MADV_RANDOM)
        }
    }

    package static func unmap(_ p: UnsafeMutableRawPointer, length: Int) {
        _ = munmap(p, length)
    }

    package static var pageSize: Int { Int(sysconf(Int32(_SC_PAGESIZE))) }

    /// Cores online.
    package static var cores: Int { max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))) }
}

/// What the file system says about one file: enough to notice that it was
/// replaced, edited, copied over or touched since it was last looked at.
public struct FileIdentity: Equatable, Sendable {
    package var device: UInt64
    package var inode: UInt64
    package var size: Int64
    /// Last modification and last status change, in nanoseconds since 1970.
    package var modified: Int64
    package var changed: Int64

    package init(device: UInt64, inode: UInt64, size: Int64, modified: Int64, changed: Int64) {
        self.device = device
        self.inode = inode
        self.size = size
        self.modified = modified
        self.changed = changed
    }

    /// Whether both name the same file (device and inode), whatever was
    /// done to it since: a file changed in place, not another copy.
    package func isSameFile(as other: FileIdentity) -> Bool {
        device == other.device && inode == other.inode
    }

    /// The identity of an open file.
    package static func of(_ fd: Int32) -> FileIdentity? {
        var st = stat()
        guard fstat(fd, &st) == 0 else { return nil }
        #if canImport(Darwin)
        let m = st.st_mtimespec, c = st.st_ctimespec
        #else
        let m = st.st_mtim, c = st.st_ctim
        #endif
        return FileIdentity(device: UInt64(st.st_dev), inode: UInt64(st.st_ino), size: Int64(st.st_size),
                            modified: Int64(m.tv_sec) * 1_000_000_000 + Int64(m.tv_nsec),
                            changed: Int64(c.tv_sec) * 1_000_000_000 + Int64(c.tv_nsec))
    }
}
