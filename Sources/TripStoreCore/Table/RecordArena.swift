import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The memory that holds every object's record, in large blocks.
///
/// A record is found by a locator: the block number in the high bits and the
/// byte offset in the low 40. Records are never moved; a changed object gets a
/// new record and the old one stays unused until the store is next loaded.
final class RecordArena {
    @exclusivity(unchecked) private var blocks: [UnsafeMutableRawPointer] = []
    @exclusivity(unchecked) private var tailCapacity = 0
    @exclusivity(unchecked) private var tailUsed = 0
    /// Bytes held by records no row points at any more.
    @exclusivity(unchecked) private(set) var unusedBytes = 0
    /// Bytes in all blocks.
    @exclusivity(unchecked) private(set) var totalBytes = 0

    static let offsetBits: Int64 = 40

    /// Blocks that are a private mapping of a file (an image's records), by block number.
    @exclusivity(unchecked) private var mappings: [Int: (start: UnsafeMutableRawPointer, length: Int)] = [:]

    deinit {
        for (i, b) in blocks.enumerated() {
            if let m = mappings[i] {
                FileIO.unmap(m.start, length: m.length)
            } else {
                b.deallocate()
            }
        }
    }

    /// Takes over a private file mapping (made with `mmap`) whose records start
    /// `skip` bytes in; changes to them stay in this process.
    func adoptMapping(start: UnsafeMutableRawPointer, length: Int, skip: Int, count: Int) -> Int64 {
        let locator = adopt(base: start + skip, count: count)
        mappings[blocks.count - 1] = (start, length)
        return locator
    }

    /// Takes over memory allocated with `UnsafeMutableRawPointer.allocate` (a
    /// `RecordBuffer`'s, once released) as a block; returns the locator of its first byte.
    func adopt(base: UnsafeMutableRawPointer, count: Int) -> Int64 {
        blocks.append(base)
        totalBytes += count
        // New records go to a fresh tail block, not after an adopted one.
        tailCapacity = 0
        tailUsed = 0
        return Int64(blocks.count - 1) << RecordArena.offsetBits
    }

    /// Copies a record in; returns its locator.
    func append(_ bytes: UnsafeRawBufferPointer) -> Int64 {
        if tailUsed + bytes.count > tailCapacity {
            let size = max(1 << 20, bytes.count)
            blocks.append(UnsafeMutableRawPointer.allocate(byteCount: size, alignment: 16))
            tailCapacity = size
            tailUsed = 0
        }
        let at = tailUsed
        if bytes.count > 0 { (blocks[blocks.count - 1] + at).copyMemory(from: bytes.baseAddress!, byteCount: bytes.count) }
        tailUsed += bytes.count
        totalBytes += bytes.count
        return Int64(blocks.count - 1) << RecordArena.offsetBits | Int64(at)
    }

    @inline(__always) func pointer(_ locator: Int64) -> UnsafeMutableRawPointer {
        blocks[Int(locator >> RecordArena.offsetBits)] + Int(locator & ((1 << RecordArena.offsetBits) - 1))
    }

    func forget(_ bytes: Int) { unusedBytes += bytes }
}
