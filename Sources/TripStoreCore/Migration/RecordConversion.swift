import TripStoreFormat

/// A migration's usual object, converted record to record: the id and the
/// values a migration keeps as they are copied byte for byte, references
/// renumbered, new slots filled from bytes encoded once. Whatever asks for
/// more (a nil that becomes a default or a refusal, a removed enum case, an
/// integer a `Double` cannot hold, a dropped value history must keep, a
/// reference to a type the new schema refuses) is left to `ObjectConversion`,
/// which decodes the object and says why.
struct RecordConversion: Sendable {
    /// Per old entity, per new slot: what to write.
    private enum Step: Sendable {
        case bytes([UInt8])
        case copy(old: Int)
        case intToDouble(old: Int)
        case nilBecomes(old: Int)
        case references(old: Int, destinations: Set<Int>?)
        case unsupported
    }

    private let steps: [[Step]?]
    private let removed: [[Int]]
    private let newEntity: [Int]
    private let oldSlotCounts: [Int]

    init(_ plan: SchemaMigration, from old: Schema) {
        let to = plan.to
        var steps: [[Step]?] = [], removed: [[Int]] = [], newEntity: [Int] = []
        for mapping in plan.mappings {
            guard let mapping else {
                steps.append(nil)
                removed.append([])
                newEntity.append(-1)
                continue
            }
            let properties = to.entities[mapping.entity].properties
            steps.append(mapping.slots.enumerated().map { k, source in
                switch source {
                case .fill(let v):
                    guard properties[k].relationship != nil else {
                        var b = RecordBuffer(capacity: 64, hugePages: false)
                        RecordWriter.attribute(v, to: &b)
                        return .bytes(Array(b.contents))
                    }
                    switch v {
                    case .null: return .bytes([RecordTag.noReference, 0, 0, 0, 0])
                    case .toMany(let l) where l.isEmpty: return .bytes([RecordTag.toMany, 0, 0, 0, 0])
                    default: return .unsupported
                    }
                case .attribute(let s, let conversion, let whenNil, _):
                    var nilBecomesSomething = false
                    if case .becomes = whenNil { nilBecomesSomething = true }
                    switch conversion {
                    case .none: return nilBecomesSomething ? .nilBecomes(old: s) : .copy(old: s)
                    case .intToDouble: return nilBecomesSomething ? .unsupported : .intToDouble(old: s)
                    case .removedCases: return .unsupported
                    }
                case .references(let s, let destinations, _):
                    return .references(old: s, destinations: destinations)
                }
            })
            removed.append(mapping.removed.map(\.slot))
            newEntity.append(mapping.entity)
        }
        self.steps = steps
        self.removed = removed
        self.newEntity = newEntity
        oldSlotCounts = old.entities.map(\.properties.count)
    }

    /// Appends `row`'s record in the new schema to `out` and returns its new
    /// entity, or nil (having appended nothing) where the object needs the
    /// decoding way.
    func convert(_ row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, newRow: UnsafeBufferPointer<Int32>,
                 into out: inout ObjectConversion) -> Int? {
        guard let e = table.entity(at: row), e < steps.count, let steps = steps[e] else { return nil }
        let record = table.record(row)
        let first = RecordReader.firstSlot(record)
        // Where each old slot starts (records are short: a few dozen slots at most).
        return withUnsafeTemporaryAllocation(of: UnsafeRawPointer.self, capacity: oldSlotCounts[e] + 1) { slots in
            var p = first
            for k in 0..<oldSlotCounts[e] {
                slots[k] = p
                p = RecordReader.skip(p)
            }
            slots[oldSlotCounts[e]] = p
            for s in removed[e] {
                switch slots[s].load(as: UInt8.self) {
                case RecordTag.null, RecordTag.noReference: continue
                case RecordTag.toMany where lists[RecordReader.listNumber(slots[s]) ?? 0].isEmpty: continue
                default: return nil
                }
            }
            let start = out.recordBytes.count, fixStart = out.listFixes.count, elementStart = out.listElements.count
            func undo() -> Int? {
                out.recordBytes.removeSubrange(start...)
                out.listFixes.removeSubrange(fixStart...)
                out.listElements.removeSubrange(elementStart...)
                return nil
            }
            func raw(_ from: UnsafeRawPointer, _ to: UnsafeRawPointer) {
                out.recordBytes.append(contentsOf: UnsafeRawBufferPointer(start: from, count: to - from))
            }
            func reference(_ tag: UInt8, _ n: Int32) {
                out.recordBytes.append(tag)
                withUnsafeBytes(of: n.littleEndian) { out.recordBytes.append(contentsOf: $0) }
            }
            func allowed(_ target: RowID, _ destinations: Set<Int>?) -> Bool {
                guard let destinations else { return true }
                guard let te = table.entity(at: target), te < newEntity.count, newEntity[te] >= 0 else { return false }
                return destinations.contains(newEntity[te])
            }
            func renumbered(_ t: RowID) -> RowID { Int(t) >= 0 && Int(t) < newRow.count ? newRow[Int(t)] : -1 }
            raw(record, first)
            for step in steps {
                switch step {
                case .bytes(let b):
                    out.recordBytes.append(contentsOf: b)
                case .copy(let s):
                    raw(slots[s], slots[s + 1])
                case .nilBecomes(let s):
                    guard slots[s].load(as: UInt8.self) != RecordTag.null else { return undo() }
                    raw(slots[s], slots[s + 1])
                case .intToDouble(let s):
                    guard slots[s].load(as: UInt8.self) == RecordTag.int else {
                        raw(slots[s], slots[s + 1])
                        continue
                    }
                    let i = Int64(littleEndian: (slots[s] + 1).loadUnaligned(as: Int64.self))
                    let d = Double(i)
                    guard Int64(exactly: d) == i else { return undo() }
                    out.recordBytes.append(RecordTag.double)
                    withUnsafeBytes(of: d.bitPattern.littleEndian) { out.recordBytes.append(contentsOf: $0) }
                case .references(let s, let destinations):
                    let p = slots[s]
                    switch p.load(as: UInt8.self) {
                    case RecordTag.toOne:
                        let t = Int32(littleEndian: (p + 1).loadUnaligned(as: Int32.self))
                        guard allowed(t, destinations) else { return undo() }
                        reference(RecordTag.toOne, renumbered(t))
                    case RecordTag.toMany:
                        let targets = lists[RecordReader.listNumber(p) ?? 0]
                        for t in targets where !allowed(t, destinations) { return undo() }
                        out.listFixes.append(.init(offset: Int32(out.recordBytes.count - start),
                                                   elements: Int32(out.listElements.count)..<Int32(out.listElements.count + targets.count)))
                        for t in targets { out.listElements.append(renumbered(t)) }
                        reference(RecordTag.toMany, 0)
                    default:
                        reference(RecordTag.noReference, 0)
                    }
                case .unsupported:
                    return undo()
                }
            }
            out.converted.append(.init(entity: Int16(newEntity[e]), bytes: Int32(start)..<Int32(out.recordBytes.count),
                                       fixes: Int32(fixStart)..<Int32(out.listFixes.count)))
            return newEntity[e]
        }
    }
}
