import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// The compact form an object takes in memory: its id, then one tagged value
/// per slot. Variable-length values carry their byte length, so one slot can
/// be read without decoding the others; a relationship slot is always five
/// bytes, so linking fills it in place.
///
/// ```
/// record   := varint(idLength) idBytes value* | 0 uuid[16] value*   (see `RecordID`)
/// value    := 0 | 1 varint(n) utf8 | 2 int64 | 3 float64 | 4 | 5 | 6 float64
///           | 7 varint(byteLength) varint(count) value* | 8 …same (embedded)
///           | 9 int32(row) | 10 int32(list) | 11 int32(unused)
/// ```
enum RecordTag {
    static let null: UInt8 = 0
    static let string: UInt8 = 1
    static let int: UInt8 = 2
    static let double: UInt8 = 3
    static let boolFalse: UInt8 = 4
    static let boolTrue: UInt8 = 5
    static let date: UInt8 = 6
    static let array: UInt8 = 7
    static let embedded: UInt8 = 8
    static let toOne: UInt8 = 9
    static let toMany: UInt8 = 10
    /// A relationship slot that holds nothing (same size as a set one).
    static let noReference: UInt8 = 11
}

/// Reads records; every function takes a pointer at the start of a record or value.
enum RecordReader {
    @inline(__always) static func varint(_ p: inout UnsafeRawPointer) -> Int {
        var result: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let b = p.load(as: UInt8.self)
            p += 1
            result |= UInt64(b & 0x7F) << shift
            if b < 0x80 { return Int(result) }
            shift += 7
        }
    }

    /// The pointer just past a record's id: its first slot.
    @inline(__always) static func firstSlot(_ record: UnsafeRawPointer) -> UnsafeRawPointer {
        if record.load(as: UInt8.self) == RecordID.packedMarker { return record + 1 + RecordID.packedCount }
        var p = record
        let n = varint(&p)
        return p + n
    }

    /// Calls `body` with the text of a record's id (a packed one written out
    /// on the stack for the call).
    @inline(__always) static func withID<R>(_ record: UnsafeRawPointer, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        if record.load(as: UInt8.self) == RecordID.packedMarker {
            return try withUnsafeTemporaryAllocation(byteCount: RecordID.textCount, alignment: 8) { text in
                RecordID.unpack(record + 1, into: text.baseAddress!)
                return try body(UnsafeRawBufferPointer(text))
            }
        }
        var p = record
        let n = varint(&p)
        return try body(UnsafeRawBufferPointer(start: p, count: n))
    }

    /// A record's id as a string.
    static func idString(_ record: UnsafeRawPointer) -> String {
        withID(record) { String(decoding: $0, as: UTF8.self) }
    }

    /// `ObjectTable.prefix` of a record's id.
    @inline(__always) static func idPrefix(_ record: UnsafeRawPointer) -> UInt64 {
        if record.load(as: UInt8.self) == RecordID.packedMarker { return RecordID.prefix(packed: record + 1) }
        return withID(record, ObjectTable.prefix)
    }

    /// Whether record `a`'s id sorts before record `b`'s (`ObjectTable.less` of their text).
    @inline(__always) static func idLess(_ a: UnsafeRawPointer, _ b: UnsafeRawPointer) -> Bool {
        if a.load(as: UInt8.self) == RecordID.packedMarker && b.load(as: UInt8.self) == RecordID.packedMarker {
            return RecordID.less(packed: a + 1, b + 1)
        }
        return withID(a) { x in withID(b) { y in ObjectTable.less(x, y) } }
    }

    /// Whether a record's id is `key`.
    @inline(__always) static func idEquals(_ record: UnsafeRawPointer, _ key: UnsafeRawBufferPointer) -> Bool {
        withID(record) { ObjectTable.equal($0, key) }
    }

    /// The pointer past one value.
    @inline(__always) static func skip(_ p: UnsafeRawPointer) -> UnsafeRawPointer {
        var p = p
        let tag = p.load(as: UInt8.self)
        p += 1
        switch tag {
        case RecordTag.string, RecordTag.array, RecordTag.embedded:
            let n = varint(&p)
            return p + n
        case RecordTag.int, RecordTag.double, RecordTag.date: return p + 8
        case RecordTag.toOne, RecordTag.toMany, RecordTag.noReference: return p + 4
        default: return p
        }
    }

    /// Whether the value at `p` is a relationship's (set or not).
    @inline(__always) static func isRelationship(_ p: UnsafeRawPointer) -> Bool {
        let tag = p.load(as: UInt8.self)
        return tag == RecordTag.toOne || tag == RecordTag.toMany || tag == RecordTag.noReference
    }

    /// The start of a slot's value.
    @inline(__always) static func slot(_ record: UnsafeRawPointer, _ slot: Int) -> UnsafeRawPointer {
        var p = firstSlot(record)
        var k = 0
        while k < slot { p = skip(p); k += 1 }
        return p
    }

    /// `slot`, passing over the relationship slots before it (`relationships[k]`:
    /// slot k is one; a pointer, not an array slice, which would be retained per value) by their size, never reading them: for a reader that
    /// runs while another thread links the records (and writes those slots).
    @inline(__always) static func slot(_ record: UnsafeRawPointer, _ slot: Int, relationships: UnsafePointer<Bool>) -> UnsafeRawPointer {
        var p = firstSlot(record)
        for k in 0..<slot { p = relationships[k] ? p + 5 : skip(p) }
        return p
    }

    /// The value at `p`; `lists` resolves a to-many slot's list number.
    static func value(_ p: UnsafeRawPointer, lists: RelationshipLists) -> Value {
        var p = p
        return read(&p, lists: lists)
    }

    /// The value at `p`, moving `p` past it.
    static func read(_ p: inout UnsafeRawPointer, lists: RelationshipLists) -> Value {
        let tag = p.load(as: UInt8.self)
        p += 1
        switch tag {
        case RecordTag.string:
            let n = varint(&p)
            let s = String(decoding: UnsafeRawBufferPointer(start: p, count: n), as: UTF8.self)
            p += n
            return .string(s)
        case RecordTag.int:
            defer { p += 8 }
            return .int(Int64(littleEndian: p.loadUnaligned(as: Int64.self)))
        case RecordTag.double:
            defer { p += 8 }
            return .double(Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))))
        case RecordTag.date:
            defer { p += 8 }
            return .date(Double(bitPattern: UInt64(littleEndian: p.loadUnaligned(as: UInt64.self))))
        case RecordTag.boolFalse: return .bool(false)
        case RecordTag.boolTrue: return .bool(true)
        case RecordTag.array, RecordTag.embedded:
            _ = varint(&p)
            let count = varint(&p)
            var items: [Value] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(read(&p, lists: lists)) }
            return tag == RecordTag.array ? .array(items) : .embedded(items)
        case RecordTag.toOne:
            defer { p += 4 }
            return .toOne(Int32(littleEndian: p.loadUnaligned(as: Int32.self)))
        case RecordTag.toMany:
            defer { p += 4 }
            return .toMany(lists[Int(Int32(littleEndian: p.loadUnaligned(as: Int32.self)))])
        case RecordTag.noReference:
            p += 4
            return .null
        default:
            return .null
        }
    }

    /// Every slot's value, in slot order.
    static func values(_ record: UnsafeRawPointer, count: Int, lists: RelationshipLists) -> [Value] {
        var p = firstSlot(record)
        var out: [Value] = []
        out.reserveCapacity(count)
        for _ in 0..<count { out.append(read(&p, lists: lists)) }
        return out
    }

    /// The list number in a to-many slot, if it holds one.
    @inline(__always) static func listNumber(_ p: UnsafeRawPointer) -> Int? {
        guard p.load(as: UInt8.self) == RecordTag.toMany else { return nil }
        return Int(Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self)))
    }

    /// The byte length of a whole record with `count` slots.
    static func length(_ record: UnsafeRawPointer, count: Int) -> Int {
        var p = firstSlot(record)
        for _ in 0..<count { p = skip(p) }
        return p - record
    }
}

/// Writes records.
enum RecordWriter {
    static func id(_ id: String, to out: inout RecordBuffer) {
        var id = id
        id.withUTF8 { out.id(UnsafeRawBufferPointer($0)) }
    }

    /// One attribute value (relationship values go through `reference`).
    static func attribute(_ v: Value, to out: inout RecordBuffer) {
        switch v {
        case .null, .toOne, .toMany: out.byte(RecordTag.null)
        case .string(let s):
            out.byte(RecordTag.string)
            var s = s
            s.withUTF8 { u in
                out.varint(u.count)
                out.bytes(UnsafeRawBufferPointer(u))
            }
        case .int(let i):
            out.byte(RecordTag.int)
            out.uint64(UInt64(bitPattern: i))
        case .double(let d):
            out.byte(RecordTag.double)
            out.uint64(d.bitPattern)
        case .date(let d):
            out.byte(RecordTag.date)
            out.uint64(d.bitPattern)
        case .bool(let b): out.byte(b ? RecordTag.boolTrue : RecordTag.boolFalse)
        case .array(let items), .embedded(let items):
            out.byte(v.isArray ? RecordTag.array : RecordTag.embedded)
            let lengthAt = out.placeholderVarint()
            out.varint(items.count)
            for item in items { attribute(item, to: &out) }
            out.patchVarint(out.count - lengthAt - 5, at: lengthAt)
        }
    }

    /// A relationship slot: five bytes whatever it holds.
    @inline(__always) static func reference(tag: UInt8, _ n: Int32, to out: inout RecordBuffer) {
        out.byte(tag)
        out.int32(n)
    }
}

extension Value {
    var isArray: Bool {
        if case .array = self { return true }
        return false
    }
}
