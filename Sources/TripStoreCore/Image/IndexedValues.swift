import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One index's rows and the bytes of each one's value as its record holds it, back to back.
/// Used by one thread at a time (no run-time exclusivity checks per value).
final class IndexedValues {
    /// Positions in the image's order, ascending.
    @exclusivity(unchecked) private(set) var rows: [RowID] = []
    /// Where each value starts in `bytes`; -1: none (a slot the row's entity does not have).
    @exclusivity(unchecked) private var starts: [Int] = []
    @exclusivity(unchecked) private var bytes = RecordBuffer(capacity: 1 << 16, hugePages: false)

    var count: Int { rows.count }

    /// Each index's positions (`0..<count`) and values, in one pass: the
    /// `i`th object is of `entity(i)` (nil: none) and has `record(i)`, which
    /// `prefetch(i)` starts loading some positions ahead (records in id order
    /// are a miss each time).
    /// `slot(record, entity, slot)` finds a slot's value. `farAhead(i)`
    /// starts loading what `entity(i)` and `prefetch(i)` read, where that is
    /// itself a miss (it is called further ahead).
    @inline(__always)
    static func collect(_ count: Int, schema: Schema, indexed: [IndexedProperty], entity: (Int) -> Int?,
                        record: (Int) -> UnsafeRawPointer, prefetch: (Int) -> Void, farAhead: (Int) -> Void = { _ in },
                        slot slotIn: (UnsafeRawPointer, Int, Int) -> UnsafeRawPointer = { RecordReader.slot($0, $2) }) -> [IndexedValues] {
        // Per entity, the indexes that cover it back to back (flat: an
        // entity's own array would be retained and released per row).
        var covering: [(index: Int, slot: Int)] = [], firstCovering = [0]
        for e in schema.entities.indices {
            for (k, index) in indexed.enumerated() where schema.entities[index.entity].closure.contains(e) {
                covering.append((k, index.property.slot))
            }
            firstCovering.append(covering.count)
        }
        let slotCounts = schema.entities.map(\.properties.count)
        let values = indexed.map { _ in IndexedValues() }
        // Borrowed, not retained and released at each value (`values` keeps them).
        let borrowed = values.map { Unmanaged.passUnretained($0) }
        for i in 0..<count {
            if i + 32 < count { farAhead(i + 32) }
            if i + 8 < count, let e = entity(i + 8), firstCovering[e + 1] > firstCovering[e] { prefetch(i + 8) }
            guard let e = entity(i), firstCovering[e + 1] > firstCovering[e] else { continue }
            let record = record(i)
            for c in firstCovering[e]..<firstCovering[e + 1] {
                let (k, slot) = covering[c]
                // A slot past the entity's is a row of another type than the index says (only a hostile image says so).
                borrowed[k]._withUnsafeGuaranteedRef { $0.add(RowID(i), slot < slotCounts[e] ? slotIn(record, e, slot) : nil) }
            }
        }
        withExtendedLifetime(values) {}
        return values
    }

    func add(_ row: RowID, _ value: UnsafeRawPointer?) {
        rows.append(row)
        guard let value else { return starts.append(-1) }
        starts.append(bytes.count)
        bytes.bytes(UnsafeRawBufferPointer(start: value, count: RecordReader.skip(value) - value))
    }

    /// The `k`th row's value, valid while this lives; nil where it has none.
    func value(_ k: Int) -> UnsafeRawPointer? {
        starts[k] < 0 ? nil : UnsafeRawPointer(bytes.base + starts[k])
    }

    /// The `k`th row's value as bytes; nil where it has none.
    func valueBytes(_ k: Int) -> UnsafeRawBufferPointer? {
        guard let p = value(k) else { return nil }
        return UnsafeRawBufferPointer(start: p, count: RecordReader.skip(p) - p)
    }

    /// Each distinct value's first position (values with the same bytes
    /// are one), each position's value as an index into those (-1: none),
    /// and how many occupied slots the lookups passed (how well the hash
    /// spreads the values: about one per value, not one per value seen).
    func distinctByBytes() -> (firsts: [Int], ranks: [Int32], probes: Int) {
        var firsts: [Int] = [], hashes: [UInt64] = [], probes = 0
        var ranks: [Int32] = []
        ranks.reserveCapacity(count)
        // Open addressing: each slot holds a rank, or -1; at most half full.
        var slots = [Int32](repeating: -1, count: 64)
        func place(_ rank: Int32, _ hash: UInt64) {
            var i = Int(truncatingIfNeeded: hash) & (slots.count - 1)
            while slots[i] >= 0 { i = (i + 1) & (slots.count - 1) }
            slots[i] = rank
        }
        for k in 0..<count {
            guard let bytes = valueBytes(k) else {
                ranks.append(-1)
                continue
            }
            // Swift's hasher, seeded at random per process: input cannot be
            // made to collide in the table (a fixed hash could be, and every
            // value would then walk one long run).
            var hasher = Hasher()
            hasher.combine(bytes: bytes)
            let hash = UInt64(bitPattern: Int64(hasher.finalize()))
            var i = Int(truncatingIfNeeded: hash) & (slots.count - 1)
            while true {
                let rank = slots[i]
                if rank < 0 {
                    ranks.append(Int32(firsts.count))
                    slots[i] = Int32(firsts.count)
                    firsts.append(k)
                    hashes.append(hash)
                    break
                }
                if hashes[Int(rank)] == hash, let seen = valueBytes(firsts[Int(rank)]), seen.count == bytes.count,
                   memcmp(seen.baseAddress!, bytes.baseAddress!, bytes.count) == 0 {
                    ranks.append(rank)
                    break
                }
                i = (i + 1) & (slots.count - 1)
                probes += 1
            }
            if firsts.count * 2 > slots.count {
                slots = [Int32](repeating: -1, count: slots.count * 2)
                for (rank, h) in hashes.enumerated() { place(Int32(rank), h) }
            }
        }
        return (firsts, ranks, probes)
    }
}
