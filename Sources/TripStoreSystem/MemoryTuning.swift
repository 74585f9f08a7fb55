#if canImport(Glibc)
import Glibc

/// glibc's `mallopt`, which Swift's Glibc module does not import (`malloc.h` is not in it).
@_silgen_name("mallopt")
private func glibcMallopt(_ parameter: Int32, _ value: Int32) -> Int32
#endif

/// Process-wide allocator settings for the command-line tool, and hints
/// about how big blocks are used.
package enum MemoryTuning {
    /// A command allocates and frees big buffers phase after phase (an import
    /// reads, decodes, encodes and writes hundreds of MB). By default glibc
    /// maps each block above 128 KB on its own and unmaps it when freed, so the
    /// kernel zeroes fresh pages for the next one: about a tenth of an import's
    /// time. This keeps big blocks in the heap, where freed memory is reused.
    package static func keepFreedMemory() {
        #if canImport(Glibc)
        // M_MMAP_THRESHOLD is -3 and M_TRIM_THRESHOLD -1 in malloc.h; the
        // largest value they take, so that even a 1.6 GB input is reused.
        _ = glibcMallopt(-3, Int32.max)
        _ = glibcMallopt(-1, Int32.max)
        // One heap for every thread (M_ARENA_MAX, -8): memory freed on one
        // (the import's input, once read) is reused by the others (history,
        // the snapshot's encoders, the image) instead of each growing its own.
        _ = glibcMallopt(-8, 1)
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
}
