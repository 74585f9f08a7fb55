import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// The in-memory indexes of a store, kept current by every commit: rows per
/// concrete type (a deep query is a union over the subclass closure), built
/// on open, and a `ValueIndex` per declared indexed attribute, built the
/// first time a query uses it (a one-query process builds only what it needs).
package final class StoreIndexes {
    package let schema: Schema
    unowned let table: ObjectTable
    /// Which value indexes have been built.
    @exclusivity(unchecked) private var built: [Bool] = []
    /// Live rows of each concrete entity, ascending (see `rows(of:)`).
    @exclusivity(unchecked) private var typeRows: [[RowID]]
    /// Entities whose rows are still in the snapshot image, not yet read.
    @exclusivity(unchecked) private var typeRowsInImage: [Bool]
    /// Of an entity whose rows are still in the image: rows added since
    /// (each past every row of the image) and rows removed since, laid over
    /// the image's rows when they are read: a write costs what it writes,
    /// not a read of every row of its type.
    @exclusivity(unchecked) private var addedSinceImage: [[RowID]]
    @exclusivity(unchecked) private var removedSinceImage: [Set<RowID>]
    private var image: MappedImage?
    @exclusivity(unchecked) package private(set) var valueIndexes: [ValueIndex] = []
    /// For each concrete entity, the value indexes that cover it.
    @exclusivity(unchecked) private var indexesByEntity: [[Int]]

    init(schema: Schema, table: ObjectTable) {
        self.schema = schema
        self.table = table
        typeRows = Array(repeating: [], count: schema.entities.count)
        typeRowsInImage = Array(repeating: false, count: schema.entities.count)
        addedSinceImage = Array(repeating: [], count: schema.entities.count)
        removedSinceImage = Array(repeating: [], count: schema.entities.count)
        indexesByEntity = Array(repeating: [], count: schema.entities.count)
        for (entity, property) in StoreIndexes.declared(schema) {
            let k = valueIndexes.count
            valueIndexes.append(ValueIndex(entity: entity, property: property))
            built.append(false)
            for sub in schema.entities[entity].closure { indexesByEntity[sub].append(k) }
        }
    }

    /// The value indexes a schema declares, in the order a snapshot image saves them.
    static func declared(_ schema: Schema) -> [(entity: Int, property: Property)] {
        var out: [(entity: Int, property: Property)] = []
        for e in schema.entities {
            for p in e.properties where p.declaringEntity == e.id {
                guard let a = p.attribute, a.isIndexed else { continue }
                switch a.type {
                case .array, .embedded: continue
                default: out.append((e.id, p))
                }
            }
        }
        return out
    }

    /// "Trip.name", … for `stats`.
    package var descriptions: [String] {
        ["type"] + valueIndexes.map { "\(schema.entities[$0.entity].name).\($0.name)" }
    }

    /// Live rows of a concrete entity, ascending.
    @inline(__always) package func rows(of entity: Int) -> [RowID] {
        if typeRowsInImage[entity] { readTypeRows(entity) }
        return typeRows[entity]
    }

    private func readTypeRows(_ e: Int) {
        typeRowsInImage[e] = false
        // Damage leaves the rows out; the command answers from the JSON instead.
        var rows = image?.typeRows(e) ?? []
        if !removedSinceImage[e].isEmpty { rows.removeAll { removedSinceImage[e].contains($0) } }
        typeRows[e] = rows + addedSinceImage[e].sorted()
        addedSinceImage[e] = []
        removedSinceImage[e] = []
    }

    /// Takes the type index from a snapshot image (each entity's rows are read when first used).
    func adoptImage(_ image: MappedImage) {
        self.image = image
        for e in typeRows.indices {
            typeRows[e] = []
            typeRowsInImage[e] = true
            addedSinceImage[e] = []
            removedSinceImage[e] = []
        }
    }

    /// The index over `slot` for objects of `entity`, if that attribute is indexed.
    package func index(entity: Int, slot: Int) -> ValueIndex? {
        for k in indexesByEntity[entity] where valueIndexes[k].property.slot == slot {
            build(k)
            return valueIndexes[k]
        }
        return nil
    }

    private func build(_ k: Int) {
        guard !built[k] else { return }
        built[k] = true
        let index = valueIndexes[k]
        let slot = index.property.slot
        if let image, let saved = image.savedIndex(k) {
            // The saved index as it is, with the entries of rows changed since taken out and their values now laid over it.
            let closure = Set(schema.entities[index.entity].closure)
            var removed: [(key: IndexKey, row: RowID)] = []
            var removedNulls = Set<RowID>()
            var added: [(key: IndexKey, row: RowID)] = []
            var nulls: [RowID] = []
            let changed = table.changedBaseRows
            for row in changed.keys {
                guard let (e, value) = table.imageValue(row, slot: slot), closure.contains(e) else { continue }
                if let key = IndexKey(value) { removed.append((key, row)) } else { removedNulls.insert(row) }
            }
            for row in Array(changed.keys) + (table.baseRows..<table.rowCount).map({ RowID($0) }) {
                guard let e = table.entity(at: row), closure.contains(e) else { continue }
                if let key = IndexKey(table.value(at: row, slot: slot)) { added.append((key, row)) } else { nulls.append(row) }
            }
            nulls += removedNulls.isEmpty ? saved.nulls : saved.nulls.filter { !removedNulls.contains($0) }
            removed.sort { $0.key == $1.key ? $0.row < $1.row : $0.key < $1.key }
            added.sort { $0.key == $1.key ? $0.row < $1.row : $0.key < $1.key }
            index.adoptSaved(saved, removed: removed, added: added, nullRows: nulls.sorted())
            return
        }
        var entries: [(IndexKey?, RowID)] = []
        for e in schema.entities[index.entity].closure {
            let rows = rows(of: e)
            entries.reserveCapacity(entries.count + rows.count)
            for row in rows { entries.append((IndexKey(table.value(at: row, slot: slot)), row)) }
        }
        index.build(entries)
    }

    /// Lets go of the value indexes built so far: each is built again when
    /// a query next uses it (after journal lines were replayed into the
    /// table, which changes values without keeping the indexes current).
    func forgetBuiltValueIndexes() {
        for k in built.indices { built[k] = false }
    }

    /// Builds again each value index built so far (after rows were added wholesale).
    func rebuildValueIndexes() {
        for k in built.indices where built[k] {
            built[k] = false
            build(k)
        }
    }

    /// Adds a row known to be past every row of its entity (loading a snapshot).
    func appendType(_ row: RowID, _ entity: Int) {
        if typeRowsInImage[entity] && Int(row) >= table.baseRows {
            addedSinceImage[entity].append(row)
            return
        }
        if typeRowsInImage[entity] { readTypeRows(entity) }
        typeRows[entity].append(row)
    }

    func add(_ row: RowID, _ o: StoredObject) {
        if typeRowsInImage[o.entity] && Int(row) >= table.baseRows {
            addedSinceImage[o.entity].append(row)
        } else {
            addType(row, o.entity)
        }
        for k in indexesByEntity[o.entity] where built[k] {
            valueIndexes[k].add(row, o.values[valueIndexes[k].property.slot])
        }
    }

    private func addType(_ row: RowID, _ e: Int) {
        if typeRowsInImage[e] { readTypeRows(e) }
        if let last = typeRows[e].last, last > row {
            typeRows[e].insert(row, at: insertionPoint(typeRows[e], row))
        } else {
            typeRows[e].append(row)
        }
    }

    func remove(_ row: RowID, _ o: StoredObject) {
        removeType(row, o.entity)
        for k in indexesByEntity[o.entity] where built[k] {
            valueIndexes[k].remove(row, o.values[valueIndexes[k].property.slot])
        }
    }

    /// Takes a row out of its type's rows alone: the value indexes are
    /// built later, from the table (an open that takes a journal's deletes).
    func removeType(_ row: RowID, _ entity: Int) {
        if typeRowsInImage[entity] {
            if let i = addedSinceImage[entity].firstIndex(of: row) {
                addedSinceImage[entity].remove(at: i)
            } else {
                removedSinceImage[entity].insert(row)
            }
        } else {
            let i = insertionPoint(typeRows[entity], row)
            if i < typeRows[entity].count && typeRows[entity][i] == row { typeRows[entity].remove(at: i) }
        }
    }

    /// Moves a changed object's values; its type never changes.
    func update(_ row: RowID, old: StoredObject, new: StoredObject) {
        for k in indexesByEntity[new.entity] where built[k] {
            let slot = valueIndexes[k].property.slot
            if old.values[slot] != new.values[slot] {
                valueIndexes[k].remove(row, old.values[slot])
                valueIndexes[k].add(row, new.values[slot])
            }
        }
    }

    private func insertionPoint(_ rows: [RowID], _ row: RowID) -> Int {
        var lo = 0, hi = rows.count
        while lo < hi {
            let mid = (lo + hi) / 2
            if rows[mid] < row { lo = mid + 1 } else { hi = mid }
        }
        return lo
    }

    /// Every index agrees with a scan of the table; empty when so.
    func checkInvariants(_ table: ObjectTable) -> [String] {
        for k in valueIndexes.indices { build(k) }
        var problems: [String] = []
        var expectedTypes = Array(repeating: [RowID](), count: schema.entities.count)
        var expected = valueIndexes.map { _ in [IndexKey?: Set<RowID>]() }
        for row in table.liveRows {
            let o = table.object(at: row)!
            expectedTypes[o.entity].append(row)
            for k in indexesByEntity[o.entity] {
                expected[k][IndexKey(o.values[valueIndexes[k].property.slot]), default: []].insert(row)
            }
        }
        for e in schema.entities where expectedTypes[e.id] != rows(of: e.id) {
            problems.append("type index of \(e.name) disagrees with the table")
        }
        for (k, index) in valueIndexes.enumerated() {
            var actual: [IndexKey?: Set<RowID>] = [:]
            for (key, rows) in index.rowsByKey { actual[key] = Set(rows) }
            if !index.nullRows.isEmpty { actual[nil] = Set(index.nullRows) }
            if actual != expected[k] {
                problems.append("index \(schema.entities[index.entity].name).\(index.name) disagrees with the table")
            }
            if index.sortedKeys() != index.rowsByKey.keys.sorted() {
                problems.append("index \(schema.entities[index.entity].name).\(index.name) has stale order")
            }
        }
        return problems
    }
}
