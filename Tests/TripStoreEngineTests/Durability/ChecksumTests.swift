import Testing
@testable import TripStoreSystem

/// CRC-32C as snapshots and journal lines use it, and its combination of
/// parts checksummed apart (the snapshot's cores each checksum their lines).
struct ChecksumTests {
    @Test func knownValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
    }

    /// The polynomial applied one bit at a time: slow, plainly right.
    static func reference(_ bytes: [UInt8], continuing crc: UInt32) -> UInt32 {
        var c = ~crc
        for b in bytes {
            c ^= UInt32(b)
            for _ in 0..<8 { c = c & 1 != 0 ? (c >> 1) ^ 0x82F6_3B78 : c >> 1 }
        }
        return ~c
    }

    /// Long inputs go through three interleaved passes: every length around
    /// where that starts, and where their thirds end, against the reference.
    @Test func everyLengthAndStartAgreesWithTheBitwiseReference() {
        var state: UInt64 = 0x9E37_79B9
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        let bytes = (0..<70_000).map { _ in UInt8(truncatingIfNeeded: next()) }
        var lengths = Array(0..<40) + [CRC32C.interleaveFrom - 1, CRC32C.interleaveFrom, CRC32C.interleaveFrom + 1, 12_300, 24_576, 24_583, 69_993]
        for _ in 0..<40 { lengths.append(Int(next() % 69_990)) }
        for n in lengths {
            let start = Int(next() % 7)
            let part = Array(bytes[start..<(start + n)])
            let seed = UInt32(truncatingIfNeeded: next())
            // The processor's instruction (where it has one) and the tables, each against the bit-by-bit reference.
            #expect(part.withUnsafeBytes { CRC32C.checksum($0, continuing: seed) } == Self.reference(part, continuing: seed), "\(n) bytes")
            #expect(part.withUnsafeBytes { CRC32C.tableChecksum($0, continuing: seed) } == Self.reference(part, continuing: seed), "\(n) bytes")
        }
    }

    @Test func partsCombineToTheWhole() {
        var state: UInt64 = 0x1234_5678
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        for _ in 0..<200 {
            let whole = (0..<Int(next() % 3000)).map { _ in UInt8(truncatingIfNeeded: next()) }
            let cut = whole.isEmpty ? 0 : Int(next() % UInt64(whole.count + 1))
            let a = Array(whole[..<cut]), b = Array(whole[cut...])
            #expect(CRC32C.combine(CRC32C.checksum(a), CRC32C.checksum(b), lengthOfB: b.count) == CRC32C.checksum(whole))
        }
    }
}
