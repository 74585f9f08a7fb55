import TripStoreJSON
import TripStoreSystem
/// The schema as JSON: in the snapshot header (so a store records what wrote
/// it) and for the fingerprint.
package enum SchemaCoding {
    /// Writes the entities in declaration order; `hints` adds what only a
    /// migration reads (original names and defaults), which the fingerprint leaves out.
    package static func write(_ ds: [EntityDescription], to w: inout JSONWriter, hints: Bool = true) {
        w.beginArray()
        for d in ds {
            w.beginObject()
            w.key("name"); w.string(d.name)
            if hints, let o = d.originalName { w.key("originalName"); w.string(o) }
            if let p = d.parent { w.key("parent"); w.string(p) }
            w.key("attributes")
            w.beginArray()
            for a in d.attributes { writeAttribute(a, to: &w, hints: hints) }
            w.endArray()
            w.key("relationships")
            w.beginArray()
            for r in d.relationships {
                w.beginObject()
                w.key("name"); w.string(r.name)
                if hints, let o = r.originalName { w.key("originalName"); w.string(o) }
                w.key("destination"); w.string(r.destination)
                w.key("toMany"); w.bool(r.isToMany)
                if let i = r.inverse { w.key("inverse"); w.string(i) }
                w.key("deleteRule"); w.string(r.deleteRule.rawValue)
                w.endObject()
            }
            w.endArray()
            w.endObject()
        }
        w.endArray()
    }

    /// `{"fingerprint": …, "version": …, "entities": […]}`'s members: the
    /// schema as the snapshot header, the record and the schema file hold it.
    /// `versionAlways` writes `"version": null` where the schema has none,
    /// so that a person editing a schema file sees the key.
    package static func writeMembers(_ schema: Schema, to w: inout JSONWriter, versionAlways: Bool = false) {
        w.key("fingerprint"); w.string(schema.fingerprint)
        if let v = schema.version {
            w.key("version"); w.string(v)
        } else if versionAlways {
            w.key("version"); w.null()
        }
        w.key("entities"); write(schema.descriptions, to: &w)
    }

    static func writeAttribute(_ a: AttributeDescription, to w: inout JSONWriter, hints: Bool = true) {
        w.beginObject()
        w.key("name"); w.string(a.name)
        if hints, let o = a.originalName { w.key("originalName"); w.string(o) }
        w.key("type"); writeType(a.type, to: &w, hints: hints)
        if a.isOptional { w.key("optional"); w.bool(true) }
        if hints, let d = a.defaultValue { w.key("default"); w.value(d) }
        if a.preservesOnDeletion { w.key("preserveOnDeletion"); w.bool(true) }
        if a.isIndexed { w.key("indexed"); w.bool(true) }
        w.endObject()
    }

    static func writeType(_ t: ValueType, to w: inout JSONWriter, hints: Bool = true) {
        switch t {
        case .string: w.string("string")
        case .int: w.string("int")
        case .double: w.string("double")
        case .bool: w.string("bool")
        case .date: w.string("date")
        case .enumeration(let e):
            w.beginObject()
            w.key("enum"); w.string(e.name)
            w.key("cases"); w.beginArray(); for c in e.cases { w.string(c) }; w.endArray()
            w.endObject()
        case .array(let inner):
            w.beginObject(); w.key("array"); writeType(inner, to: &w, hints: hints); w.endObject()
        case .embedded(let e):
            w.beginObject()
            w.key("embedded"); w.string(e.name)
            w.key("fields"); w.beginArray(); for f in e.fields { writeAttribute(f, to: &w, hints: hints) }; w.endArray()
            w.endObject()
        }
    }

    /// 64-bit FNV-1a of the canonical JSON, entities sorted by name so that the
    /// order of declaration does not matter.
    package static func fingerprint(of ds: [EntityDescription]) -> String {
        var w = JSONWriter()
        write(ds.sorted { $0.name < $1.name }, to: &w, hints: false)
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in w.bytes {
            h ^= UInt64(b)
            h = h &* 0x0000_0100_0000_01B3
        }
        let s = String(h, radix: 16)
        return String(repeating: "0", count: 16 - s.count) + s
    }

    /// Reads entities written by `write`; nil when the JSON is not of that form.
    package static func read(_ v: JSONValue) -> [EntityDescription]? {
        guard case .array(let items) = v else { return nil }
        var out: [EntityDescription] = []
        for item in items {
            guard case .string(let name)? = item["name"],
                  case .array(let attrs)? = item["attributes"],
                  case .array(let rels)? = item["relationships"] else { return nil }
            var d = EntityDescription(name)
            if case .string(let p)? = item["parent"] { d.parent = p }
            if case .string(let o)? = item["originalName"] { d.originalName = o }
            for a in attrs {
                guard let attr = readAttribute(a) else { return nil }
                d.attributes.append(attr)
            }
            for r in rels {
                guard case .string(let rn)? = r["name"], case .string(let dest)? = r["destination"],
                      case .bool(let many)? = r["toMany"], case .string(let rule)? = r["deleteRule"],
                      let deleteRule = DeleteRule(rawValue: rule) else { return nil }
                var inverse: String?
                if case .string(let i)? = r["inverse"] { inverse = i }
                var original: String?
                if case .string(let o)? = r["originalName"] { original = o }
                d.relationships.append(RelationshipDescription(rn, to: dest, toMany: many, inverse: inverse, deleteRule: deleteRule,
                                                               originalName: original))
            }
            out.append(d)
        }
        return out
    }

    static func readAttribute(_ a: JSONValue) -> AttributeDescription? {
        guard case .string(let name)? = a["name"], let tv = a["type"], let type = readType(tv) else { return nil }
        var options: AttributeOptions = []
        if a["preserveOnDeletion"] == .bool(true) { options.insert(.preserveOnDeletion) }
        if a["indexed"] == .bool(true) { options.insert(.indexed) }
        var original: String?
        if case .string(let o)? = a["originalName"] { original = o }
        return AttributeDescription(name, type, optional: a["optional"] == .bool(true), options: options,
                                    originalName: original, defaultValue: a["default"])
    }

    static func readType(_ v: JSONValue) -> ValueType? {
        switch v {
        case .string("string"): return .string
        case .string("int"): return .int
        case .string("double"): return .double
        case .string("bool"): return .bool
        case .string("date"): return .date
        case .object:
            if case .string(let n)? = v["enum"], case .array(let cs)? = v["cases"] {
                var cases: [String] = []
                for c in cs { guard case .string(let s) = c else { return nil }; cases.append(s) }
                return .enumeration(EnumDescription(n, cases: cases))
            }
            if let inner = v["array"] { return readType(inner).map { .array($0) } }
            if case .string(let n)? = v["embedded"], case .array(let fs)? = v["fields"] {
                var fields: [AttributeDescription] = []
                for f in fs { guard let a = readAttribute(f) else { return nil }; fields.append(a) }
                return .embedded(EmbeddedDescription(n, fields: fields))
            }
            return nil
        default: return nil
        }
    }
}
