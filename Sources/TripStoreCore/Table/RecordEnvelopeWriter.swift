import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Writes a row's snapshot line straight from its record: no `StoredObject`,
/// no Swift string per value. Only the stored side of a relationship pair is
/// written, and a reference to a destination without subclasses is `{"id":…}`
/// (the envelope's short form: the type can only be the destination), which
/// keeps a store's JSON close to its input's size: what the reader can
/// derive is not written again (golden files hold the bytes).
///
/// Made with `everyRelationship`, it writes an object's `data` as an export
/// does (`EnvelopeEncoder.writeData`): both sides of every relationship,
/// each reference as `{"type":…,"id":…}` (the feed into PostgreSQL).
struct RecordEnvelopeWriter {
    let encoder: EnvelopeFastEncoder
    /// Per entity and slot: whether a snapshot writes the slot, and how.
    private let plans: [[SlotPlan]]
    /// Every constant a line holds, back to back (entity prefixes, keys,
    /// literals), read through one pointer per line: appending from a
    /// nested array would retain and release it at each value.
    private let text: [UInt8]
    /// Per entity: where its `{"type":…,"id":` is in `text`, and its
    /// first slot in `slots`.
    private let prefixes: [Piece]
    private let firstSlot: [Int]
    /// Every entity's slots back to back: how each is written and where its key is.
    private let slots: [Slot]
    private let slotCounts: [Int]

    private enum SlotPlan {
        case skip
        case attribute(ValueType)
        /// `bareID`: the destination has no subclasses, so a reference is `{"id":…}`.
        case toOne(bareID: Bool)
        case toMany(bareID: Bool)
    }

    /// Bytes of `text`.
    private struct Piece {
        var start: Int32 = 0
        var count: Int32 = 0
    }

    private struct Slot {
        enum Kind: UInt8 { case skip, attribute, toOne, toMany }
        var kind: Kind
        var bareID: Bool
        var key: Piece
    }

    /// The literals' places in `text`.
    private let dataOpen: Piece, null: Piece, emptyArray: Piece, trueText: Piece, falseText: Piece, idOnly: Piece

    init(schema: Schema, everyRelationship: Bool = false) {
        encoder = EnvelopeFastEncoder(schema: schema)
        plans = schema.entities.map { e in
            e.properties.map { p in
                switch p.kind {
                case .attribute(let a): return .attribute(a.type)
                case .relationship(let r):
                    guard !everyRelationship else { return r.isToMany ? .toMany(bareID: false) : .toOne(bareID: false) }
                    let bare = schema.entities[r.destination].closure.count == 1
                    return r.isStoredSide ? (r.isToMany ? .toMany(bareID: bare) : .toOne(bareID: bare)) : .skip
                }
            }
        }
        var text: [UInt8] = []
        func piece(_ bytes: [UInt8]) -> Piece {
            defer { text += bytes }
            return Piece(start: Int32(text.count), count: Int32(bytes.count))
        }
        dataOpen = piece(Array(#","data":{"#.utf8))
        null = piece(Array("null".utf8))
        emptyArray = piece(Array("[]".utf8))
        trueText = piece(Array("true".utf8))
        falseText = piece(Array("false".utf8))
        idOnly = piece(Array(#"{"id":"#.utf8))
        prefixes = encoder.envelopePrefix.map { piece($0) }
        var slots: [Slot] = [], firstSlot: [Int] = []
        for (e, plan) in plans.enumerated() {
            firstSlot.append(slots.count)
            for (slot, p) in plan.enumerated() {
                let key = piece(encoder.keys[e][slot])
                switch p {
                case .skip: slots.append(Slot(kind: .skip, bareID: false, key: key))
                case .attribute: slots.append(Slot(kind: .attribute, bareID: false, key: key))
                case .toOne(let bare): slots.append(Slot(kind: .toOne, bareID: bare, key: key))
                case .toMany(let bare): slots.append(Slot(kind: .toMany, bareID: bare, key: key))
                }
            }
        }
        self.text = text
        self.slots = slots
        self.firstSlot = firstSlot
        slotCounts = plans.map(\.count)
    }

    /// Appends `row`'s line; `lists` is a flat copy of the table's lists.
    /// `scratch` holds the few values written through `EnvelopeFastEncoder`
    /// (arrays of other than strings, embedded values), reused from line to line.
    func write(row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, to w: inout ByteOutput, scratch: inout JSONWriter) {
        guard let entity = table.entity(at: row) else { return }
        let record = table.record(row)
        text.withUnsafeBytes { text in
            let put = Constants(text: text)
            put(prefixes[entity], &w)
            RecordEnvelopeWriter.appendID(of: record, to: &w)
            put(dataOpen, &w)
        }
        members(of: record, entity: entity, table: table, lists: lists, to: &w, scratch: &scratch)
        w.append(UInt8(ascii: "}"))
        w.append(UInt8(ascii: "}"))
    }

    /// Appends `row`'s envelope `data` alone, `{…}`.
    func writeData(row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, to w: inout ByteOutput, scratch: inout JSONWriter) {
        guard let entity = table.entity(at: row) else { return }
        w.append(UInt8(ascii: "{"))
        members(of: table.record(row), entity: entity, table: table, lists: lists, to: &w, scratch: &scratch)
        w.append(UInt8(ascii: "}"))
    }

    /// The members of a record's `data`, without its braces.
    private func members(of record: UnsafeRawPointer, entity: Int, table: ObjectTable.ReadView, lists: FlatLists.View,
                         to w: inout ByteOutput, scratch: inout JSONWriter) {
        let values = RecordReader.firstSlot(record)
        text.withUnsafeBytes { text in
            slots.withUnsafeBufferPointer { slots in
                let put = Constants(text: text)
                let first = firstSlot[entity], count = slotCounts[entity]
                var p = values
                var separate = false
                for slot in 0..<count {
                    let value = p
                    p = RecordReader.skip(p)
                    let plan = slots[first + slot]
                    if plan.kind == .skip { continue }
                    if separate { w.append(UInt8(ascii: ",")) }
                    separate = true
                    put(plan.key, &w)
                    let tag = value.load(as: UInt8.self)
                    switch plan.kind {
                    case .skip: break
                    case .attribute:
                        attribute(value, tag, entity, slot, table, put, &w, &scratch)
                    case .toOne:
                        if tag == RecordTag.toOne {
                            reference(Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self)), plan.bareID, table, put, &w)
                        } else {
                            put(null, &w)
                        }
                    case .toMany:
                        guard let n = RecordReader.listNumber(value) else {
                            put(emptyArray, &w)
                            continue
                        }
                        w.append(UInt8(ascii: "["))
                        for (i, target) in lists[n].enumerated() {
                            if i > 0 { w.append(UInt8(ascii: ",")) }
                            reference(target, plan.bareID, table, put, &w)
                        }
                        w.append(UInt8(ascii: "]"))
                    }
                }
            }
        }
    }

    /// Appends pieces of `text` while a line is written.
    private struct Constants {
        let text: UnsafeRawBufferPointer

        @inline(__always) func callAsFunction(_ piece: Piece, _ w: inout ByteOutput) {
            w.append(UnsafeRawBufferPointer(start: text.baseAddress! + Int(piece.start), count: Int(piece.count)))
        }
    }

    /// Starts loading the columns of the rows `row` refers to (see
    /// `ObjectTable.prefetch`), which a loop asks for some rows ahead, and
    /// notes up to `capacity` of them in `targets`, for the loop to load
    /// their records a few rows later; returns how many it noted.
    func prefetchTargets(of row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View,
                         into targets: UnsafeMutablePointer<RowID>, capacity: Int) -> Int {
        guard let entity = table.entity(at: row) else { return 0 }
        var p = RecordReader.firstSlot(table.record(row))
        var noted = 0
        func note(_ target: RowID) {
            table.prefetchColumns(target)
            if noted < capacity {
                targets[noted] = target
                noted += 1
            }
        }
        let first = firstSlot[entity]
        for slot in first..<(first + slotCounts[entity]) {
            let value = p
            p = RecordReader.skip(p)
            switch slots[slot].kind {
            case .skip, .attribute: continue
            case .toOne:
                if value.load(as: UInt8.self) == RecordTag.toOne { note(Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))) }
            case .toMany:
                guard let n = RecordReader.listNumber(value) else { continue }
                for target in lists[n] { note(target) }
            }
        }
        return noted
    }

    @inline(__always) private func attribute(_ value: UnsafeRawPointer, _ tag: UInt8, _ entity: Int, _ slot: Int,
                                             _ table: ObjectTable.ReadView, _ put: Constants, _ w: inout ByteOutput,
                                             _ scratch: inout JSONWriter) {
        switch tag {
        case RecordTag.string:
            var p = value + 1
            let n = RecordReader.varint(&p)
            w.appendQuoted(utf8: UnsafeRawBufferPointer(start: p, count: n))
        case RecordTag.int:
            w.appendInteger(Int64(littleEndian: (value + 1).loadUnaligned(as: Int64.self)))
        case RecordTag.double:
            w.appendDouble(Double(bitPattern: UInt64(littleEndian: (value + 1).loadUnaligned(as: UInt64.self))))
        case RecordTag.date:
            w.appendQuotedDate(Double(bitPattern: UInt64(littleEndian: (value + 1).loadUnaligned(as: UInt64.self))))
        case RecordTag.boolTrue: put(trueText, &w)
        case RecordTag.boolFalse: put(falseText, &w)
        case RecordTag.array where RecordEnvelopeWriter.holdsOnlyStrings(value):
            // The bytes `EnvelopeFastEncoder` writes for an array of strings, without a `Value` per item.
            var p = value + 1
            _ = RecordReader.varint(&p)
            let count = RecordReader.varint(&p)
            w.append(UInt8(ascii: "["))
            for i in 0..<count {
                if i > 0 { w.append(UInt8(ascii: ",")) }
                p += 1
                let n = RecordReader.varint(&p)
                w.appendQuoted(utf8: UnsafeRawBufferPointer(start: p, count: n))
                p += n
            }
            w.append(UInt8(ascii: "]"))
        case RecordTag.array, RecordTag.embedded:
            guard case .attribute(let type) = plans[entity][slot] else { return put(null, &w) }
            scratch.bytes.removeAll(keepingCapacity: true)
            encoder.attribute(RecordReader.value(value, lists: table.lists), type, &scratch)
            w.append(scratch.bytes)
        default:
            put(null, &w)
        }
    }

    /// Whether the array at `value` holds strings only.
    private static func holdsOnlyStrings(_ value: UnsafeRawPointer) -> Bool {
        var p = value + 1
        _ = RecordReader.varint(&p)
        let count = RecordReader.varint(&p)
        for _ in 0..<count {
            guard p.load(as: UInt8.self) == RecordTag.string else { return false }
            p = RecordReader.skip(p)
        }
        return true
    }

    @inline(__always) private func reference(_ row: RowID, _ bareID: Bool, _ table: ObjectTable.ReadView,
                                             _ put: Constants, _ w: inout ByteOutput) {
        guard let entity = table.entity(at: row) else { return put(null, &w) }
        put(bareID ? idOnly : prefixes[entity], &w)
        RecordEnvelopeWriter.appendID(of: table.record(row), to: &w)
        w.append(UInt8(ascii: "}"))
    }

    /// A record's id, quoted: a packed one written out straight into the
    /// line (it holds nothing to escape).
    @inline(__always) static func appendID(of record: UnsafeRawPointer, to w: inout ByteOutput) {
        guard record.load(as: UInt8.self) == RecordID.packedMarker else {
            return RecordReader.withID(record) { w.appendQuoted(utf8: $0) }
        }
        w.append(count: RecordID.quotedCount) { RecordID.writeQuoted(packed: record + 1, into: $0) }
    }
}
