import TripStoreEngine

/// `tripstore schema`: the model hierarchy as a tree.
enum SchemaCommand {
    static let spec = CommandSpec(
        name: "schema", summary: "print the model hierarchy: attributes, options, relationships, delete rules",
        usage: "tripstore schema [--format text|json]",
        valueOptions: ["format": "text (default) or json"],
        examples: ["tripstore schema"], needsStore: false)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        if ctx.args.value("format") == "json" {
            var w = JSONWriter(pretty: true)
            w.beginObject()
            w.key("fingerprint"); w.string(ctx.schema.fingerprint)
            w.key("entities"); SchemaCoding.write(ctx.schema.descriptions, to: &w)
            w.endObject()
            ctx.console.line(w.string)
            return 0
        }
        ctx.console.out(render(ctx.schema))
        return 0
    }

    static func render(_ schema: Schema) -> String {
        var s = ""
        func entity(_ e: Entity, depth: Int) {
            let pad = String(repeating: "  ", count: depth)
            let d = schema.descriptions[e.id]
            s += pad + e.name + (d.parent.map { " : \($0)" } ?? "") + "\n"
            for a in d.attributes {
                var opts: [String] = []
                if a.preservesOnDeletion { opts.append("preserved on deletion") }
                if a.isIndexed { opts.append("indexed") }
                var type = a.type.displayName + (a.isOptional ? "?" : "")
                if case .enumeration(let en) = a.type { type += " (" + en.cases.joined(separator: ", ") + ")" }
                if case .embedded(let em) = a.type {
                    type += " { " + em.fields.map { "\($0.name): \($0.type.displayName)\($0.isOptional ? "?" : "")" }.joined(separator: ", ") + " }"
                }
                s += pad + "  " + a.name + ": " + type + (opts.isEmpty ? "" : "  [" + opts.joined(separator: ", ") + "]") + "\n"
            }
            for r in d.relationships {
                let type = r.isToMany ? "[\(r.destination)]" : "\(r.destination)?"
                s += pad + "  " + r.name + ": " + type + "  -> delete rule \(r.deleteRule.rawValue)"
                    + (r.inverse.map { ", inverse \($0)" } ?? "") + "\n"
            }
            for c in e.children { entity(schema.entities[c], depth: depth + 1) }
        }
        for r in schema.roots { entity(r, depth: 0) }
        s += "fingerprint \(schema.fingerprint)\n"
        return s
    }
}
