import Foundation
import Testing
@testable import TripStoreCore
import TripStoreModels

/// `RecordID`: which ids a record packs, that a packed id reads back as the
/// same text, and that packed ids sort, prefix and compare as their text does.
@Suite struct RecordIDTests {
    static func pack(_ text: String) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: RecordID.packedCount)
        let ok = Array(text.utf8).withUnsafeBytes { t in out.withUnsafeMutableBytes { RecordID.pack(t, into: $0.baseAddress!) } }
        return ok ? out : nil
    }

    static func unpack(_ packed: [UInt8]) -> String {
        var out = [UInt8](repeating: 0, count: RecordID.textCount)
        packed.withUnsafeBytes { p in out.withUnsafeMutableBytes { RecordID.unpack(p.baseAddress!, into: $0.baseAddress!) } }
        return String(decoding: out, as: UTF8.self)
    }

    /// A record holding only `id`, as the decoders write it.
    static func record(_ id: String) -> [UInt8] {
        var out = RecordBuffer(capacity: 64, hugePages: false)
        Array(id.utf8).withUnsafeBytes { out.id($0) }
        return Array(UnsafeRawBufferPointer(start: out.base, count: out.count))
    }

    @Test func aCanonicalUUIDIsPackedAndReadsBackAsTheSameText() throws {
        let id = "35BF992D-C9E9-4616-A12E-7696A6CECC1B"
        let packed = try #require(Self.pack(id))
        #expect(packed == [0x35, 0xBF, 0x99, 0x2D, 0xC9, 0xE9, 0x46, 0x16, 0xA1, 0x2E, 0x76, 0x96, 0xA6, 0xCE, 0xCC, 0x1B])
        #expect(Self.unpack(packed) == id)
        let record = Self.record(id)
        #expect(record == [RecordID.packedMarker] + packed)
        record.withUnsafeBytes { r in
            #expect(RecordReader.idString(r.baseAddress!) == id)
            #expect(RecordReader.firstSlot(r.baseAddress!) == r.baseAddress! + 17)
        }
        #expect(Self.pack("00000000-0000-0000-0000-000000000000") == Array(repeating: 0, count: 16))
        #expect(Self.pack("FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF") == Array(repeating: 0xFF, count: 16))
    }

    /// Anything that would not read back as the same text stays text: a
    /// lowercase digit, the characters either side of the digit ranges, a
    /// hyphen out of place, another length, a byte past ASCII.
    @Test(arguments: [
        "35bf992d-c9e9-4616-a12e-7696a6cecc1b", "35BF992D-C9E9-4616-A12E-7696A6CECC1b", "/5BF992D-C9E9-4616-A12E-7696A6CECC1B",
        ":5BF992D-C9E9-4616-A12E-7696A6CECC1B", "@5BF992D-C9E9-4616-A12E-7696A6CECC1B", "G5BF992D-C9E9-4616-A12E-7696A6CECC1B",
        "35BF992D-C9E9-4616-A12E-7696A6CECC1`", "35BF992DC-9E9-4616-A12E-7696A6CECC1B", "35BF992D-C9E9-4616-A12E-7696A6CECC1",
        "35BF992D-C9E9-4616-A12E-7696A6CECC1BB", "35BF992D_C9E9_4616_A12E_7696A6CECC1B", "35BF992D-C9E9-4616-A12E-7696A6CECC\u{C1}",
        "35BF992D-C9E9-4616-A12E-7696A6CECC1\u{0}", "trip-1", "a",
    ])
    func anythingElseStaysText(_ id: String) {
        #expect(Self.pack(id) == nil)
        let record = Self.record(id)
        #expect(record.first == UInt8(id.utf8.count))
        record.withUnsafeBytes { r in
            #expect(RecordReader.idString(r.baseAddress!) == id)
            #expect(RecordReader.firstSlot(r.baseAddress!) == r.baseAddress! + record.count)
        }
    }

    /// Every byte value at every place: only the canonical digits pack, and
    /// what packs reads back as itself.
    @Test func everyByteAtEveryPlacePacksOnlyAsADigit() {
        let base = Array("0123ABCD-EF45-6789-ABCD-EF0123456789".utf8)
        for at in 0..<base.count {
            for b in 0...255 {
                var id = base
                id[at] = UInt8(b)
                let text = String(decoding: id, as: UTF8.self)
                let digit = (0x30...0x39).contains(b) || (0x41...0x46).contains(b)
                let expected = [8, 13, 18, 23].contains(at) ? b == 0x2D : digit
                let packed = id.withUnsafeBytes { t -> [UInt8]? in
                    var out = [UInt8](repeating: 0, count: 16)
                    return out.withUnsafeMutableBytes { RecordID.pack(t, into: $0.baseAddress!) } ? out : nil
                }
                #expect((packed != nil) == expected, "byte \(b) at \(at)")
                if let packed { #expect(Self.unpack(packed) == text) }
            }
        }
    }

    /// Random ids, packed and not, mixed: the record order, prefix and
    /// equality agree with the text's bytes.
    @Test func packedAndTextIDsOrderPrefixAndCompareAsTheirText() {
        var rng = SplitMix64(seed: 23)
        let hex = Array("0123456789ABCDEF".utf8)
        func uuid() -> [UInt8] { (0..<36).map { [8, 13, 18, 23].contains($0) ? 0x2D : hex[Int(rng.next() & 15)] } }
        var ids: [[UInt8]] = []
        for _ in 0..<4_000 {
            var id = uuid()
            if rng.next() % 3 == 0, let other = ids.randomElement(using: &rng), other.count >= 20 { id.replaceSubrange(0..<20, with: other[0..<20]) }
            switch rng.next() % 5 {
            case 0: id[Int(rng.next() % 36)] = UInt8(ascii: "a")
            case 1: id.removeLast(Int(rng.next() % 30))
            default: break
            }
            ids.append(id)
        }
        let records = ids.map { id in id.withUnsafeBytes { t -> [UInt8] in Self.record(String(decoding: t, as: UTF8.self)) } }
        for _ in 0..<20_000 {
            let i = Int(rng.next() % UInt64(ids.count)), j = Int(rng.next() % UInt64(ids.count))
            records[i].withUnsafeBytes { a in
                records[j].withUnsafeBytes { b in
                    let x = a.baseAddress!, y = b.baseAddress!
                    #expect(RecordReader.idLess(x, y) == ids[i].lexicographicallyPrecedes(ids[j]))
                    #expect(RecordReader.idPrefix(x) == ids[i].withUnsafeBytes(ObjectTable.prefix))
                    #expect(ids[j].withUnsafeBytes { RecordReader.idEquals(x, $0) } == (ids[i] == ids[j]))
                }
            }
        }
    }
}
