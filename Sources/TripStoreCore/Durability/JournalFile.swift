import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A journal as one open read it: a descriptor held for as long as this
/// lives (the bytes stay readable if a fold removes the file), and its size
/// then. Ranges of it are read or checksummed through a small buffer, so an
/// open whose lines come from the replay state never holds the journal in
/// memory, however long it has grown.
final class JournalFile {
    let path: String
    /// The file's size when it was opened: the bytes this open takes.
    let size: Int
    private let fd: Int32

    /// Opens `path`, a regular file.
    /// - Throws: `IOError` when it cannot be opened or is no regular file.
    init(path: String) throws {
        self.path = path
        fd = try FileIO.openRegular(path)
        do {
            size = try FileIO.size(fd, path: path)
        } catch {
            FileIO.close(fd)
            throw error
        }
    }

    deinit { FileIO.close(fd) }

    /// The file's size now (a writer may have appended since the open); nil when it cannot be had.
    func currentSize() -> Int? { try? FileIO.size(fd, path: path) }

    /// The bytes of `range` (a long journal's into 2 MB pages where the
    /// kernel can: a page fault per 2 MB, not per 4 KB); fewer where the
    /// file now ends sooner (a writer cuts a torn tail in place).
    /// - Throws: `IOError` when the file cannot be read.
    func read(_ range: Range<Int>) throws -> [UInt8] {
        guard !range.isEmpty else { return [] }
        var error: Int32 = 0
        let bytes = [UInt8](unsafeUninitializedCapacity: range.count) { buffer, count in
            if let base = buffer.baseAddress { MemoryTuning.preferHugePages(UnsafeMutableRawPointer(base), byteCount: range.count) }
            let n = FileIO.read(fd, into: UnsafeMutableRawBufferPointer(buffer), at: range.lowerBound)
            if n < 0 { error = errno }
            count = max(0, n)
        }
        if error != 0 { throw IOError(operation: "read", path: path, code: error) }
        return bytes
    }

    /// The bytes of `range`, or nil unless all of them can be read.
    func readWhole(_ range: Range<Int>) -> [UInt8]? {
        guard let bytes = try? read(range), bytes.count == range.count else { return nil }
        return bytes
    }

    /// The CRC-32C and the last byte of each of `ranges`, in order, the
    /// file read forward once, a piece at a time; fewer results than ranges
    /// when one is empty, starts before the one ahead of it ends, or cannot
    /// be read whole (the results stop there).
    func checksums(_ ranges: [Range<Int>]) -> [(crc: UInt32, last: UInt8)] {
        var results: [(crc: UInt32, last: UInt8)] = []
        guard let first = ranges.first?.lowerBound, let end = ranges.last?.upperBound, end > first else { return results }
        let piece = min(end - first, Self.pieceBytes)
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: piece, alignment: 64)
        defer { buffer.deallocate() }
        // The buffer holds the file's bytes `held`.
        var held = 0..<0, previousEnd = first
        results.reserveCapacity(ranges.count)
        for range in ranges {
            guard !range.isEmpty, range.lowerBound >= previousEnd else { return results }
            var crc: UInt32 = 0, at = range.lowerBound
            while at < range.upperBound {
                if !held.contains(at) {
                    let n = min(piece, end - at)
                    guard FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: buffer[0..<n]), at: at) == n else { return results }
                    held = at..<(at + n)
                }
                let upTo = min(range.upperBound, held.upperBound)
                crc = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: buffer[(at - held.lowerBound)..<(upTo - held.lowerBound)]),
                                      continuing: crc)
                at = upTo
            }
            results.append((crc, buffer[range.upperBound - 1 - held.lowerBound]))
            previousEnd = range.upperBound
        }
        return results
    }

    /// Hands each line of the first `end` bytes to `body` as
    /// `JSONLines.forEachLine` does (numbered from 1, blank ones passed
    /// over, the last one not `complete` when no newline ends it), the file
    /// read forward through a piece-sized buffer that grows only to hold
    /// the longest line. Stops where the file now ends, if sooner.
    /// - Throws: `IOError` when the file cannot be read.
    func forEachLine(upTo end: Int, _ body: (_ number: Int, _ line: UnsafeBufferPointer<UInt8>, _ complete: Bool) -> Void) throws {
        var buffer: [UInt8] = []
        buffer.reserveCapacity(min(end, Self.pieceBytes))
        var at = 0, numbered = 0
        func lines(_ count: Int) {
            buffer.withUnsafeBufferPointer { all in
                let b = UnsafeBufferPointer(rebasing: all[0..<count])
                JSONLines.forEachLine(in: b) { n, range, complete in body(numbered + n, UnsafeBufferPointer(rebasing: b[range]), complete) }
                numbered += JSONLines.newlines(in: b)
            }
        }
        while at < end {
            let want = min(Self.pieceBytes, end - at), held = buffer.count
            buffer.append(contentsOf: repeatElement(0, count: want))
            let got = buffer.withUnsafeMutableBytes { FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: $0[held...]), at: at) }
            if got < 0 { throw IOError(operation: "read", path: path, code: errno) }
            buffer.removeLast(want - got)
            at += got
            // The lines whole so far; the rest waits for the bytes after it.
            if let last = buffer.lastIndex(of: 0x0A) {
                lines(last + 1)
                buffer.removeFirst(last + 1)
            }
            if got < want { break }
        }
        if !buffer.isEmpty { lines(buffer.count) }
    }

    /// The buffer a checksum reads through: big enough that the system calls
    /// cost little beside the copy, small enough to stay in the cache and to
    /// cost a command few fresh pages (it is made anew at every open).
    static let pieceBytes = 128 << 10
}
