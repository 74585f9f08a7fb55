import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Writes a row's snapshot line straight from its record: no `StoredObject`,
/// no Swift string per value. Only the stored side of a relationship pair is
/// written, and a reference to a destination without subclasses is `{"id":…}`
/// (the envelope's short form: the type can only be the destination), which
/// keeps a store's JSON within about 1.5 times its input (golden files hold
/// the bytes).
struct RecordEnvelopeWriter {
    let encoder: EnvelopeFastEncoder
    /// Per entity and slot: whether a snapshot writes the slot, and how.
    private let plans: [[SlotPlan]]

    private enum SlotPlan {
        case skip
        case attribute(ValueType)
        /// `bareID`: the destination has no subclasses, so a reference is `{"id":…}`.
        case toOne(bareID: Bool)
        case toMany(bareID: Bool)
    }

    init(schema: Schema) {
        encoder = EnvelopeFastEncoder(schema: schema)
        plans = schema.entities.map { e in
            e.properties.map { p in
                switch p.kind {
                case .attribute(let a): return .attribute(a.type)
                case .relationship(let r):
                    let bare = schema.entities[r.destination].closure.count == 1
                    return r.isStoredSide ? (r.isToMany ? .toMany(bareID: bare) : .toOne(bareID: bare)) : .skip
                }
            }
        }
    }

    /// Appends `row`'s line; `lists` is a flat copy of the table's lists.
    func write(row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, to w: inout JSONWriter) {
        guard let entity = table.entity(at: row) else { return }
        let record = table.record(row)
        let (id, slots) = RecordReader.id(record)
        w.bytes.append(contentsOf: encoder.envelopePrefix[entity])
        w.appendQuoted(utf8: id)
        w.bytes.append(contentsOf: encoder.dataKey)
        w.bytes.append(UInt8(ascii: "{"))
        let keys = encoder.keys[entity]
        var p = slots
        var first = true
        for (slot, plan) in plans[entity].enumerated() {
            let value = p
            p = RecordReader.skip(p)
            if case .skip = plan { continue }
            if !first { w.bytes.append(UInt8(ascii: ",")) }
            first = false
            w.bytes.append(contentsOf: keys[slot])
            let tag = value.load(as: UInt8.self)
            switch plan {
            case .skip: break
            case .attribute(let type):
                attribute(value, tag, type, table, &w)
            case .toOne(let bare):
                if tag == RecordTag.toOne {
                    reference(Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self)), bare, table, &w)
                } else {
                    w.bytes.append(contentsOf: encoder.null)
                }
            case .toMany(let bare):
                guard let n = RecordReader.listNumber(value) else {
                    w.bytes.append(contentsOf: encoder.emptyArray)
                    continue
                }
                w.bytes.append(UInt8(ascii: "["))
                for (i, target) in lists[n].enumerated() {
                    if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
                    reference(target, bare, table, &w)
                }
                w.bytes.append(UInt8(ascii: "]"))
            }
        }
        w.bytes.append(UInt8(ascii: "}"))
        w.bytes.append(UInt8(ascii: "}"))
    }

    /// Starts loading what the rows `row` refers to hold for its line (see
    /// `ObjectTable.prefetch`): their columns when `columns`, which a loop
    /// asks for some rows ahead, else their records, fewer rows ahead.
    func prefetchTargets(of row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, columns: Bool) {
        guard let entity = table.entity(at: row) else { return }
        var p = RecordReader.id(table.record(row)).1
        for plan in plans[entity] {
            let value = p
            p = RecordReader.skip(p)
            switch plan {
            case .skip, .attribute: continue
            case .toOne:
                if value.load(as: UInt8.self) == RecordTag.toOne {
                    let target = Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))
                    if columns { table.prefetchColumns(target) } else { table.prefetch(target) }
                }
            case .toMany:
                guard let n = RecordReader.listNumber(value) else { continue }
                for target in lists[n] {
                    if columns { table.prefetchColumns(target) } else { table.prefetch(target) }
                }
            }
        }
    }

    @inline(__always) private func attribute(_ value: UnsafeRawPointer, _ tag: UInt8, _ type: ValueType,
                                             _ table: ObjectTable.ReadView, _ w: inout JSONWriter) {
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
            w.bytes.append(UInt8(ascii: "\""))
            ISODate.append(Double(bitPattern: UInt64(littleEndian: (value + 1).loadUnaligned(as: UInt64.self))), to: &w.bytes)
            w.bytes.append(UInt8(ascii: "\""))
        case RecordTag.boolTrue: w.bytes.append(contentsOf: encoder.trueBytes)
        case RecordTag.boolFalse: w.bytes.append(contentsOf: encoder.falseBytes)
        case RecordTag.array, RecordTag.embedded:
            encoder.attribute(RecordReader.value(value, lists: table.lists), type, &w)
        default:
            w.bytes.append(contentsOf: encoder.null)
        }
    }

    @inline(__always) private func reference(_ row: RowID, _ bareID: Bool, _ table: ObjectTable.ReadView, _ w: inout JSONWriter) {
        guard let entity = table.entity(at: row) else {
            w.bytes.append(contentsOf: encoder.null)
            return
        }
        if bareID {
            w.bytes.append(contentsOf: idOnlyPrefix)
        } else {
            w.bytes.append(contentsOf: encoder.envelopePrefix[entity])
        }
        w.appendQuoted(utf8: RecordReader.id(table.record(row)).0)
        w.bytes.append(UInt8(ascii: "}"))
    }
}

private let idOnlyPrefix = Array(#"{"id":"#.utf8)
