#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads a big file front to back, each 4 MB of it from the page cache where
/// all of it is cached there and past the page cache (`O_DIRECT`) where it
/// is not, through an aligned buffer of its own.
///
/// Why: an import reads its input once. Through the page cache each 4 KB not
/// yet cached costs a page taken for it, which on a virtual machine that
/// hands freed memory back is a fault to the host, so reading an input not
/// yet cached that way costs far more kernel time than reading it straight
/// from the disk into one reused buffer. What is cached already is only copied,
/// which is cheaper than reading it from the disk again. Where `O_DIRECT` is
/// refused (some file systems, Darwin, an alignment the disk does not take)
/// everything comes through the page cache; the bytes are the same either way.
package final class StreamingFileReader {
    private let fd: Int32
    private let path: String
    /// Bytes per read; a multiple of any block size `O_DIRECT` asks for.
    private static let bufferSize = 4 << 20
    private static let alignment = 4096
    private let buffer: UnsafeMutableRawPointer
    /// The buffer holds `buffered` bytes of the file from `bufferAt`; the caller has taken `taken` of them.
    private var bufferAt = 0
    private var buffered = 0
    private var taken = 0
    private var atEnd = false
    /// Whether the descriptor is in `O_DIRECT` mode now, and whether it may be.
    private var direct = false
    private var directAllowed = true
    /// The file mapped (never read through): only to ask which pages are cached.
    private var mapping: (start: UnsafeMutableRawPointer, length: Int)?
    private var resident: [UInt8] = []
    /// Bytes of the first buffer before the offset the caller asked to start from.
    private var skip = 0

    /// Reads `fd` (open for reading) from byte `start` on; the caller still
    /// closes it, and nothing else may read it meanwhile.
    package init(fd: Int32, path: String, from start: Int = 0) {
        self.fd = fd
        self.path = path
        bufferAt = start / Self.alignment * Self.alignment
        skip = start - bufferAt
        buffer = .allocate(byteCount: Self.bufferSize, alignment: Self.alignment)
        if let size = try? FileIO.size(fd, path: path), size > 0,
           let p = mmap(nil, size, PROT_READ, MAP_SHARED, fd, 0), p != MAP_FAILED {
            mapping = (p, size)
        }
    }

    deinit {
        if direct { _ = FileIO.setDirect(fd, false) }
        if let mapping { munmap(mapping.start, mapping.length) }
        buffer.deallocate()
    }

    /// Fills `target` from the file, short only at its end (0 once it is all read).
    /// - Throws: `IOError` when a read fails.
    package func read(into target: UnsafeMutableRawBufferPointer) throws -> Int {
        var count = 0
        while count < target.count {
            if taken == buffered {
                guard !atEnd else { break }
                if skip == 0, target.count - count >= Self.bufferSize,
                   try readCached(into: UnsafeMutableRawBufferPointer(rebasing: target[count...]), &count) {
                    continue
                }
                try refill()
                taken = min(skip, buffered)
                skip -= taken
                continue
            }
            let n = min(target.count - count, buffered - taken)
            (target.baseAddress! + count).copyMemory(from: buffer + taken, byteCount: n)
            taken += n
            count += n
        }
        return count
    }

    /// Where the next bytes are all in the page cache, reads whole buffers'
    /// worth of them straight into `target` (one copy fewer) and adds how
    /// many to `count`; false, having read nothing, where they are not.
    private func readCached(into target: UnsafeMutableRawBufferPointer, _ count: inout Int) throws -> Bool {
        let at = bufferAt + buffered, length = target.count / Self.bufferSize * Self.bufferSize
        guard isCached(at, length) else { return false }
        if direct { direct = FileIO.setDirect(fd, false) }
        var n = 0
        while n < length {
            let r = pread(fd, target.baseAddress! + n, length - n, off_t(at + n))
            if r < 0 {
                if errno == EINTR { continue }
                throw IOError(operation: "read", path: path, code: errno)
            }
            if r == 0 {
                atEnd = true
                break
            }
            n += r
        }
        // As if the buffer had held them: the next refill starts after them, on an aligned offset.
        bufferAt = at + n
        buffered = 0
        taken = 0
        if n % Self.alignment != 0 { directAllowed = false }
        count += n
        return true
    }

    /// Reads the next buffer's worth at an aligned offset.
    private func refill() throws {
        bufferAt += buffered
        buffered = 0
        taken = 0
        let wantDirect = directAllowed && !isCached(bufferAt, Self.bufferSize)
        if wantDirect != direct {
            direct = FileIO.setDirect(fd, wantDirect)
            if wantDirect && !direct { directAllowed = false }
        }
        while buffered < Self.bufferSize {
            let n = pread(fd, buffer + buffered, Self.bufferSize - buffered, off_t(bufferAt + buffered))
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EINVAL && direct {
                    // An alignment this disk does not take: the page cache after all.
                    direct = FileIO.setDirect(fd, false)
                    directAllowed = false
                    continue
                }
                throw IOError(operation: "read", path: path, code: code)
            }
            if n == 0 {
                atEnd = true
                return
            }
            buffered += n
            // A short read leaves the next offset unaligned: on through the page cache.
            if direct && buffered % Self.alignment != 0 {
                direct = FileIO.setDirect(fd, false)
                directAllowed = false
            }
        }
    }

    /// Whether every page of the file from `offset` on for `length` bytes (or
    /// to its end) is in the page cache; false where that cannot be told.
    private func isCached(_ offset: Int, _ length: Int) -> Bool {
        guard let mapping, offset < mapping.length else { return false }
        let n = min(length, mapping.length - offset)
        let pageSize = FileIO.pageSize
        let pages = (n + pageSize - 1) / pageSize
        if resident.count < pages { resident = [UInt8](repeating: 0, count: pages) }
        // `offset` is a multiple of the buffer's size, so of the page size.
        guard resident.withUnsafeMutableBufferPointer({ mincore(mapping.start + offset, n, $0.baseAddress!) }) == 0 else { return false }
        return resident[0..<pages].allSatisfy { $0 & 1 != 0 }
    }
}
