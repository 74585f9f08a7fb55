import Testing
@testable import TripStoreSystem

/// CRC-32C as snapshots and journal lines use it, and its combination of
/// parts checksummed apart (the snapshot's cores each checksum their lines).
struct ChecksumTests {
    @Test func knownValues() {
        #expect(CRC32C.checksum(Array("123456789".utf8)) == 0xE306_9283)
        #expect(CRC32C.checksum([]) == 0)
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
