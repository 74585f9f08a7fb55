import TripStoreJSON
import TripStoreSystem
/// Decides whether a store written with one schema can be opened with another.
///
/// Additions are fine (a new entity, a new optional attribute, a new index, a
/// new relationship); anything else (a type, optionality, preservation,
/// delete rule or inverse that changed, anything removed) is a difference
/// the store refuses.
package enum SchemaCompatibility {
    /// The differences that prevent opening, empty when `stored` can be read by `current`.
    package static func differences(stored: [EntityDescription], current: [EntityDescription]) -> [String] {
        var problems: [String] = []
        let now = Dictionary(current.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        for old in stored {
            guard let new = now[old.name] else {
                problems.append("entity '\(old.name)' is in the store but not in the program's schema")
                continue
            }
            if old.parent != new.parent {
                problems.append("entity '\(old.name)' had parent '\(old.parent ?? "none")', now '\(new.parent ?? "none")'")
            }
            let newAttrs = Dictionary(new.attributes.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for a in old.attributes {
                guard let b = newAttrs[a.name] else {
                    problems.append("attribute '\(old.name).\(a.name)' was removed")
                    continue
                }
                if a.type != b.type {
                    problems.append("attribute '\(old.name).\(a.name)' changed type from \(a.type.displayName) to \(b.type.displayName)")
                }
                if a.isOptional != b.isOptional {
                    problems.append("attribute '\(old.name).\(a.name)' became \(b.isOptional ? "optional" : "required")")
                }
                if a.preservesOnDeletion != b.preservesOnDeletion {
                    problems.append("attribute '\(old.name).\(a.name)' is \(b.preservesOnDeletion ? "now" : "no longer") preserved on deletion")
                }
                if a.isIndexed && !b.isIndexed {
                    problems.append("attribute '\(old.name).\(a.name)' lost its index")
                }
            }
            let oldNames = Set(old.attributes.map(\.name))
            for b in new.attributes where !oldNames.contains(b.name) && !b.isOptional {
                problems.append("attribute '\(old.name).\(b.name)' is new and required (a new attribute must be optional)")
            }
            let newRels = Dictionary(new.relationships.map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
            for r in old.relationships {
                guard let s = newRels[r.name] else {
                    problems.append("relationship '\(old.name).\(r.name)' was removed")
                    continue
                }
                if r.destination != s.destination || r.isToMany != s.isToMany || r.inverse != s.inverse {
                    problems.append("relationship '\(old.name).\(r.name)' changed its destination, cardinality or inverse")
                }
                if r.deleteRule != s.deleteRule {
                    problems.append("relationship '\(old.name).\(r.name)' changed its delete rule from \(r.deleteRule.rawValue) to \(s.deleteRule.rawValue)")
                }
            }
        }
        return problems
    }
}
