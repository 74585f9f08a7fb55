#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tables of byte-sized states that start at zero. A large one is mapped
/// from the kernel on its own: its pages are zero until first touched, so a
/// table of a state per piece of a million-row image costs nothing until a
/// piece is used (a cold command touches a handful). `calloc` would not do:
/// with the heap kept (`MemoryTuning`) it takes such a table from memory the
/// heap already holds and zeroes it page by page.
package enum ZeroedBytes {
    /// Below this a table comes from `calloc`; the header before the table
    /// says which way it came and how long its mapping is.
    private static let mappedFrom = 1 << 16
    private static let header = 16

    package static func allocate(_ count: Int) -> UnsafeMutablePointer<UInt8> {
        let bytes = header + max(1, count)
        var raw: UnsafeMutableRawPointer?
        if bytes >= mappedFrom {
            let m = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
            if let m, m != MAP_FAILED {
                raw = m
                raw?.storeBytes(of: bytes, as: Int.self)
            }
        }
        if raw == nil {
            raw = calloc(bytes, 1)  // zeroed: a length of 0 says so
        }
        // Out of memory is the only failure; it traps as any allocation does.
        guard let raw else { preconditionFailure("out of memory") }
        return (raw + header).bindMemory(to: UInt8.self, capacity: max(1, count))
    }

    /// Backs a mapped table with pages now, ready to be written
    /// (`MADV_POPULATE_WRITE`), for work that will touch most of it: a page
    /// first read and then written costs two faults (the shared zero page,
    /// then a copy), and a page populated at once costs a fraction of one.
    /// Nothing happens to a small table (from `calloc`) or before Linux 5.14.
    package static func populate(_ bytes: UnsafeMutablePointer<UInt8>) {
        #if os(Linux)
        let raw = UnsafeMutableRawPointer(bytes) - header
        let mapped = raw.load(as: Int.self)
        guard mapped > 0 else { return }
        _ = madvise(raw, mapped, 23)  // MADV_POPULATE_WRITE
        #endif
    }

    package static func free(_ bytes: UnsafeMutablePointer<UInt8>) {
        let raw = UnsafeMutableRawPointer(bytes) - header
        let mapped = raw.load(as: Int.self)
        if mapped > 0 {
            munmap(raw, mapped)
            return
        }
        #if canImport(Glibc)
        Glibc.free(raw)
        #else
        Darwin.free(raw)
        #endif
    }
}
