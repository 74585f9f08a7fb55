import TripStoreJSON
import TripStoreSystem
/// Checks a list of entity descriptions before a `Schema` is built from them.
enum SchemaValidator {
    /// Where a relationship names an inverse whose own declaration names
    /// none, the inverse names it back: a pair is two-sided in meaning,
    /// whichever side declared it.
    static func completingInverses(_ ds: [EntityDescription]) -> [EntityDescription] {
        var out = ds
        let index = Dictionary(ds.enumerated().map { ($1.name, $0) }, uniquingKeysWith: { a, _ in a })
        for d in ds {
            for r in d.relationships {
                guard let name = r.inverse else { continue }
                // The inverse is declared on the destination or one of its ancestors.
                var e = index[r.destination]
                var seen = Set<Int>()
                while let i = e, seen.insert(i).inserted {
                    if let k = out[i].relationships.firstIndex(where: { $0.name == name }) {
                        if out[i].relationships[k].inverse == nil, out[i].relationships[k].destination == d.name || isAncestor(out[i].relationships[k].destination, of: d.name, ds, index) {
                            out[i].relationships[k].inverse = r.name
                        }
                        break
                    }
                    e = out[i].parent.flatMap { index[$0] }
                }
            }
        }
        return out
    }

    static func isAncestor(_ a: String, of name: String, _ ds: [EntityDescription], _ index: [String: Int]) -> Bool {
        var current = index[name].flatMap { ds[$0].parent }
        var steps = 0
        while let c = current, steps < ds.count {
            if c == a { return true }
            current = index[c].flatMap { ds[$0].parent }
            steps += 1
        }
        return false
    }

    static func validate(_ ds: [EntityDescription]) throws(SchemaError) {
        guard !ds.isEmpty else { throw .noEntities }
        var index: [String: Int] = [:]
        index.reserveCapacity(ds.count)
        for (i, d) in ds.enumerated() {
            guard isValidName(d.name) else { throw .invalidName(d.name, owner: nil) }
            if let o = d.originalName, !isValidName(o) { throw .invalidName(o, owner: nil) }
            guard index.updateValue(i, forKey: d.name) == nil else { throw .duplicateEntity(d.name) }
        }
        // Each entity's chain, root first and itself last; found once, by a
        // walk that a cycle cannot keep going (a chain longer than the
        // entities holds one entity twice).
        var chains: [[Int]] = []
        chains.reserveCapacity(ds.count)
        for (i, d) in ds.enumerated() {
            if let p = d.parent, index[p] == nil { throw .unknownParent(entity: d.name, parent: p) }
            var chain = [i]
            var current = d.parent.flatMap { index[$0] }
            while let c = current {
                guard chain.count <= ds.count else { throw .inheritanceCycle(d.name) }
                chain.append(c)
                current = ds[c].parent.flatMap { index[$0] }
            }
            chains.append(chain.reversed())
        }
        func relationship(_ entity: Int, _ name: String) -> (owner: String, RelationshipDescription)? {
            for e in chains[entity].reversed() {
                if let r = ds[e].relationships.first(where: { $0.name == name }) { return (ds[e].name, r) }
            }
            return nil
        }
        var names = Set<String>()
        for (i, d) in ds.enumerated() {
            names.removeAll(keepingCapacity: true)
            for e in chains[i] {
                let owner = ds[e]
                for a in owner.attributes {
                    guard isValidName(a.name) else { throw .invalidName(a.name, owner: owner.name) }
                    guard names.insert(a.name).inserted else { throw .duplicateProperty(entity: d.name, property: a.name) }
                    try checkType(a.type, entity: d.name, attribute: a.name)
                    if let o = a.originalName, !isValidName(o) { throw .invalidName(o, owner: owner.name) }
                    if let v = a.defaultValue {
                        do {
                            _ = try ValueDecoding.decode(v, as: a.type, optional: a.isOptional)
                        } catch {
                            throw .invalidDefault(entity: owner.name, attribute: a.name, detail: error.message)
                        }
                    }
                }
                for r in owner.relationships {
                    if let o = r.originalName, !isValidName(o) { throw .invalidName(o, owner: owner.name) }
                    guard isValidName(r.name) else { throw .invalidName(r.name, owner: owner.name) }
                    guard names.insert(r.name).inserted else { throw .duplicateProperty(entity: d.name, property: r.name) }
                }
            }
            for r in d.relationships {
                guard let destination = index[r.destination] else {
                    throw .unknownDestination(entity: d.name, relationship: r.name, destination: r.destination)
                }
                guard let inverseName = r.inverse else { continue }
                guard let (owner, inv) = relationship(destination, inverseName) else {
                    throw .unknownInverse(entity: d.name, relationship: r.name, inverse: inverseName, destination: r.destination)
                }
                // The inverse must point back at this entity or one of its ancestors.
                guard chains[i].contains(where: { ds[$0].name == inv.destination }) else {
                    throw .inverseMismatch(entity: d.name, relationship: r.name,
                                           detail: "its inverse '\(owner).\(inv.name)' points at '\(inv.destination)', not at '\(d.name)'")
                }
                if let back = inv.inverse, back != r.name {
                    throw .inverseMismatch(entity: d.name, relationship: r.name,
                                           detail: "its inverse '\(owner).\(inv.name)' names '\(back)' as its own inverse")
                }
            }
        }
    }

    static func checkType(_ t: ValueType, entity: String, attribute: String) throws(SchemaError) {
        switch t {
        case .enumeration(let e):
            if e.cases.isEmpty { throw .emptyEnumeration(entity: entity, attribute: attribute) }
            var seen = Set<String>()
            for c in e.cases where !seen.insert(c).inserted {
                throw .duplicateEnumCase(entity: entity, attribute: attribute, value: c)
            }
        case .array(let inner): try checkType(inner, entity: entity, attribute: attribute)
        case .embedded(let e):
            var seen = Set<String>()
            for f in e.fields {
                guard isValidName(f.name) else { throw .invalidName(attribute + "." + f.name, owner: entity) }
                guard seen.insert(f.name).inserted else { throw .duplicateProperty(entity: entity, property: attribute + "." + f.name) }
                try checkType(f.type, entity: entity, attribute: attribute + "." + f.name)
            }
        default: break
        }
    }

    /// A letter or `_`, then letters, digits and `_` (ASCII).
    static func isValidName(_ s: String) -> Bool {
        var isFirst = true
        for b in s.utf8 {
            let letter = b == UInt8(ascii: "_") || (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(b) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(b)
            guard letter || !isFirst && (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(b) else { return false }
            isFirst = false
        }
        return !isFirst
    }
}
