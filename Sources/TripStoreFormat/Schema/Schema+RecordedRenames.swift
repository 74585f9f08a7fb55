extension Schema {
    /// Whether any entity, attribute or relationship names an `originalName`.
    public var hasOriginalNames: Bool {
        descriptions.contains { e in
            e.originalName != nil || e.attributes.contains { $0.originalName != nil } || e.relationships.contains { $0.originalName != nil }
        }
    }

    /// This schema with the renames `recorded` (a store's record) applied
    /// kept: an entity, attribute or relationship that continues a recorded
    /// one of the same name, and names no `originalName` of its own, keeps
    /// the recorded one. A rename applies once because the record says it
    /// was applied; a later schema that leaves the names out (as it may)
    /// must not wipe that out, or the same names declared again would
    /// rename a second time. Shape and fingerprint are unchanged.
    public func keepingRenames(recordedIn recorded: [EntityDescription]) -> Schema {
        var merged = descriptions
        for k in merged.indices {
            let old = SchemaMigration.continued(merged[k].name, originalName: merged[k].originalName,
                                                in: { n in recorded.first { $0.name == n } }, originalNameOf: \.originalName)
            guard let old else { continue }
            if merged[k].name == old.name, merged[k].originalName == nil { merged[k].originalName = old.originalName }
            for a in merged[k].attributes.indices where merged[k].attributes[a].originalName == nil {
                merged[k].attributes[a].originalName = old.attributes.first { $0.name == merged[k].attributes[a].name }?.originalName
            }
            for r in merged[k].relationships.indices where merged[k].relationships[r].originalName == nil {
                merged[k].relationships[r].originalName = old.relationships.first { $0.name == merged[k].relationships[r].name }?.originalName
            }
        }
        guard merged != descriptions, let schema = try? Schema(merged, version: version) else { return self }
        return schema
    }
}
