import TripStoreFormat
import TripStoreJSON

/// A migration's usual object, converted record to record: the id and the
/// values a migration keeps as they are copied byte for byte, references
/// renumbered, new slots filled from bytes encoded once. Whatever asks for
/// more (a nil that becomes a default or a refusal, a removed enum case, an
/// integer a `Double` cannot hold, a dropped relationship that held
/// something, a reference to a type the new schema refuses) is left to
/// `ObjectConversion`, which decodes the object and says why. A dropped
/// attribute's value is decoded here, for history to keep.
struct RecordConversion: Sendable {
    /// Per new slot: what to write. Plain values (no reference counts to
    /// touch per object): bytes are a range of `fills`, destinations a row of `allowedTypes`.
    private enum Step: Sendable {
        case bytes(Int32, Int32)
        case copy(old: Int)
        case intToDouble(old: Int)
        case nilBecomes(old: Int)
        /// `destinations`: -1 for any type, else the row of `allowedTypes` to look in.
        case references(old: Int, destinations: Int)
        case unsupported
    }

    /// Per old entity: its steps (a range of `steps`) and the new entity (-1: removed).
    private let entities: [(steps: Range<Int>, newEntity: Int, removed: Range<Int>)]
    private let steps: [Step]
    private let removedSlots: [(slot: Int, name: String)]
    private let old: Schema
    private let fills: [UInt8]
    /// `allowedTypes[d * oldEntityCount + e]`: whether a target of old entity `e` may stay in a slot with destinations `d`.
    private let allowedTypes: [Bool]
    private let oldSlotCounts: [Int]

    init(_ plan: SchemaMigration, from old: Schema) {
        let to = plan.to
        var entities: [(steps: Range<Int>, newEntity: Int, removed: Range<Int>)] = []
        self.old = old
        var steps: [Step] = [], removedSlots: [(slot: Int, name: String)] = [], fills: [UInt8] = [], allowedTypes: [Bool] = []
        let newEntityOf = plan.mappings.map { $0?.entity ?? -1 }
        func fill(_ b: some Collection<UInt8>) -> Step {
            defer { fills.append(contentsOf: b) }
            return .bytes(Int32(fills.count), Int32(fills.count + b.count))
        }
        for mapping in plan.mappings {
            guard let mapping else {
                entities.append((0..<0, -1, 0..<0))
                continue
            }
            let properties = to.entities[mapping.entity].properties
            let first = steps.count, firstRemoved = removedSlots.count
            steps += mapping.slots.enumerated().map { k, source -> Step in
                switch source {
                case .fill(let v):
                    guard properties[k].relationship != nil else {
                        var b = RecordBuffer(capacity: 64, hugePages: false)
                        RecordWriter.attribute(v, to: &b)
                        return fill(b.contents)
                    }
                    switch v {
                    case .null: return fill([RecordTag.noReference, 0, 0, 0, 0])
                    case .toMany(let l) where l.isEmpty: return fill([RecordTag.toMany, 0, 0, 0, 0])
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
                    guard let destinations else { return .references(old: s, destinations: -1) }
                    let row = allowedTypes.count / max(1, newEntityOf.count)
                    allowedTypes += newEntityOf.map { $0 >= 0 && destinations.contains($0) }
                    return .references(old: s, destinations: row)
                }
            }
            removedSlots += mapping.removed
            entities.append((first..<steps.count, mapping.entity, firstRemoved..<removedSlots.count))
        }
        self.entities = entities
        self.steps = steps
        self.removedSlots = removedSlots
        self.fills = fills
        self.allowedTypes = allowedTypes
        oldSlotCounts = old.entities.map(\.properties.count)
    }

    /// Appends `row`'s record in the new schema to `out` and returns its new
    /// entity, or nil (having appended nothing) where the object needs the
    /// decoding way.
    func convert(_ row: RowID, table: ObjectTable.ReadView, lists: FlatLists.View, newRow: UnsafeBufferPointer<Int32>,
                 into out: inout ObjectConversion) -> Int? {
        guard let e = table.entity(at: row), e < entities.count, entities[e].newEntity >= 0 else { return nil }
        let (stepRange, newEntity, removed) = entities[e]
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
            var kept: [JSONMember] = []
            for (s, name) in removedSlots[removed] {
                switch slots[s].load(as: UInt8.self) {
                case RecordTag.null, RecordTag.noReference: continue
                case RecordTag.toMany where lists[RecordReader.listNumber(slots[s]) ?? 0].isEmpty: continue
                case RecordTag.toOne, RecordTag.toMany: return nil
                default:
                    let property = old.entities[e].properties[s]
                    kept.append(JSONMember(name, EnvelopeEncoder.jsonValue(RecordReader.value(slots[s], lists: table.lists), of: property,
                                                                           schema: old, lookup: table)))
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
            func allowed(_ target: RowID, _ destinations: Int) -> Bool {
                guard destinations >= 0 else { return true }
                guard let te = table.entity(at: target), te < entities.count else { return false }
                return allowedTypes[destinations * entities.count + te]
            }
            func renumbered(_ t: RowID) -> RowID { Int(t) >= 0 && Int(t) < newRow.count ? newRow[Int(t)] : -1 }
            raw(record, first)
            for k in stepRange {
                switch steps[k] {
                case .bytes(let from, let to):
                    out.recordBytes.append(contentsOf: fills[Int(from)..<Int(to)])
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
            if !kept.isEmpty { out.oldValues.append(JSONMember(RecordReader.idString(record), .object(kept))) }
            out.converted.append(.init(entity: Int16(newEntity), bytes: Int32(start)..<Int32(out.recordBytes.count),
                                       fixes: Int32(fixStart)..<Int32(out.listFixes.count)))
            return newEntity
        }
    }
}
