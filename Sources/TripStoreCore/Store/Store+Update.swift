import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
extension Store {
    /// Stages assignments written as text (`name`, `"Rome"`, `2026-03-02`,
    /// `null`) on objects: each value is read in the attribute's type; an
    /// attribute that an object's type lacks is an error naming the type.
    /// Setting an equal value changes nothing.
    ///
    /// ```swift
    /// var tx = store.transaction()
    /// try store.stageUpdate(try store.rows(forIDs: ["t1"]), set: [("destination", "Roma")], into: &tx)
    /// try store.commit(tx, author: "alice")
    /// ```
    public func stageUpdate(_ rows: [RowID], set assignments: [(name: String, text: String)],
                            into tx: inout TransactionBuilder) throws {
        var parsed: [Int: [(Int, Value)]] = [:]  // by entity: (slot, value)
        for row in rows {
            guard let o = tx.object(at: row) else { continue }
            if parsed[o.entity] == nil {
                let entity = schema.entities[o.entity]
                var values: [(Int, Value)] = []
                for (name, text) in assignments {
                    guard let p = entity.property(named: name) else {
                        throw StoreError.unknownProperty(entity: entity.name, id: o.id, name: name,
                                                         suggestion: NameSuggestion.closest(to: name, in: entity.properties.map(\.name)))
                    }
                    guard let a = p.attribute else {
                        throw StoreError.notAnAttribute(entity: entity.name, name: name)
                    }
                    do {
                        values.append((p.slot, try ValueText.parse(text, as: a)))
                    } catch {
                        var e = error
                        e.entity = "\(entity.name) '\(o.id)'"
                        throw StoreError.invalid(e)
                    }
                }
                parsed[o.entity] = values
            }
            for (slot, value) in parsed[o.entity]! where o.values[slot] != value {
                tx.setAttribute(row, slot: slot, to: value)
            }
        }
        Trace.mark("staged \(rows.count) rows")
    }
}
