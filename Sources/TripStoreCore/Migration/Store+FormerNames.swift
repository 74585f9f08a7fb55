import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// Entity names across migrations, for reading history recorded under
/// names a migration changed or removed.
extension Store {
    /// The names under which history may record objects of type `name` and
    /// its subclasses: their names now and every name a retained migration
    /// renamed them from or to. A name that only retained history knows (an
    /// entity a migration removed or renamed) counts too; nil for a name
    /// neither the schema nor retained history knows.
    /// - Throws: `StoreError.damaged` naming a history line it cannot read.
    public func historyTypeNames(_ name: String) throws -> Set<String>? {
        var schemas: [(before: Schema, after: Schema)] = []
        var after = schema
        for t in try checkedHistory().reversed() {
            for c in t.changes {
                guard let m = c.migration, let previous = m.previous, let before = try? SchemaFile.read(value: previous) else { continue }
                schemas.append((before, after))
                after = before
            }
        }
        // Names that are one entity at different times.
        var parent: [String: String] = [:]
        func root(_ n: String) -> String {
            var n = n
            while let p = parent[n], p != n { n = p }
            return n
        }
        for (before, after) in schemas {
            let plan = SchemaMigration(from: before, to: after)
            for (o, mapping) in plan.mappings.enumerated() {
                guard let mapping else { continue }
                let a = root(before.entities[o].name), b = root(after.entities[mapping.entity].name)
                if a != b { parent[a] = b }
            }
        }
        // The type and its subclasses in the newest schema that has it.
        guard let deep = schema.deepTypeNames(name) ?? schemas.lazy.compactMap({ $0.before.deepTypeNames(name) }).first else { return nil }
        var all: Set<String> = []
        let known = Set(schemas.flatMap { $0.before.entities.map(\.name) } + schema.entities.map(\.name))
        for n in known where deep.contains(where: { root($0) == root(n) }) { all.insert(n) }
        return all.union(deep)
    }
}
