import TripStoreJSON
import TripStoreSystem
/// Writes objects as envelopes and values as JSON, with relationships as
/// references `{"type": …, "id": …}`.
package enum EnvelopeEncoder {
    /// Writes `{"type":…,"id":…,"data":{…}}`. `fields`, when given, keeps only those properties.
    package static func write<L: ObjectLookup>(_ o: StoredObject, schema: Schema, lookup: L, to w: inout JSONWriter,
                                              fields: Set<String>? = nil) {
        let entity = schema.entities[o.entity]
        w.beginObject()
        w.key("type"); w.string(entity.name)
        w.key("id"); w.string(o.id)
        w.key("data")
        writeData(o, entity: entity, schema: schema, lookup: lookup, to: &w, fields: fields)
        w.endObject()
    }

    /// Writes the `data` object of an envelope.
    package static func writeData<L: ObjectLookup>(_ o: StoredObject, entity: Entity, schema: Schema, lookup: L,
                                                  to w: inout JSONWriter, fields: Set<String>? = nil) {
        w.beginObject()
        for p in entity.properties {
            if let fields, !fields.contains(p.name) { continue }
            w.key(p.name)
            writeValue(o.values[p.slot], of: p, schema: schema, lookup: lookup, to: &w)
        }
        w.endObject()
    }

    package static func writeValue<L: ObjectLookup>(_ v: Value, of p: Property, schema: Schema, lookup: L, to w: inout JSONWriter) {
        switch p.kind {
        case .attribute(let a): writeAttribute(v, type: a.type, to: &w)
        case .relationship(let r):
            switch v {
            case .toOne(let row): writeReference(row, schema: schema, lookup: lookup, to: &w)
            case .toMany(let rows):
                w.beginArray()
                for row in rows { writeReference(row, schema: schema, lookup: lookup, to: &w) }
                w.endArray()
            default:
                if r.isToMany { w.beginArray(); w.endArray() } else { w.null() }
            }
        }
    }

    package static func writeReference<L: ObjectLookup>(_ row: RowID, schema: Schema, lookup: L, to w: inout JSONWriter) {
        guard let o = lookup.reference(at: row) else {
            w.null()
            return
        }
        w.beginObject()
        w.key("type"); w.string(schema.entities[o.entity].name)
        w.key("id"); w.string(o.id)
        w.endObject()
    }

    package static func writeAttribute(_ v: Value, type: ValueType, to w: inout JSONWriter) {
        switch v {
        case .null: w.null()
        case .string(let s): w.string(s)
        case .int(let i): w.int(i)
        case .double(let d): w.double(d)
        case .bool(let b): w.bool(b)
        case .date(let d): w.date(d)
        case .array(let items):
            var inner = type
            if case .array(let t) = type { inner = t }
            w.beginArray()
            for item in items { writeAttribute(item, type: inner, to: &w) }
            w.endArray()
        case .embedded(let fields):
            w.beginObject()
            if case .embedded(let e) = type {
                for (k, f) in e.fields.enumerated() where k < fields.count {
                    w.key(f.name)
                    writeAttribute(fields[k], type: f.type, to: &w)
                }
            }
            w.endObject()
        case .toOne, .toMany: w.null()
        }
    }

    /// An object's `data` as JSON values, built directly (no text in
    /// between): the values a delete keeps in history. The same tree as
    /// writing the data and reading it back.
    package static func dataMembers<L: ObjectLookup>(_ o: StoredObject, schema: Schema, lookup: L,
                                                    only keep: ((Property) -> Bool)? = nil) -> [JSONMember] {
        var out: [JSONMember] = []
        for p in schema.entities[o.entity].properties where keep?(p) ?? true {
            let v = o.values[p.slot]
            switch p.kind {
            case .attribute(let a):
                out.append(JSONMember(p.name, jsonAttribute(v, type: a.type)))
            case .relationship(let r):
                func reference(_ row: RowID) -> JSONValue {
                    guard let t = lookup.reference(at: row) else { return .null }
                    return .object([JSONMember("type", .string(schema.entities[t.entity].name)), JSONMember("id", .string(t.id))])
                }
                switch v {
                case .toOne(let row): out.append(JSONMember(p.name, reference(row)))
                case .toMany(let rows): out.append(JSONMember(p.name, .array(rows.map(reference))))
                default: out.append(JSONMember(p.name, r.isToMany ? .array([]) : .null))
                }
            }
        }
        return out
    }

    /// An attribute value as the JSON tree `writeAttribute` then a reader give.
    package static func jsonAttribute(_ v: Value, type: ValueType) -> JSONValue {
        switch v {
        case .null, .toOne, .toMany: return .null
        case .string(let s): return .string(s)
        case .int(let i): return .int(i)
        case .bool(let b): return .bool(b)
        case .date(let d): return .string(ISODate.format(d))
        case .double(let d):
            // As the writer prints it: whole numbers without a fraction, no NaN or infinity.
            guard d.isFinite else { return .null }
            return JSONEscaping.integerForm(d).map { .int($0) } ?? .double(d)
        case .array(let items):
            var inner = type
            if case .array(let t) = type { inner = t }
            return .array(items.map { jsonAttribute($0, type: inner) })
        case .embedded(let fields):
            guard case .embedded(let e) = type else { return .object([]) }
            return .object(zip(e.fields, fields).map { JSONMember($0.name, jsonAttribute($1, type: $0.type)) })
        }
    }

    /// A value as a JSON tree (for history's old and new values).
    package static func jsonValue<L: ObjectLookup>(_ v: Value, of p: Property, schema: Schema, lookup: L) -> JSONValue {
        var w = JSONWriter()
        writeValue(v, of: p, schema: schema, lookup: lookup, to: &w)
        return (try? JSONReader.parse(w.bytes)) ?? .null
    }
}
