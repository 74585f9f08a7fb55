import TripStoreEngine

/// `tripstore schema`: the store's model hierarchy (the trip schema where
/// there is no store), as a tree or as a schema file for `--schema FILE`.
enum SchemaCommand {
    static let spec = CommandSpec(
        name: "schema", summary: "print the store's model hierarchy (or the trip schema): attributes, relationships, delete rules",
        usage: "tripstore schema [--format text|json|sql] [--sql-schema NAME]",
        valueOptions: ["format": "text (default); json: a schema file that --schema FILE reads (for migrate, set its \"version\" and give an attribute \"originalName\" to rename it or \"default\" to fill it); sql: PostgreSQL's tables for 'history --format sql'",
                       "sql-schema": "with --format sql: the PostgreSQL schema of the tables (default tripstore)"],
        examples: ["tripstore schema", "tripstore --store films schema --format json > films.schema.json",
                   "tripstore schema --format sql | psql -v ON_ERROR_STOP=1",
                   "tripstore --store new --schema films.schema.json import films.json"],
        needsStore: false, maxPositionals: 0)

    static func run(_ ctx: CommandContext) throws -> Int32 {
        switch ctx.args.value("format") {
        case nil, "text": break
        case "json":
            ctx.console.line(String(decoding: SchemaFile.bytes(ctx.schema, pretty: true), as: UTF8.self))
            return 0
        case "sql":
            let sql = try ctx.sqlSchema()
            // A store's DDL knows from which token its schema is in force.
            ctx.console.out(try Store.exists(in: ctx.storePath) ? try SQLWriter(ctx.openStore(.read)).ddl(in: sql) : sql.ddl(for: ctx.schema))
            return 0
        case let other?: throw ctx.usageError("--format is text, json or sql, got '\(other)'")
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
        if let v = schema.version { s += "version \(v)\n" }
        s += "fingerprint \(schema.fingerprint)\n"
        return s
    }
}
