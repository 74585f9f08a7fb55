#if canImport(Glibc)
import Glibc

/// glibc's `mallopt`, which Swift's Glibc module does not import (`malloc.h` is not in it).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

/// Process-wide allocator settings for the command-line tool, and hints
/// about how big blocks are used.
package enum MemoryTuning {
    /// Set once, by the command-line tool's first line, before any other thread runs.
    nonisolated(unsafe) private static var keepsFreedMemory = false

    /// A command allocates and frees big buffers phase after phase (an import
    /// reads, decodes, encodes and writes its whole input). By default glibc
    /// maps each block above 128 KB on its own and unmaps it when freed, so the
    /// kernel zeroes fresh pages for the next one, every time. This keeps
    /// big blocks in the heap, where freed memory is reused.
    package static func keepFreedMemory() {
        keepsFreedMemory = true
        #if canImport(Glibc)
        // M_MMAP_THRESHOLD is -3 and M_TRIM_THRESHOLD -1 in malloc.h; the
        // largest value they take, so that even a block as big as a large
        // input is reused.
        _ = glibcMallopt(-3, Int32.max)
        // -1 turns trimming off altogether (see `preferHugePagesForHeap`).
        _ = glibcMallopt(-1, -1)
        // One heap for every thread (M_ARENA_MAX, -8): memory freed on one
        // (the import's input, once read) is reused by the others (history,
        // the snapshot's encoders, the image) instead of each growing its own.
        _ = glibcMallopt(-8, 1)
        #endif
    }

    /// Grows the heap by `bytes` up front, unused, and asks for 2 MB pages
    /// over it: the big blocks a bulk import allocates afterwards come from
    /// there. A page of 2 MB costs the kernel one fault where 512 pages of
    /// 4 KB cost one each (on a virtual machine each fresh page is a fault to
    /// the host as well), and reading in random order misses the TLB less.
    /// Only with `keepFreedMemory` (one heap, never trimmed); nothing
    /// happens where transparent huge pages are off.
    /// With `hugePages` false it only reserves the space (for `populateInBackground`).
    /// Returns where that space starts (nil where it is not back to back, or off Linux).
    @discardableResult
    package static func preferHugePagesForHeap(reserving bytes: Int, hugePages: Bool = true) -> UnsafeMutableRawPointer? {
        #if canImport(Glibc)
        // Pieces below the mmap threshold (`keepFreedMemory`), so that they come from the heap, back to back.
        let piece = 1 << 30
        var pieces: [UnsafeMutableRawPointer] = []
        var left = bytes
        while left > 0, let p = malloc(min(left, piece)) {
            pieces.append(p)
            left -= min(left, piece)
        }
        for p in pieces { free(p) }
        // Only heap pieces lie back to back; mapped ones (without
        // `keepFreedMemory`) are gone once freed, and the hint must never
        // reach mappings in between.
        guard let first = pieces.first, let last = pieces.last,
              zip(pieces, pieces.dropFirst()).allSatisfy({ $1 > $0 && $1 - $0 <= piece + 64 }) else { return nil }
        let end = Int(bitPattern: last) + min(bytes - (pieces.count - 1) * piece, piece)
        if hugePages { preferHugePages(first, byteCount: end - Int(bitPattern: first)) }
        return first
        #else
        return nil
        #endif
    }

    /// Has the kernel back the first `byteCount` bytes of the heap space
    /// `preferHugePagesForHeap` reserved (from `start`) with pages, on a
    /// thread of its own, without writing to them (`MADV_POPULATE_WRITE`).
    ///
    /// Why: the first write to a fresh page costs a fault and zeroing it,
    /// which on a virtual machine whose host takes freed memory back is a
    /// fault to the host as well, and the bulk import's linking, which writes
    /// to fresh pages all over, pays it on one core while the other waits.
    /// Done ahead on the idle core, the linking finds the pages there. Only
    /// where the allocator keeps freed memory (`keepFreedMemory`, so the space stays
    /// the heap's); nothing happens on kernels before 5.14.
    /// Returns the thread's result (nil where none was started), for work
    /// that should have the idle core only after it.
    @discardableResult
    package static func populateInBackground(_ start: UnsafeMutableRawPointer, byteCount: Int) -> Parallel.Pending<Bool>? {
        #if os(Linux)
        guard keepsFreedMemory else { return nil }
        // madvise takes whole pages: from the first that starts in the space.
        let page = UInt(FileIO.pageSize)
        let at = (UInt(bitPattern: start) + page - 1) & ~(page - 1)
        let byteCount = byteCount - Int(at - UInt(bitPattern: start))
        return Parallel.start {
            // Small steps: each holds the address space's lock, which the
            // other threads' mmap, munmap and heap growth wait for.
            let step = 4 << 20
            var done = 0
            while done < byteCount {
                guard let p = UnsafeMutableRawPointer(bitPattern: at + UInt(done)),
                      madvise(p, min(step, byteCount - done), 23) == 0 else { return false }  // MADV_POPULATE_WRITE
                done += step
            }
            return true
        }
        #else
        return nil
        #endif
    }

    /// Asks the kernel to back a big block read in random order (records
    /// reached through an index) with 2 MB pages where it can: fewer page
    /// faults when it is filled, and fewer TLB misses when it is read. Only a
    /// hint; nothing changes where transparent huge pages are off.
    package static func preferHugePages(_ base: UnsafeMutableRawPointer, byteCount: Int) {
        #if os(Linux)
        let huge = 2 << 20
        let start = (Int(bitPattern: base) + huge - 1) & ~(huge - 1)
        let end = (Int(bitPattern: base) + byteCount) & ~(huge - 1)
        guard end > start, let p = UnsafeMutableRawPointer(bitPattern: start) else { return }
        _ = madvise(p, end - start, 14)  // MADV_HUGEPAGE
        #endif
    }

    /// Maps the pages of a file mapping that hold `bytes` bytes from `start`
    /// into the page tables now, as reading them would, without reading
    /// them here (`MADV_POPULATE_READ`): for a thread that takes the page
    /// faults of another's work ahead of it, on memory the other may be
    /// writing. Only a hint; nothing happens before Linux 5.14.
    package static func mapForReading(_ start: UnsafeRawPointer, bytes: Int) {
        #if os(Linux)
        let page = UInt(FileIO.pageSize)
        let from = UInt(bitPattern: start) & ~(page - 1)
        let to = (UInt(bitPattern: start) + UInt(max(1, bytes)) + page - 1) & ~(page - 1)
        guard let p = UnsafeMutableRawPointer(bitPattern: from) else { return }
        _ = madvise(p, Int(to - from), 22)  // MADV_POPULATE_READ
        #endif
    }
}
