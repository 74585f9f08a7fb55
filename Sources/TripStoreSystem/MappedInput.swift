#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that is (nearly) all in the page cache, mapped read-only, so that an
/// import decodes its bytes where they are instead of copying them into
/// buffers of its own.
///
/// Why: reading a cached input costs a copy of every byte and, for the
/// buffers, fresh pages; a window read into a fresh buffer keeps both
/// decoding cores waiting while it is copied. Where more than a
/// sixty-fourth of the pages is not cached, reading them through the map
/// would take a page for each from the page cache (see
/// `StreamingFileReader`), so `map` returns nil and the caller reads the file.
///
/// A mapped file that shrinks while it is read (or a page of it the disk
/// cannot read) raises `SIGBUS`; only a process that set `allowMapping()`
/// (the command-line tool) maps, and while a file is mapped it exits with
/// the message and code that tool gave (its import has not written anything
/// while it decodes).
package final class MappedInput: @unchecked Sendable {
    /// Where the mapping starts, and its length (the file's size).
    package let bytes: UnsafeRawBufferPointer
    /// Pages before this offset are no longer held (see `discard`).
    private var discarded = 0

    /// Set once, by the command-line tool's first lines, before any other thread runs.
    nonisolated(unsafe) private static var allowed = false
    /// What the process says, and its exit code, when a mapped file cannot be read.
    nonisolated(unsafe) private static var fault: (message: StaticString, exitCode: Int32) = ("", 1)

    /// Lets `map` map files in this process, which takes over `SIGBUS` while
    /// a file is mapped: a read past the end of a file that shrank writes
    /// `message` to standard error and exits with `exitCode`.
    package static func allowMapping(onFault message: StaticString, exitCode: Int32) {
        fault = (message, exitCode)
        allowed = true
    }

    /// Maps `fd` (the regular file at `path`, `size` bytes, open for
    /// reading) when mapping is allowed and nearly all of it is in the page cache.
    package static func map(_ fd: Int32, size: Int, path: String) -> MappedInput? {
        #if os(Linux)
        guard allowed, size > 0, let p = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED else { return nil }
        let pages = (size + FileIO.pageSize - 1) / FileIO.pageSize
        var resident = [UInt8](repeating: 0, count: pages)
        // A few pages the page cache let go of since the file was written
        // are read in ahead by `prepare`, on the reading thread.
        guard resident.withUnsafeMutableBufferPointer({ mincore(p, size, $0.baseAddress!) }) == 0,
              resident.lazy.filter({ $0 & 1 == 0 }).count <= pages / 64 else {
            munmap(p, size)
            return nil
        }
        // Test hook: the file shrinks under the mapping, as another process may make it.
        if CrashPoint.armed == "input-shrinks-after-map" { _ = truncate(path, off_t(FileIO.pageSize)) }
        return MappedInput(UnsafeRawBufferPointer(start: p, count: size))
        #else
        return nil
        #endif
    }

    private init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
        // Reading past the end of a file that shrank (or a page the disk
        // could not read): a message, not a crash. Only async-signal-safe
        // calls, on bytes that need no allocation.
        signal(SIGBUS) { _ in
            let fault = MappedInput.fault
            _ = write(2, fault.message.utf8Start, fault.message.utf8CodeUnitCount)
            _exit(fault.exitCode)
        }
    }

    deinit {
        munmap(UnsafeMutableRawPointer(mutating: bytes.baseAddress!), bytes.count)
        signal(SIGBUS, SIG_DFL)
    }

    /// Sets up the page tables of `range` ahead (`MADV_POPULATE_READ`), so
    /// that the threads that read it next do not fault on each page. Only a
    /// hint: nothing happens on kernels before 5.14.
    package func prepare(_ range: Range<Int>) {
        #if os(Linux)
        let page = FileIO.pageSize
        let start = range.lowerBound / page * page, end = min(bytes.count, range.upperBound)
        guard end > start else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + start), end - start, 22)  // MADV_POPULATE_READ
        #endif
    }

    /// Lets go of the pages wholly before `offset` (they stay in the page
    /// cache; they only stop counting towards this process's memory).
    /// Called from one thread at a time.
    package func discard(before offset: Int) {
        let page = FileIO.pageSize
        let end = min(offset, bytes.count) / page * page
        guard end > discarded else { return }
        _ = madvise(UnsafeMutableRawPointer(mutating: bytes.baseAddress! + discarded), end - discarded, MADV_DONTNEED)
        discarded = end
    }
}
