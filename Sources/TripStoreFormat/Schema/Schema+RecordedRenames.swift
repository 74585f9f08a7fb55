extension Schema {
    /// Whether any entity, attribute or relationship names an `originalName`.
    public var hasOriginalNames: Bool {
        descriptions.contains { e in
            e.originalName != nil || e.attributes.contains { $0.originalName != nil } || e.relationships.contains { $0.originalName != nil }
        }
    }

    /// This schema with the renames `recorded` (a store's record) applied
    /// kept: an entity, attribute or relationship that continues the
    /// recorded one of the same name (no rename of its own applies) takes
    /// that one's `originalName`, whatever it names itself. A rename
    /// applies once because the record says it was applied; a later schema
    /// that leaves the names out, or names others, must not wipe that out,
    /// or the same names declared again would rename a second time. Shape
    /// and fingerprint are unchanged.
    public func keepingRenames(recordedIn recorded: [EntityDescription]) -> Schema {
        /// The recorded element's original name where `name` continues the recorded one of that name.
        func kept<T>(_ name: String, _ originalName: String?, in list: [T], name nameOf: (T) -> String, original: (T) -> String?) -> String? {
            let old = SchemaMigration.continued(name, originalName: originalName, in: { n in list.first { nameOf($0) == n } }, originalNameOf: original)
            guard let old, nameOf(old) == name, let recordedName = original(old) else { return originalName }
            return recordedName
        }
        var merged = descriptions
        for k in merged.indices {
            let e = merged[k]
            guard let old = SchemaMigration.continued(e.name, originalName: e.originalName, in: { n in recorded.first { $0.name == n } },
                                                       originalNameOf: \.originalName) else { continue }
            merged[k].originalName = kept(e.name, e.originalName, in: recorded, name: \.name, original: \.originalName)
            for a in e.attributes.indices {
                merged[k].attributes[a].originalName = kept(e.attributes[a].name, e.attributes[a].originalName, in: old.attributes,
                                                            name: \.name, original: \.originalName)
            }
            for r in e.relationships.indices {
                merged[k].relationships[r].originalName = kept(e.relationships[r].name, e.relationships[r].originalName, in: old.relationships,
                                                               name: \.name, original: \.originalName)
            }
        }
        guard merged != descriptions, let schema = try? Schema(merged, version: version) else { return self }
        return schema
    }
}
