import TripStoreJSON
import TripStoreSystem
/// Writes compact envelopes straight into bytes, with every key's bytes made
/// once per schema: the snapshot, journal and export path. The output is the
/// same as `EnvelopeEncoder` with a compact `JSONWriter`.
package struct EnvelopeFastEncoder {
    package let schema: Schema
    /// `{"type":"Trip","id":` per entity.
    package let envelopePrefix: [[UInt8]]
    /// `{"type":"Trip","id":` for references (the same bytes).
    /// `"name":` per entity and slot.
    package let keys: [[[UInt8]]]
    // Per encoder, not global: an encoder per core then shares no reference counts.
    package let dataKey = Array(#","data":"#.utf8)
    package let null = Array("null".utf8)
    package let emptyArray = Array("[]".utf8)
    package let trueBytes = Array("true".utf8)
    package let falseBytes = Array("false".utf8)

    package init(schema: Schema) {
        self.schema = schema
        envelopePrefix = schema.entities.map { Array(#"{"type":"\#($0.name)","id":"#.utf8) }
        keys = schema.entities.map { e in
            e.properties.map { p in
                var w = JSONWriter()
                w.appendQuoted(p.name)
                return w.bytes + [UInt8(ascii: ":")]
            }
        }
    }

    /// Writes one envelope. With `storedSidesOnly`, relationship sides that a
    /// snapshot derives on load are left out.
    package func write<L: ObjectLookup>(_ o: StoredObject, lookup: L, storedSidesOnly: Bool, to w: inout JSONWriter) {
        let entity = schema.entities[o.entity]
        w.bytes.append(contentsOf: envelopePrefix[o.entity])
        w.appendQuoted(o.id)
        w.bytes.append(contentsOf: dataKey)
        writeData(o, entity: entity, lookup: lookup, storedSidesOnly: storedSidesOnly, to: &w)
        w.bytes.append(UInt8(ascii: "}"))
    }

    func writeData<L: ObjectLookup>(_ o: StoredObject, entity: Entity, lookup: L, storedSidesOnly: Bool, to w: inout JSONWriter) {
        w.bytes.append(UInt8(ascii: "{"))
        var first = true
        let keys = self.keys[o.entity]
        for p in entity.properties {
            if storedSidesOnly, let r = p.relationship, !r.isStoredSide { continue }
            if !first { w.bytes.append(UInt8(ascii: ",")) }
            first = false
            w.bytes.append(contentsOf: keys[p.slot])
            let v = o.values[p.slot]
            switch p.kind {
            case .attribute(let a): attribute(v, a.type, &w)
            case .relationship(let r):
                switch v {
                case .toOne(let row): reference(row, lookup, &w)
                case .toMany(let rows):
                    w.bytes.append(UInt8(ascii: "["))
                    for (i, row) in rows.enumerated() {
                        if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
                        reference(row, lookup, &w)
                    }
                    w.bytes.append(UInt8(ascii: "]"))
                default:
                    w.bytes.append(contentsOf: r.isToMany ? emptyArray : null)
                }
            }
        }
        w.bytes.append(UInt8(ascii: "}"))
    }

    @inline(__always) func reference<L: ObjectLookup>(_ row: RowID, _ lookup: L, _ w: inout JSONWriter) {
        guard let o = lookup.object(at: row) else {
            w.bytes.append(contentsOf: null)
            return
        }
        w.bytes.append(contentsOf: envelopePrefix[o.entity])
        w.appendQuoted(o.id)
        w.bytes.append(UInt8(ascii: "}"))
    }

    package func attribute(_ v: Value, _ type: ValueType, _ w: inout JSONWriter) {
        switch v {
        case .null, .toOne, .toMany: w.bytes.append(contentsOf: null)
        case .string(let s): w.appendQuoted(s)
        case .int(let i): w.appendInteger(i)
        case .double(let d): w.appendDouble(d)
        case .bool(let b): w.bytes.append(contentsOf: b ? trueBytes : falseBytes)
        case .date(let d):
            w.bytes.append(UInt8(ascii: "\""))
            ISODate.append(d, to: &w.bytes)
            w.bytes.append(UInt8(ascii: "\""))
        case .array(let items):
            var inner = type
            if case .array(let t) = type { inner = t }
            w.bytes.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { w.bytes.append(UInt8(ascii: ",")) }
                attribute(item, inner, &w)
            }
            w.bytes.append(UInt8(ascii: "]"))
        case .embedded(let fields):
            w.bytes.append(UInt8(ascii: "{"))
            if case .embedded(let e) = type {
                for (k, f) in e.fields.enumerated() where k < fields.count {
                    if k > 0 { w.bytes.append(UInt8(ascii: ",")) }
                    w.appendQuoted(f.name)
                    w.bytes.append(UInt8(ascii: ":"))
                    attribute(fields[k], f.type, &w)
                }
            }
            w.bytes.append(UInt8(ascii: "}"))
        }
    }
}

