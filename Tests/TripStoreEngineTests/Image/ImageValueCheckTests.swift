import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat

/// What an image's record may hold is checked before anything reads it by
/// place (found by a hostile review: a forged embedded value with a field
/// missing, and values nested 150,000 deep, crashed readers).
@Suite struct ImageValueCheckTests {
    static let itinerary = ValueType.embedded(EmbeddedDescription("MeetingItinerary", fields: [
        AttributeDescription("agenda", .array(.string)),
        AttributeDescription("location", .string, optional: true),
    ]))

    static func fits(_ v: Value, _ type: ValueType, optional: Bool = false) -> Bool {
        var b = RecordBuffer(capacity: 256, hugePages: false)
        RecordWriter.attribute(v, to: &b)
        return ImageSlotCheck.fits(b.contents.baseAddress!, type, optional: optional)
    }

    @Test func anEmbeddedValueHoldsExactlyItsFieldsOfTheirTypes() {
        #expect(Self.fits(.embedded([.array([.string("a"), .string("b")]), .null]), Self.itinerary))
        #expect(Self.fits(.embedded([.array([]), .string("Rome")]), Self.itinerary))
        #expect(!Self.fits(.embedded([.array([.string("a")])]), Self.itinerary), "a field missing")
        #expect(!Self.fits(.embedded([.array([.string("a")]), .null, .null]), Self.itinerary), "a field too many")
        #expect(!Self.fits(.embedded([.null, .null]), Self.itinerary), "a required field nil")
        #expect(!Self.fits(.embedded([.array([.int(1)]), .null]), Self.itinerary), "an item of another type")
        #expect(!Self.fits(.array([.string("a")]), Self.itinerary))
        #expect(Self.fits(.null, Self.itinerary, optional: true) && !Self.fits(.null, Self.itinerary))
        let reason = ValueType.array(.enumeration(EnumDescription("Reason", cases: ["family", "work"])))
        #expect(Self.fits(.array([.string("work")]), reason) && !Self.fits(.array([.string("play")]), reason))
    }

    /// Arrays nested `depth` deep in one slot of a record with a text id.
    static func nestedRecord(_ depth: Int) -> [UInt8] {
        var value: [UInt8] = [RecordTag.array, 1, 0]
        for _ in 1..<depth {
            let content: [UInt8] = [1] + value
            var length: [UInt8] = []
            var n = content.count
            repeat {
                length.append(UInt8(n & 0x7F) | (n >= 0x80 ? 0x80 : 0))
                n >>= 7
            } while n > 0
            value = [RecordTag.array] + length + content
        }
        return [1, UInt8(ascii: "a")] + value
    }

    @Test func valuesNestedDeeperThanAnyTypeAreRefused() {
        let bounds = RecordBounds(rows: 10, lists: 1, bytes: 1 << 20)
        for (depth, sound) in [(2, true), (30, true), (40, false), (5000, false)] {
            let record = Self.nestedRecord(depth)
            let ok = record.withUnsafeBytes { bounds.check($0.baseAddress!, end: $0.baseAddress! + $0.count, slots: 1) }
            #expect(ok == sound, "depth \(depth)")
        }
    }
}
