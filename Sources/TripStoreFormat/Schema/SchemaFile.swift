import TripStoreJSON
import TripStoreSystem

/// A schema as a file: what `tripstore schema --format json` prints and
/// `--schema FILE` reads.
///
/// ```json
/// {"fingerprint": "…", "entities": [
///   {"name": "Production", "attributes": [{"name": "title", "type": "string", "indexed": true}],
///    "relationships": [{"name": "crew", "destination": "Person", "toMany": true, "inverse": "credits", "deleteRule": "nullify"}]},
///   {"name": "FeatureFilm", "parent": "Production", "attributes": [{"name": "rating", "type": {"enum": "Rating", "cases": ["g", "pg"]}}]}
/// ]}
/// ```
///
/// Types are `string`, `int`, `double`, `bool`, `date`, `{"enum": NAME, "cases": […]}`,
/// `{"array": TYPE}` and `{"embedded": NAME, "fields": [ATTRIBUTE…]}`. The
/// fingerprint is informative: it is computed again from the entities.
/// For `tripstore migrate`, a file may carry `"version"`, an entity,
/// attribute or relationship `"originalName"`, and an attribute `"default"`.
public enum SchemaFile {
    /// The file's text: pretty-printed, or one compact line.
    public static func bytes(_ schema: Schema, pretty: Bool) -> [UInt8] {
        var w = JSONWriter(pretty: pretty)
        w.beginObject()
        SchemaCoding.writeMembers(schema, to: &w, versionAlways: true)
        w.endObject()
        return w.bytes
    }

    /// Reads and validates a schema file; every error names the entity and
    /// property it is about. `extraKeys` are top-level keys allowed besides
    /// `entities` and `fingerprint` (a store's record adds `format` and `crc32c`).
    public static func read(_ bytes: [UInt8], extraKeys: Set<String> = []) throws(SchemaError) -> Schema {
        let value: JSONValue
        // A byte-order mark is skipped, as `import` skips one.
        let start = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        do {
            value = try bytes.withUnsafeBufferPointer { all in
                let buf = UnsafeBufferPointer(rebasing: all[start...])
                var r = JSONReader(buffer: buf)
                return try r.parseDocument()
            }
        } catch {
            throw .malformedFile(location: "the schema file", detail: "it is not JSON: \(error)")
        }
        return try read(value: value, extraKeys: extraKeys)
    }

    /// The file's object as a JSON value (what a `migrate` change keeps).
    public static func value(_ schema: Schema) -> JSONValue {
        var w = JSONWriter()
        w.beginObject()
        SchemaCoding.writeMembers(schema, to: &w)
        w.endObject()
        return (try? JSONReader.parse(w.bytes)) ?? .null
    }

    /// Reads and validates a schema file's parsed object (see `read(_:extraKeys:)`).
    public static func read(value: JSONValue, extraKeys: Set<String> = []) throws(SchemaError) -> Schema {
        guard case .object(let members) = value else {
            throw .malformedFile(location: "the schema file", detail: "expected an object with \"entities\"")
        }
        for m in members where !["entities", "fingerprint", "version"].contains(m.key) && !extraKeys.contains(m.key) {
            throw .malformedFile(location: "the schema file", detail: "unknown key '\(m.key)' (expected \"entities\", \"fingerprint\" and \"version\")")
        }
        var version: String?
        switch value["version"] {
        case nil, .null?: break
        case .string(let v)?: version = v
        default: throw .malformedFile(location: "the schema file", detail: "\"version\" must be a string, such as \"1.2.0\"")
        }
        guard case .array(let items)? = value["entities"] else {
            throw .malformedFile(location: "the schema file", detail: "\"entities\" must be an array of entities")
        }
        var entities: [EntityDescription] = []
        for (i, item) in items.enumerated() { entities.append(try entity(item, index: i)) }
        return try Schema(entities, version: version)
    }

    private static func entity(_ v: JSONValue, index: Int) throws(SchemaError) -> EntityDescription {
        guard case .object(let members) = v, case .string(let name)? = v["name"] else {
            throw .malformedFile(location: "entities[\(index)]", detail: "expected an object with a \"name\" string")
        }
        let at = "entity '\(name)'"
        try onlyKeys(members, entityKeys, at: at)
        var d = EntityDescription(name)
        d.originalName = try originalName(v, at: at)
        switch v["parent"] {
        case nil, .null?: break
        case .string(let p)?: d.parent = p
        default: throw .malformedFile(location: at, detail: "\"parent\" must be an entity's name")
        }
        for (i, a) in try array(v["attributes"], "attributes", at: at).enumerated() {
            d.attributes.append(try attribute(a, at: at, index: i, list: "attributes", depth: 0))
        }
        for (i, r) in try array(v["relationships"], "relationships", at: at).enumerated() {
            d.relationships.append(try relationship(r, at: at, index: i))
        }
        return d
    }

    private static func attribute(_ v: JSONValue, at owner: String, index: Int, list: String, depth: Int) throws(SchemaError) -> AttributeDescription {
        guard case .object(let members) = v, case .string(let name)? = v["name"] else {
            throw .malformedFile(location: "\(owner), \(list)[\(index)]", detail: "expected an object with a \"name\" string")
        }
        let at = "\(owner), attribute '\(name)'"
        try onlyKeys(members, attributeKeys, at: at)
        guard let tv = v["type"] else { throw .malformedFile(location: at, detail: "it has no \"type\"") }
        var options: AttributeOptions = []
        if try flag(v, "preserveOnDeletion", at: at) { options.insert(.preserveOnDeletion) }
        if try flag(v, "indexed", at: at) { options.insert(.indexed) }
        return AttributeDescription(name, try type(tv, at: at, depth: depth), optional: try flag(v, "optional", at: at), options: options,
                                    originalName: try originalName(v, at: at), defaultValue: v["default"])
    }

    private static func type(_ v: JSONValue, at: String, depth: Int) throws(SchemaError) -> ValueType {
        let expected = "expected \"string\", \"int\", \"double\", \"bool\", \"date\", {\"enum\": NAME, \"cases\": […]}, {\"array\": TYPE} or {\"embedded\": NAME, \"fields\": […]}"
        guard depth < 32 else { throw .malformedFile(location: at, detail: "the type nests more than 32 levels") }
        switch v {
        case .string("string"): return .string
        case .string("int"): return .int
        case .string("double"): return .double
        case .string("bool"): return .bool
        case .string("date"): return .date
        case .object(let members):
            if case .string(let n)? = v["enum"] {
                try onlyKeys(members, ["enum", "cases"], at: at)
                var cases: [String] = []
                for c in try array(v["cases"], "cases", at: at) {
                    guard case .string(let s) = c else { throw .malformedFile(location: at, detail: "enum '\(n)' has a case that is not a string") }
                    cases.append(s)
                }
                return .enumeration(EnumDescription(n, cases: cases))
            }
            if let inner = v["array"] {
                try onlyKeys(members, ["array"], at: at)
                return .array(try type(inner, at: at, depth: depth + 1))
            }
            if case .string(let n)? = v["embedded"] {
                try onlyKeys(members, ["embedded", "fields"], at: at)
                var fields: [AttributeDescription] = []
                for (i, f) in try array(v["fields"], "fields", at: at).enumerated() {
                    fields.append(try attribute(f, at: at, index: i, list: "fields", depth: depth + 1))
                }
                return .embedded(EmbeddedDescription(n, fields: fields))
            }
            throw .malformedFile(location: at, detail: "unknown type object; " + expected)
        case .string(let s): throw .malformedFile(location: at, detail: "unknown type '\(s)'; " + expected)
        default: throw .malformedFile(location: at, detail: "\"type\" is not a type; " + expected)
        }
    }

    private static func relationship(_ v: JSONValue, at owner: String, index: Int) throws(SchemaError) -> RelationshipDescription {
        guard case .object(let members) = v, case .string(let name)? = v["name"] else {
            throw .malformedFile(location: "\(owner), relationships[\(index)]", detail: "expected an object with a \"name\" string")
        }
        let at = "\(owner), relationship '\(name)'"
        try onlyKeys(members, relationshipKeys, at: at)
        guard case .string(let destination)? = v["destination"] else {
            throw .malformedFile(location: at, detail: "it needs a \"destination\": the related entity's name")
        }
        var inverse: String?
        switch v["inverse"] {
        case nil, .null?: break
        case .string(let s)?: inverse = s
        default: throw .malformedFile(location: at, detail: "\"inverse\" must be a relationship's name")
        }
        var rule = DeleteRule.nullify
        switch v["deleteRule"] {
        case nil: break
        case .string(let s)?:
            guard let r = DeleteRule(rawValue: s) else {
                throw .malformedFile(location: at, detail: "unknown delete rule '\(s)' (expected " + DeleteRule.allCases.map(\.rawValue).joined(separator: ", ") + ")")
            }
            rule = r
        default: throw .malformedFile(location: at, detail: "\"deleteRule\" must be a string")
        }
        return RelationshipDescription(name, to: destination, toMany: try flag(v, "toMany", at: at), inverse: inverse, deleteRule: rule,
                                       originalName: try originalName(v, at: at))
    }

    /// `"originalName"`: the name before a rename (docs/cli.md, migrate).
    private static func originalName(_ v: JSONValue, at: String) throws(SchemaError) -> String? {
        switch v["originalName"] {
        case nil: return nil
        case .string(let s)?: return s
        default: throw .malformedFile(location: at, detail: "\"originalName\" must be the name it had before, a string")
        }
    }

    // The keys each object may have. Arrays, not sets: a handful of keys is
    // found faster by comparing than by hashing, and a command reads the
    // store's schema at every start.
    private static let entityKeys = ["name", "originalName", "parent", "attributes", "relationships"]
    private static let attributeKeys = ["name", "originalName", "type", "optional", "default", "preserveOnDeletion", "indexed"]
    private static let relationshipKeys = ["name", "originalName", "destination", "toMany", "inverse", "deleteRule"]

    private static func onlyKeys(_ members: [JSONMember], _ allowed: [String], at: String) throws(SchemaError) {
        for m in members where !allowed.contains(m.key) {
            throw .malformedFile(location: at, detail: "unknown key '\(m.key)' (expected " + allowed.sorted().joined(separator: ", ") + ")")
        }
    }

    private static func array(_ v: JSONValue?, _ name: String, at: String) throws(SchemaError) -> [JSONValue] {
        switch v {
        case nil: return []
        case .array(let items)?: return items
        default: throw .malformedFile(location: at, detail: "\"\(name)\" must be an array")
        }
    }

    private static func flag(_ v: JSONValue, _ name: String, at: String) throws(SchemaError) -> Bool {
        switch v[name] {
        case nil: return false
        case .bool(let b)?: return b
        default: throw .malformedFile(location: at, detail: "\"\(name)\" must be true or false")
        }
    }
}
