import TripStoreJSON
import TripStoreSystem
/// What a delete leaves behind for auditors.
package enum Tombstone {
    /// The values of the object's attributes marked preserve-on-deletion
    /// (inherited ones included), in slot order; nothing else.
    package static func values(of o: StoredObject, schema: Schema) -> [JSONMember] {
        var out: [JSONMember] = []
        for p in schema.entities[o.entity].properties {
            guard let a = p.attribute, a.preservesOnDeletion else { continue }
            out.append(JSONMember(p.name, EnvelopeEncoder.jsonAttribute(o.values[p.slot], type: a.type)))
        }
        return out
    }

    /// Every attribute and relationship of the object (references through
    /// `lookup`), as its envelope's `data`: what time travel needs to bring
    /// a deleted object back.
    package static func allValues<L: ObjectLookup>(of o: StoredObject, schema: Schema, lookup: L) -> [JSONMember] {
        EnvelopeEncoder.dataMembers(o, schema: schema, lookup: lookup)
    }
}
