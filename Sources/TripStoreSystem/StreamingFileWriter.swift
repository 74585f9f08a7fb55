import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a big file front to back, past the page cache where the file
/// system allows it (`O_DIRECT`): the bytes are staged in a few aligned
/// buffers of its own and written from them on a thread of its own, so the
/// caller goes on encoding while the disk writes.
///
/// Why: a snapshot is written once and read again only when its image cannot
/// serve, yet through the page cache it costs a copy into pages taken for it
/// (and, on a virtual machine that hands freed memory back, a fault for each
/// of them): CPU time on the scale of encoding it. Where
/// `O_DIRECT` is refused (some file systems, tmpfs before Linux 6.6, Darwin,
/// an alignment the disk does not take) it writes through the page cache
/// instead. Either way the file holds the same bytes, and the caller flushes
/// it (`fsync`) as before. Through the page cache it writes in pieces of
/// `FileIO.mappedWritePiece`, as an image it writes is mapped.
package final class StreamingFileWriter: @unchecked Sendable {
    private let fd: Int32
    private let path: String
    /// Bytes per buffer; a multiple of any block size `O_DIRECT` asks for.
    /// 2 MB writes are already big enough to keep a disk busy; bigger buffers
    /// would only cost memory, and a bulk import has three writers at its peak.
    private static let bufferSize = 2 << 20
    private static let alignment = 4096
    /// Buffers used in turn: the writing thread finishes them in the order it gets them.
    private var buffers: [UnsafeMutableRawPointer] = []
    private var currentIndex = 0
    private var current: UnsafeMutableRawPointer { buffers[currentIndex] }
    private var used = 0
    /// Where `current` starts in the file.
    private var offset = 0
    private let writes = DispatchQueue(label: "tripstore.streaming-writer")
    /// Buffers the writing thread is done with.
    private let spare = DispatchSemaphore(value: 2)
    // Only the writing thread touches these once `init` returns (the caller
    // reads `failure` after waiting for it).
    private var failure: (any Error)?
    private var direct: Bool

    /// Takes over writing `fd` (opened for writing) from `offset` (a
    /// multiple of 4096; the file holds nothing there yet) on; the caller
    /// still closes it, and nothing else may write to it meanwhile.
    /// `pastThePageCache` false writes through it, for bytes the next
    /// command reads (they are then in memory, not read back from the disk).
    package init(fd: Int32, path: String, from offset: Int = 0, pastThePageCache: Bool = true) {
        self.fd = fd
        self.path = path
        self.offset = offset
        for _ in 0..<3 { buffers.append(.allocate(byteCount: Self.bufferSize, alignment: Self.alignment)) }
        direct = pastThePageCache && FileIO.setDirect(fd, true)
    }

    deinit {
        waitForWrites()
        for b in buffers { b.deallocate() }
    }

    /// Waits until the writing thread is done with what it was given (before
    /// the caller closes the file when it gives up half way).
    package func waitForWrites() { writes.sync {} }

    /// Where the next byte goes: the file's size once `finish` returns.
    package var count: Int { offset + used }

    /// Appends `bytes` to the file (`finish` reports a failure).
    package func write(_ bytes: UnsafeRawBufferPointer) {
        precondition(!buffers.isEmpty, "StreamingFileWriter: a write after finish")
        var done = 0
        while done < bytes.count {
            let n = min(bytes.count - done, Self.bufferSize - used)
            (current + used).copyMemory(from: bytes.baseAddress! + done, byteCount: n)
            used += n
            done += n
            if used == Self.bufferSize { handOver() }
        }
    }

    package func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBytes { write($0) }
    }

    /// Writes what is left, waits for every write and frees the buffers
    /// (another writer can have their memory): nothing is written after it.
    /// - Throws: `IOError` for any write that failed.
    package func finish() throws {
        guard !buffers.isEmpty else { return }
        let (buffer, length, at) = (current, used, offset)
        writes.sync {
            // The last bytes are rarely a whole block: they go through the page cache.
            let whole = length / Self.alignment * Self.alignment
            self.write(buffer, length: whole, at: at)
            if self.direct { self.direct = FileIO.setDirect(self.fd, false) }
            self.write(buffer + whole, length: length - whole, at: at + whole)
        }
        offset += used
        used = 0
        for b in buffers { b.deallocate() }
        buffers = []
        if let failure { throw failure }
    }

    /// Hands the full buffer to the writing thread and goes on with the next
    /// (a failure is reported by `finish`).
    private func handOver() {
        let (index, at) = (currentIndex, offset)
        offset += used
        used = 0
        writes.async {
            self.write(self.buffers[index], length: Self.bufferSize, at: at)
            self.spare.signal()
        }
        spare.wait()
        currentIndex = (currentIndex + 1) % buffers.count
    }

    /// On the writing thread.
    private func write(_ p: UnsafeMutableRawPointer, length: Int, at: Int) {
        guard length > 0, failure == nil else { return }
        var done = 0
        while done < length {
            let n = pwrite(fd, p + done, direct ? length - done : min(length - done, FileIO.mappedWritePiece), off_t(at + done))
            if n < 0 {
                let code = errno
                if code == EINTR { continue }
                if code == EINVAL && direct {
                    // An alignment this disk does not take: the page cache after all.
                    direct = FileIO.setDirect(fd, false)
                    if !direct { continue }
                }
                failure = IOError(operation: "write", path: path, code: code)
                return
            }
            done += n
        }
    }
}
