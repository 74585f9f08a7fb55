import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A growable run of bytes in memory of its own, written front to back.
///
/// Records are built in one of these (a scratch buffer, or one per core while
/// a snapshot is decoded) and then handed to a `RecordArena`, which takes the
/// memory over without copying it.
struct RecordBuffer: ~Copyable {
    private(set) var base: UnsafeMutableRawPointer
    private(set) var capacity: Int
    private(set) var count = 0
    private let hugePages: Bool

    /// `hugePages: false` for a buffer that is written and read front to
    /// back, and freed soon: aligning it only leaves holes in the heap.
    init(capacity: Int = 256, hugePages: Bool = true) {
        self.capacity = max(64, capacity)
        self.hugePages = hugePages
        base = RecordBuffer.allocate(self.capacity, hugePages: hugePages)
    }

    deinit { base.deallocate() }

    /// Records are read in id order, all over their buffers: a buffer of
    /// 2 MB or more starts on a 2 MB boundary and asks for 2 MB pages.
    private static func allocate(_ capacity: Int, hugePages: Bool) -> UnsafeMutableRawPointer {
        let huge = 2 << 20
        guard hugePages && capacity >= huge else { return .allocate(byteCount: capacity, alignment: 16) }
        // Only a hint: where the aligned block cannot be had (an address-space limit), an ordinary one.
        var aligned: UnsafeMutableRawPointer?
        guard posix_memalign(&aligned, huge, capacity) == 0, let p = aligned else { return .allocate(byteCount: capacity, alignment: 16) }
        MemoryTuning.preferHugePages(p, byteCount: capacity)
        return p
    }

    /// Gives up the memory: the caller deallocates it (the arena, on its own deinit).
    consuming func release() -> (UnsafeMutableRawPointer, Int) {
        let out = (base, count)
        discard self
        return out
    }

    mutating func removeAll() { count = 0 }

    /// Cuts back to an earlier length (a record abandoned half-written).
    mutating func truncate(to n: Int) { count = min(count, n) }

    @inline(__always) mutating func reserve(_ n: Int) {
        if count + n > capacity { grow(count + n) }
    }

    private mutating func grow(_ needed: Int) {
        var c = capacity
        while c < needed { c = c < (64 << 20) ? c * 2 : c + c / 2 }
        let bigger = RecordBuffer.allocate(c, hugePages: hugePages)
        bigger.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = bigger
        capacity = c
    }

    @inline(__always) mutating func byte(_ b: UInt8) {
        reserve(1)
        base.storeBytes(of: b, toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) mutating func varint(_ v: Int) {
        reserve(10)
        var v = UInt64(v)
        while v >= 0x80 {
            base.storeBytes(of: UInt8(truncatingIfNeeded: v) | 0x80, toByteOffset: count, as: UInt8.self)
            count += 1
            v >>= 7
        }
        base.storeBytes(of: UInt8(v), toByteOffset: count, as: UInt8.self)
        count += 1
    }

    @inline(__always) mutating func uint64(_ v: UInt64) {
        reserve(8)
        base.storeBytes(of: v.littleEndian, toByteOffset: count, as: UInt64.self)
        count += 8
    }

    @inline(__always) mutating func int32(_ v: Int32) {
        reserve(4)
        base.storeBytes(of: v.littleEndian, toByteOffset: count, as: Int32.self)
        count += 4
    }

    /// A record's id, as `RecordID` says: packed where it is a UUID in canonical form, else its length and text.
    @inline(__always) mutating func id(_ text: UnsafeRawBufferPointer) {
        reserve(1 + RecordID.packedCount)
        if RecordID.pack(text, into: base + count + 1) {
            base.storeBytes(of: RecordID.packedMarker, toByteOffset: count, as: UInt8.self)
            count += 1 + RecordID.packedCount
            return
        }
        varint(text.count)
        bytes(text)
    }

    @inline(__always) mutating func bytes(_ p: UnsafeRawBufferPointer) {
        guard p.count > 0 else { return }
        reserve(p.count)
        (base + count).copyMemory(from: p.baseAddress!, byteCount: p.count)
        count += p.count
    }

    /// Writes `v` as a varint over the one byte written at `offset` (a count
    /// known only once what follows it is written), moving what follows
    /// along when it takes more than that byte.
    mutating func insertVarint(_ v: Int, over offset: Int) {
        // Nearly always one byte: no array for its digits.
        if v < 0x80 { return base.storeBytes(of: UInt8(v), toByteOffset: offset, as: UInt8.self) }
        var digits: [UInt8] = []
        var u = UInt64(v)
        while u >= 0x80 {
            digits.append(UInt8(truncatingIfNeeded: u) | 0x80)
            u >>= 7
        }
        digits.append(UInt8(u))
        let extra = digits.count - 1
        if extra > 0 {
            reserve(extra)
            (base + offset + 1 + extra).copyMemory(from: base + offset + 1, byteCount: count - offset - 1)
            count += extra
        }
        for (k, d) in digits.enumerated() { base.storeBytes(of: d, toByteOffset: offset + k, as: UInt8.self) }
    }

    /// Overwrites four bytes written earlier (a reference filled in later).
    @inline(__always) func patchInt32(_ v: Int32, at offset: Int) {
        base.storeBytes(of: v.littleEndian, toByteOffset: offset, as: Int32.self)
    }

    /// Five bytes for a length written later by `patchVarint` (a varint padded
    /// with continuation bits reads the same as the short form).
    @inline(__always) mutating func placeholderVarint() -> Int {
        reserve(5)
        let at = count
        count += 5
        return at
    }

    @inline(__always) func patchVarint(_ v: Int, at offset: Int) {
        var v = UInt64(v)
        for k in 0..<5 {
            let b = UInt8(truncatingIfNeeded: v & 0x7F) | (k < 4 ? 0x80 : 0)
            base.storeBytes(of: b, toByteOffset: offset + k, as: UInt8.self)
            v >>= 7
        }
    }

    var contents: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }
}
