import Foundation
import TripStoreFormat
import TripStoreSystem

/// What an image holds for a run of rows in its order (whole groups of
/// rows): their columns, their records with relationship slots renumbered,
/// and the lists they refer to. Made by whichever thread reads those records
/// anyway (a snapshot's encoders, while each record is in the cache), and
/// taken in order by the image's writer (`ObjectTable.writeImage`), which
/// gives the lists their numbers and checksums the groups.
final class ImageBlock: @unchecked Sendable {
    /// The first row (in the image's order) and how many.
    let first: Int
    let count: Int
    let entities: [Int16]
    /// Each record's offset from the start of its group of rows.
    let offsets: [UInt32]
    let prefixes: [UInt64]
    /// Per group of rows, where its records end in `records`.
    let groupEnds: [Int]
    /// Where each list number is in `records`, in list order: written as
    /// the number within the block (from 0), to which the writer adds the
    /// number of the block's first list.
    let listSlots: [Int]
    /// Per list, where its elements end in `listElements`.
    let listEnds: [Int]
    let listElements: [Int32]
    /// False when a group's records pass 4 GB (the image then cannot be written).
    let fits: Bool
    let records: UnsafeMutableRawPointer
    let recordBytes: Int

    fileprivate init(first: Int, builder: consuming ImageBlockBuilder) {
        self.first = first
        count = builder.entities.count
        entities = builder.entities
        offsets = builder.offsets
        prefixes = builder.prefixes
        groupEnds = builder.groupEnds
        listSlots = builder.listSlots
        listEnds = builder.listEnds
        listElements = builder.listElements
        fits = builder.fits
        (records, recordBytes) = builder.records.release()
    }

    deinit { records.deallocate() }

    /// Gives the block's lists their numbers, from `firstList` on.
    func numberLists(from firstList: Int32) {
        for (k, at) in listSlots.enumerated() {
            records.storeBytes(of: (firstList + Int32(k)).littleEndian, toByteOffset: at, as: Int32.self)
        }
    }

    var recordContents: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: records, count: recordBytes) }
}

/// How rows are written into an image: shared, read only, by every thread
/// that makes `ImageBlock`s for one image.
struct ImageRowPlan: Sendable {
    /// How each slot is renumbered in an image: relationship slots hold rows
    /// and list numbers that change with the new row order.
    enum Slot: Sendable {
        case attribute
        case toOne
        /// Stored sides keep their order; derived sides are sorted, as loading the JSON makes them.
        case toMany(derived: Bool)
    }

    let order: [RowID]
    /// Every entity's slots back to back, from `firstSlot[entity]` to
    /// `firstSlot[entity + 1]` (see `Schema.flatSlotStarts`).
    let firstSlot: [Int]
    let slots: [Slot]
    /// Each row's number in the image; empty where rows keep their numbers
    /// (already in id order, as a bulk import or an open leaves them): no
    /// lookup for every reference.
    let newRow: [RowID]
    /// Rows per block: whole groups of rows.
    static let rowsPerBlock = 8192

    init(schema: Schema, order: [RowID], rowCount: Int) {
        self.order = order
        firstSlot = schema.flatSlotStarts
        slots = schema.entities.flatMap { e in
            e.properties.map { p -> Slot in
                guard let r = p.relationship else { return .attribute }
                return r.isToMany ? .toMany(derived: !r.isStoredSide) : .toOne
            }
        }
        var newRow: [RowID] = []
        if !order.elementsEqual(0..<RowID(order.count)) {
            newRow = [RowID](repeating: -1, count: rowCount)
            for (i, r) in order.enumerated() { newRow[Int(r)] = RowID(i) }
        }
        self.newRow = newRow
    }

    var blockCount: Int { (order.count + ImageRowPlan.rowsPerBlock - 1) / ImageRowPlan.rowsPerBlock }

    /// The rows (positions in `order`) of block `k`.
    func rows(ofBlock k: Int) -> Range<Int> {
        (k * ImageRowPlan.rowsPerBlock)..<min(order.count, (k + 1) * ImageRowPlan.rowsPerBlock)
    }

    /// Block `k` made in one go, its records read in order (loaded ahead).
    func block(_ k: Int, table: ObjectTable.ReadView, lists: FlatLists.View) -> ImageBlock {
        let rows = rows(ofBlock: k)
        var builder = ImageBlockBuilder(rows: rows.count)
        for i in rows {
            if i + 8 < rows.upperBound { table.prefetch(order[i + 8]) }
            builder.add(i, plan: self, table: table, lists: lists)
        }
        return builder.finish(first: rows.lowerBound)
    }
}

/// An `ImageBlock` being made, a row at a time (so that a thread that reads
/// a record for something else adds it while the record is in the cache).
struct ImageBlockBuilder: ~Copyable {
    fileprivate var entities: [Int16] = []
    fileprivate var offsets: [UInt32] = []
    fileprivate var prefixes: [UInt64] = []
    fileprivate var groupEnds: [Int] = []
    fileprivate var listSlots: [Int] = []
    fileprivate var listEnds: [Int] = []
    fileprivate var listElements: [Int32] = []
    fileprivate var fits = true
    fileprivate var records: RecordBuffer
    private var groupStart = 0

    init(rows: Int) {
        entities.reserveCapacity(rows)
        offsets.reserveCapacity(rows)
        prefixes.reserveCapacity(rows)
        records = RecordBuffer(capacity: rows * 320, hugePages: false)
    }

    /// Adds the row at position `i` of the plan's order (the rows of a
    /// block, in order, each once).
    mutating func add(_ i: Int, plan: ImageRowPlan, table: ObjectTable.ReadView, lists: FlatLists.View) {
        let r = plan.order[i], e = Int(table.entity(at: r) ?? 0)
        let slots = plan.firstSlot[e]..<plan.firstSlot[e + 1]
        entities.append(Int16(e))
        let record = table.record(r)
        let firstSlot = RecordReader.firstSlot(record)
        prefixes.append(RecordReader.idPrefix(record))
        if i & (SnapshotImage.groupSize - 1) == 0 { groupStart = records.count }
        let at = records.count
        // A group of rows whose records pass 4 GB gets no image.
        if at - groupStart > Int(UInt32.max) { fits = false }
        offsets.append(UInt32(truncatingIfNeeded: at - groupStart))
        records.bytes(UnsafeRawBufferPointer(start: record, count: RecordReader.length(record, count: slots.count)))
        // The copy has the same layout: patch its relationship slots in place.
        var value = firstSlot
        for k in slots {
            defer { value = RecordReader.skip(value) }
            let patchAt = at + (value - record) + 1
            switch plan.slots[k] {
            case .attribute: continue
            case .toOne:
                guard !plan.newRow.isEmpty, value.load(as: UInt8.self) == RecordTag.toOne else { continue }
                let target = Int32(littleEndian: (value + 1).loadUnaligned(as: Int32.self))
                records.patchInt32(plan.newRow[Int(target)], at: patchAt)
            case .toMany(let derived):
                guard let n = RecordReader.listNumber(value), n != 0 else { continue }
                records.patchInt32(Int32(listSlots.count), at: patchAt)
                listSlots.append(patchAt)
                let firstElement = listElements.count
                if plan.newRow.isEmpty {
                    listElements.append(contentsOf: lists[n])
                } else {
                    for t in lists[n] { listElements.append(plan.newRow[Int(t)]) }
                }
                if derived {
                    listElements.withUnsafeMutableBufferPointer {
                        var run = UnsafeMutableBufferPointer(rebasing: $0[firstElement...])
                        run.sort()
                    }
                }
                listEnds.append(listElements.count)
            }
        }
        if i & (SnapshotImage.groupSize - 1) == SnapshotImage.groupSize - 1 || i == plan.order.count - 1 {
            groupEnds.append(records.count)
        }
    }

    consuming func finish(first: Int) -> ImageBlock {
        ImageBlock(first: first, builder: self)
    }
}

/// Blocks handed from the thread that makes them to the image's writer, a
/// few at a time (the maker waits while that many are not yet taken).
final class ImageBlockChannel: @unchecked Sendable {
    private let state = NSCondition()
    private var queue: [ImageBlock] = []
    private var closed = false
    private let capacity: Int

    init(capacity: Int) { self.capacity = capacity }

    /// Hands a block over; dropped once the channel is closed.
    func put(_ block: ImageBlock) {
        state.lock()
        defer { state.unlock() }
        while queue.count >= capacity && !closed { state.wait() }
        guard !closed else { return }
        queue.append(block)
        state.broadcast()
    }

    /// The next block; nil once the channel is closed and empty.
    func next() -> ImageBlock? {
        state.lock()
        defer { state.unlock() }
        while queue.isEmpty && !closed { state.wait() }
        guard !queue.isEmpty else { return nil }
        state.broadcast()
        return queue.removeFirst()
    }

    /// No more blocks come (the maker is done or stopped), or none are wanted (the writer stopped).
    func close() {
        state.lock()
        closed = true
        state.broadcast()
        state.unlock()
    }
}
