import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Checks that a record read from an image stays within its bytes and points
/// only at rows and lists that exist.
struct RecordBounds {
    let rows: Int
    let lists: Int
    let bytes: Int

    func check(_ start: UnsafeRawPointer, end: UnsafeRawPointer, slots: Int) -> Bool {
        guard var p = idEnd(start, end: end) else { return false }
        for _ in 0..<slots {
            guard value(&p, end, topLevel: true, depth: 0) else { return false }
        }
        return p == end
    }

    /// Where the record's id ends, if it is within its bytes (all an id
    /// comparison reads, whatever the record's entity).
    func idEnd(_ start: UnsafeRawPointer, end: UnsafeRawPointer) -> UnsafeRawPointer? {
        var p = start
        if p < end && p.load(as: UInt8.self) == RecordID.packedMarker {
            guard end - p > RecordID.packedCount else { return nil }
            return p + 1 + RecordID.packedCount
        }
        guard let idLength = varint(&p, end), idLength > 0, p + idLength <= end,
              RecordBounds.isStoredID(UnsafeRawBufferPointer(start: p, count: idLength)) else { return nil }
        return p + idLength
    }

    /// Whether a text id's bytes are an id as a store writes it: UTF-8, no
    /// control characters, in NFC (a write names the object by this text in
    /// the journal, which must find it in the snapshot).
    static func isStoredID(_ bytes: UnsafeRawBufferPointer) -> Bool {
        guard UTF8Check.isValid(bytes) else { return false }
        let id = String(decoding: bytes, as: UTF8.self)
        // Compared as bytes: `String`'s == holds for canonically equivalent forms.
        return Identifier.problem(id) == nil && Identifier.normalized(id).utf8.elementsEqual(bytes)
    }

    private func varint(_ p: inout UnsafeRawPointer, _ end: UnsafeRawPointer) -> Int? {
        var result = 0, shift = 0
        while p < end && shift < 35 {
            let b = p.load(as: UInt8.self)
            p += 1
            result |= Int(b & 0x7F) << shift
            if b < 0x80 { return result }
            shift += 7
        }
        return nil
    }

    /// Values nest no deeper than a schema's types may (`SchemaFile`: 32 levels).
    private static let depthLimit = 33

    private func value(_ p: inout UnsafeRawPointer, _ end: UnsafeRawPointer, topLevel: Bool, depth: Int) -> Bool {
        guard p < end, depth <= RecordBounds.depthLimit else { return false }
        let tag = p.load(as: UInt8.self)
        p += 1
        switch tag {
        case RecordTag.null, RecordTag.boolTrue, RecordTag.boolFalse: return true
        case RecordTag.int, RecordTag.double, RecordTag.date:
            guard end - p >= 8 else { return false }
            p += 8
            return true
        case RecordTag.string:
            guard let n = varint(&p, end), end - p >= n else { return false }
            p += n
            return true
        case RecordTag.array, RecordTag.embedded:
            guard let n = varint(&p, end), end - p >= n else { return false }
            let stop = p + n
            guard let count = varint(&p, stop) else { return false }
            for _ in 0..<count where !value(&p, stop, topLevel: false, depth: depth + 1) { return false }
            return p == stop
        case RecordTag.toOne, RecordTag.toMany, RecordTag.noReference:
            guard topLevel, end - p >= 4 else { return false }
            let n = Int(Int32(littleEndian: p.loadUnaligned(as: Int32.self)))
            p += 4
            if tag == RecordTag.toOne { return n >= 0 && n < rows }
            if tag == RecordTag.toMany { return n >= 0 && n < lists }
            return true
        default:
            return false
        }
    }
}

/// What may stand in one slot of an image's record, as plain values.
struct ImageSlotCheck: Sendable {
    /// For a relationship: its destination entity (else -1) and whether it is to-many.
    var destination = -1
    var toMany = false
    /// For an attribute: the record tags its type allows, nil's place, an enum's cases.
    var tags: [UInt8] = []
    /// `tags` as bits, for the hot loop.
    var tagMask: UInt32 = 0
    var optional = false
    var cases: [[UInt8]]?
    /// For an array or embedded attribute: its type, which every item and field must fit.
    var nested: ValueType?
    /// Whether `nested` and `cases` are set, as plain flags for the hot loop.
    var isNested = false
    var isEnumeration = false

    init(_ p: Property) {
        if let r = p.relationship {
            destination = r.destination
            toMany = r.isToMany
        } else if let a = p.attribute {
            optional = a.isOptional
            switch a.type {
            case .string: tags = [RecordTag.string]
            case .int: tags = [RecordTag.int]
            case .double: tags = [RecordTag.double, RecordTag.int]
            case .bool: tags = [RecordTag.boolTrue, RecordTag.boolFalse]
            case .date: tags = [RecordTag.date]
            case .array:
                tags = [RecordTag.array]
                nested = a.type
            case .embedded:
                tags = [RecordTag.embedded]
                nested = a.type
            case .enumeration(let e):
                tags = [RecordTag.string]
                cases = e.cases.map { Array($0.utf8) }
            }
        }
        tagMask = tags.reduce(0) { $0 | 1 << UInt32($1) }
        isNested = nested != nil
        isEnumeration = cases != nil
    }

    /// Whether the value at `p` (its bounds already checked) is one `type`
    /// allows, what it holds included: each item of an array its element
    /// type, an embedded value exactly its fields, each of its field's type.
    /// Code that reads a field by its place relies on it. The recursion is
    /// as deep as the type, which the schema limits.
    static func fits(_ p: UnsafeRawPointer, _ type: ValueType, optional: Bool) -> Bool {
        let tag = p.load(as: UInt8.self)
        if tag == RecordTag.null { return optional }
        switch type {
        case .string: return tag == RecordTag.string
        case .int: return tag == RecordTag.int
        case .double: return tag == RecordTag.double || tag == RecordTag.int
        case .bool: return tag == RecordTag.boolTrue || tag == RecordTag.boolFalse
        case .date: return tag == RecordTag.date
        case .enumeration(let e):
            guard tag == RecordTag.string else { return false }
            var q = p + 1
            let n = RecordReader.varint(&q)
            let raw = UnsafeRawBufferPointer(start: q, count: n)
            return e.cases.contains { $0.utf8.elementsEqual(raw) }
        case .array(let inner):
            guard tag == RecordTag.array else { return false }
            var q = p + 1
            _ = RecordReader.varint(&q)
            for _ in 0..<RecordReader.varint(&q) {
                guard fits(q, inner, optional: false) else { return false }
                q = RecordReader.skip(q)
            }
            return true
        case .embedded(let d):
            guard tag == RecordTag.embedded else { return false }
            var q = p + 1
            _ = RecordReader.varint(&q)
            guard RecordReader.varint(&q) == d.fields.count else { return false }
            for f in d.fields {
                guard fits(q, f.type, optional: f.isOptional) else { return false }
                q = RecordReader.skip(q)
            }
            return true
        }
    }
}
