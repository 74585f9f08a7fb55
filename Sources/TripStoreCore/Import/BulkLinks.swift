import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// The relationships of a bulk import, resolved to rows and checked as
/// `Store.stage` links them: each side given is set, and the other side of
/// each pair derived, in input order. Where `stage` would refuse the input or
/// reconcile disagreeing sides (a reference to nothing or of the wrong
/// type, an object listed twice, a to-one set to two objects), `init`
/// returns nil.
///
/// To-one sides are written into the records at once (they are still the
/// importer's own memory); lists wait for `fill`, once the table owns them.
struct BulkLinks {
    private struct Plan {
        var isRelationship = false
        var toMany = false
        var destination = 0
        var inverseSlot = -1
        var inverseToMany = false
    }

    /// Per chunk, each target's row.
    private var resolved: [[RowID]] = []
    /// A list given in the input: its slot, its key (`g << 16 | slot`), and its targets in `resolved`.
    private struct GivenList {
        let slot: UnsafeMutableRawPointer
        let key: Int
        let chunk: Int32, first: Int32, count: Int32
    }

    /// Lists given in the input. A big import gives very many of
    /// them: the array is reserved for every link up front (an array grown by
    /// doubling leaves each smaller copy behind as a hole of touched memory).
    private var givenLists: [GivenList] = []
    /// Objects a given list leaves out that claim to be in it, by list
    /// (`g << 16 | slot`), in input order. `stage` puts them after a given
    /// list of two or more (which it reorders), and in link order around a list of one.
    private var extras: [Int: [(row: RowID, g: Int)]] = [:]
    /// Lists whose `extras` hold the whole list.
    private var ordered = Set<Int>()
    /// Lists made of derived sides, in the order first touched.
    private var derivedSlots: [UnsafeMutableRawPointer] = []
    private var derivedLists: [[RowID]] = []
    /// Each derived list's owner (by input order).
    private var derivedOwners: [Int] = []

    /// Whether some relationship is its own inverse (the bulk path leaves those to `stage`).
    static func hasSelfInverse(_ schema: Schema) -> Bool {
        schema.entities.contains { e in
            e.properties.contains { p in
                guard let r = p.relationship, let inv = r.inverseSlot else { return false }
                let back = schema.entities[r.destination].properties[inv]
                return back.name == p.name && back.declaringEntity == p.declaringEntity
            }
        }
    }

    /// No links (a spent plan's).
    init() {}

    init?(schema: Schema, objects: BulkObjects, chunks: [ImportRecordDecoder.Chunk]) {
        // Flat tables (`plans[firstSlot[e] + slot]`, `fits[d * entityCount + e]`):
        // a nested array is retained and released at each look-up, per link and per target.
        let plans: [Plan] = schema.entities.flatMap { e in
            e.properties.map { p in
                guard let r = p.relationship else { return Plan() }
                var plan = Plan(isRelationship: true, toMany: r.isToMany, destination: r.destination)
                if let inv = r.inverseSlot, let back = schema.entities[r.destination].properties[inv].relationship {
                    plan.inverseSlot = inv
                    plan.inverseToMany = back.isToMany
                }
                return plan
            }
        }
        let firstSlot = schema.flatSlotStarts, entityCount = schema.entities.count
        let fits: [Bool] = schema.entities.flatMap { d in schema.entities.map { schema.isKind($0.id, of: d.id) } }

        // References by id, through a hash of the ids in row order.
        var referenceRows: [[RowID]] = chunks.map { _ in [] }
        if chunks.contains(where: { !$0.references.isEmpty }) {
            let hash = ObjectTable.LoadHash(objects.sortedPrefixes)
            for (k, c) in chunks.enumerated() {
                referenceRows[k].reserveCapacity(c.references.count)
                let missing = c.references.firstFailing { _, key in
                    guard let row = hash.row(key, matches: { RecordReader.idEquals(objects.records[Int(objects.sorted[Int($0)])], key) }) else {
                        return false
                    }
                    referenceRows[k].append(row)
                    return true
                }
                guard missing == nil else { return nil }
            }
        }
        /// A target's object (by input order) and the type its reference names (-1: none).
        func target(_ k: Int, _ t: Int32) -> (g: Int, type: Int) {
            if t >= 0 { return (objects.firstObject[k] + Int(t), -1) }
            let r = Int(-1 - t)
            return (Int(objects.sorted[Int(referenceRows[k][r])]), Int(chunks[k].referenceTypes[r]))
        }
        /// The last chunk whose first object is at most `g`.
        func chunk(of g: Int) -> Int {
            var low = 0, high = objects.firstObject.count - 1
            while low < high {
                let mid = (low + high + 1) / 2
                if objects.firstObject[mid] <= g { low = mid } else { high = mid - 1 }
            }
            return low
        }
        /// Whether object `g` lists `row` in the list it gives for `slot`, and how long that list is.
        var bigLists: [Int: Set<RowID>] = [:]
        func lists(_ g: Int, _ slot: Int, _ row: RowID) -> (listed: Bool, count: Int) {
            let k = chunk(of: g), i = g - objects.firstObject[k]
            let first = Int(chunks[k].firstLink[i])
            let links = chunks[k].links[first..<(first + Int(chunks[k].linkCounts[i]))]
            guard let link = links.first(where: { Int($0.slot) == slot }) else { return (false, 0) }
            let targets = chunks[k].targets[Int(link.firstTarget)..<Int(link.firstTarget + link.targetCount)]
            if targets.count <= 16 { return (targets.contains { objects.rowOf[target(k, $0).g] == row }, targets.count) }
            if let set = bigLists[g << 16 | slot] { return (set.contains(row), targets.count) }
            let set = Set(targets.map { objects.rowOf[target(k, $0).g] })
            bigLists[g << 16 | slot] = set
            return (set.contains(row), targets.count)
        }
        var derivedIndex: [Int: Int] = [:]
        givenLists.reserveCapacity(chunks.reduce(0) { $0 + $1.links.count })

        for (k, c) in chunks.enumerated() {
            var rows = [RowID](repeating: 0, count: c.targets.count)
            for i in c.entities.indices {
                // The records whose slots are set (an object's, its targets', which follow it) are
                // long out of the cache by now: their first lines are asked for a few objects ahead.
                if i + 8 < c.entities.count, let base = c.base {
                    let ahead = base + c.offsets[i + 8]
                    Prefetch.read(ahead)
                    Prefetch.read(ahead + 64)
                }
                let g = objects.firstObject[k] + i
                let row = objects.rowOf[g], entity = Int(c.entities[i])
                for l in Int(c.firstLink[i])..<Int(c.firstLink[i] + c.linkCounts[i]) {
                    let link = c.links[l]
                    let plan = plans[firstSlot[entity] + Int(link.slot)]
                    guard plan.isRelationship, let base = c.base else { return nil }
                    let first = Int(link.firstTarget), count = Int(link.targetCount)
                    for j in first..<(first + count) {
                        let (tg, type) = target(k, c.targets[j])
                        let te = Int(objects.entities[tg])
                        guard fits[plan.destination * entityCount + te], type < 0 || type == te else { return nil }
                        rows[j] = objects.rowOf[tg]
                    }
                    let slot = base + link.slotOffset
                    if plan.toMany {
                        // Through a pointer: a slice of `rows` would retain it, per list.
                        if count > 1 && rows.withUnsafeBufferPointer({ BulkLinks.hasDuplicate(UnsafeBufferPointer(rebasing: $0[first..<(first + count)])) }) {
                            return nil
                        }
                        givenLists.append(GivenList(slot: slot, key: g << 16 | Int(link.slot), chunk: Int32(k), first: Int32(first), count: Int32(count)))
                    } else {
                        guard count == 1, BulkLinks.setToOne(slot, rows[first]) else { return nil }
                    }
                    guard plan.inverseSlot >= 0 else { continue }
                    for j in first..<(first + count) {
                        let tg = target(k, c.targets[j]).g
                        let other = UnsafeMutableRawPointer(mutating: RecordReader.slot(UnsafeRawPointer(objects.records[tg]), plan.inverseSlot))
                        if !plan.inverseToMany {
                            guard BulkLinks.setToOne(other, row) else { return nil }
                        } else if other.load(as: UInt8.self) == RecordTag.noReference {
                            // The target gives its list; one that leaves this object out gets it too (see `extras`).
                            if !lists(tg, plan.inverseSlot, row).listed { extras[tg << 16 | plan.inverseSlot, default: []].append((row, g)) }
                        } else {
                            let key = tg << 16 | plan.inverseSlot
                            if let d = derivedIndex[key] {
                                derivedLists[d].append(row)
                            } else {
                                derivedIndex[key] = derivedLists.count
                                derivedSlots.append(other)
                                derivedLists.append([row])
                                derivedOwners.append(tg)
                            }
                        }
                    }
                }
            }
            resolved.append(rows)
        }
        // A list of one keeps link order: its object came in when its owner was
        // linked, or earlier, when that object named its owner itself.
        for list in givenLists where list.count == 1 {
            guard let more = extras[list.key] else { continue }
            let owner = list.key >> 16, slot = list.key & 0xFFFF
            let only = resolved[Int(list.chunk)][Int(list.first)], onlyG = Int(objects.sorted[Int(only)])
            let back = plans[firstSlot[Int(objects.entities[owner])] + slot].inverseSlot
            // Named by the owner's other side itself: listed there (an empty list given names nobody).
            let namesOwner = back >= 0 && lists(onlyG, back, objects.rowOf[owner]).listed
            let entry = namesOwner ? min(owner, onlyG) : owner
            extras[list.key] = more.filter { $0.g < entry } + [(only, entry)] + more.filter { $0.g > entry }
            ordered.insert(list.key)
        }
    }

    /// Whether a row is listed twice.
    private static func hasDuplicate(_ listed: UnsafeBufferPointer<RowID>) -> Bool {
        guard listed.count <= 16 else { return Set(listed).count != listed.count }
        for i in listed.indices where listed[..<i].contains(listed[i]) { return true }
        return false
    }

    /// Sets an empty to-one slot; true too when it already holds `row`, false when it holds another.
    private static func setToOne(_ slot: UnsafeMutableRawPointer, _ row: RowID) -> Bool {
        switch slot.load(as: UInt8.self) {
        case RecordTag.noReference:
            slot.storeBytes(of: RecordTag.toOne, as: UInt8.self)
            (slot + 1).storeBytes(of: row.littleEndian, as: Int32.self)
            return true
        case RecordTag.toOne:
            return Int32(littleEndian: (slot + 1).loadUnaligned(as: Int32.self)) == row
        default:
            return false
        }
    }

    /// Builds the lists end to end and writes their numbers into the
    /// records, which the table now owns. The numbers follow the owners'
    /// rows (`rowOf` by input order), so that the snapshot and image writers,
    /// which go through the rows in order, read the lists front to back;
    /// they are filled in input order, in which the records lie in memory.
    func fill(_ table: ObjectTable, rowOf: [RowID]) {
        let given = givenLists.count, total = given + derivedSlots.count
        func owner(_ i: Int) -> Int { Int(rowOf[i < given ? givenLists[i].key >> 16 : derivedOwners[i - given]]) }
        func slot(_ i: Int) -> UnsafeMutableRawPointer { i < given ? givenLists[i].slot : derivedSlots[i - given] }
        /// The list's targets (empty ones get the shared empty list, number 0).
        func targets<R>(_ i: Int, _ body: (Slice<UnsafeBufferPointer<RowID>>) -> R) -> R {
            guard i < given else { return derivedLists[i - given].withUnsafeBufferPointer { body($0[...]) } }
            let list = givenLists[i]
            let targets = Int(list.first)..<Int(list.first + list.count)
            if !extras.isEmpty, let more = extras[list.key] {
                let all = (ordered.contains(list.key) ? [] : Array(resolved[Int(list.chunk)][targets])) + more.map(\.row)
                return all.withUnsafeBufferPointer { body($0[...]) }
            }
            return resolved[Int(list.chunk)].withUnsafeBufferPointer { body($0[targets]) }
        }
        func isEmpty(_ i: Int) -> Bool { i < given && givenLists[i].count == 0 && (extras.isEmpty || extras[givenLists[i].key] == nil) }
        // Numbers by a counting sort on the owner row, each row's lists in the order they came; 0 is the empty list.
        var next = [Int32](repeating: 0, count: rowOf.count + 1)
        for i in 0..<total where !isEmpty(i) { next[owner(i) + 1] += 1 }
        for r in 0..<rowOf.count { next[r + 1] += next[r] }
        let listCount = 1 + Int(next[rowOf.count])
        var number = [Int32](repeating: 0, count: total)
        let starts = UnsafeMutablePointer<Int>.allocate(capacity: listCount + 1)
        starts.initialize(repeating: 0, count: listCount + 1)
        for i in 0..<total where !isEmpty(i) {
            let r = owner(i)
            let n = 1 + Int(next[r])
            next[r] += 1
            number[i] = Int32(n)
            starts[n + 1] = targets(i) { $0.count }
        }
        for n in 0..<listCount { starts[n + 1] += starts[n] }
        let elements = UnsafeMutablePointer<RowID>.allocate(capacity: max(1, starts[listCount]))
        for i in 0..<total {
            let n = Int(number[i])
            if n != 0 {
                targets(i) { list in
                    if let base = list.base.baseAddress { (elements + starts[n]).initialize(from: base + list.startIndex, count: list.count) }
                }
            }
            table.fill(slot(i), list: n)
        }
        table.lists.adopt(BuiltLists(listCount: listCount, starts: starts, elements: elements))
    }
}
