import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// The bulk path of an import: a big input into a store that has never
/// held an object goes in as opening a snapshot loads one, not as a
/// staged transaction. `EnvelopeImporter` chooses between the two paths.
public struct BulkImporter {
    let store: Store

    /// The bulk importer of an open store.
    public init(_ store: Store) { self.store = store }

    /// Imports a big input into an empty store as opening a snapshot loads
    /// one: envelopes are decoded straight into records on every core, sorted
    /// by id, linked through an id hash, and committed as a new snapshot
    /// (an import of `snapshotCommitChanges` objects or more is committed so
    /// anyway). The result is the one `stage` and `commit` give: the same
    /// objects, relationships, list orders and history.
    ///
    /// Returns nil, with nothing changed, where it does not apply: a store
    /// that holds objects, a smaller input, or anything in the input it does
    /// not read or that `stage` would refuse or reconcile (an error of any
    /// kind, a duplicate id, links that disagree). The caller then imports
    /// the usual way, which words any error exactly. When it does apply,
    /// `input` is emptied as soon as it has been read, before the snapshot
    /// is written, so that its memory is not held twice.
    /// - Throws: as `commit` when writing the snapshot fails (the store must then be opened again).
    public func insert(_ input: inout [UInt8], author: String, timestamp: Double? = nil) throws -> BulkImportResult? {
        try store.checkWritable(.bulkImport)
        guard storeIsEmpty, let plan = BulkImporter.plan(&input, schema: store.schema, options: store.options) else { return nil }
        // Every reference has its row: the input can go before the snapshot is written.
        input = []
        return try insert(plan, author: author, timestamp: timestamp)
    }

    /// Decodes, sorts and links an input for `insert(_:author:timestamp:)`
    /// without a store (so that an input it does not take leaves no trace);
    /// nil where the bulk path does not apply to the input.
    public static func plan(_ input: inout [UInt8], schema: Schema, options: StoreOptions) -> BulkImportPlan? {
        guard input.count / 16 >= options.snapshotCommitChanges, !BulkLinks.hasSelfInverse(schema),
              let chunks = input.withUnsafeBufferPointer({ BulkImportPlan.decode($0, schema: schema) }) else { return nil }
        return BulkImportPlan(chunks, schema: schema, minimum: options.snapshotCommitChanges)
    }

    /// `plan` for a file, read (or, where it is nearly all in the
    /// page cache and the process allows it, mapped: see `MappedInput`) and
    /// decoded a window at a time: the input is never held whole, only its
    /// records. Nil, with `identity` set
    /// when the file was read, where the bulk path does not apply; the caller
    /// then reads the file whole, and can tell from `identity` whether it is
    /// still what was read here.
    /// - Throws: `IOError` when the file cannot be opened or read.
    public static func plan(file path: String, schema: Schema, options: StoreOptions,
                                      identity: inout FileIdentity?) throws -> BulkImportPlan? {
        try plan(file: path, schema: schema, options: options, identity: &identity, window: bulkImportWindow)
    }

    /// `plan(file:schema:options:identity:)`, reading `window` bytes at a time.
    package static func plan(file path: String, schema: Schema, options: StoreOptions, identity: inout FileIdentity?,
                                       window: Int) throws -> BulkImportPlan? {
        let fd = try FileIO.openRegular(path)
        defer { FileIO.close(fd) }
        let size = try FileIO.size(fd, path: path)
        guard size / 16 >= options.snapshotCommitChanges, !BulkLinks.hasSelfInverse(schema) else { return nil }
        // A file written while it is read would give a mix of two files: it must be the same at the end.
        let opened = FileIdentity.of(fd)
        var chunks: [ImportRecordDecoder.Chunk] = []
        var envelopes = 0
        // The decoder reads each range as exactly one envelope, or gives up: the input may be cut at its newlines.
        let decode = { (window: UnsafeBufferPointer<UInt8>, ranges: [Range<Int>]) -> Bool in
            let decoded = ImportRecordDecoder.decodeInParallel(ranges, in: window, schema: schema)
            guard !decoded.contains(where: \.gaveUp) else {
                for c in decoded { c.discard() }
                return false
            }
            envelopes += ranges.count
            chunks += decoded
            return true
        }
        let whole: Bool
        if let mapped = MappedInput.map(fd, size: size, path: path) {
            whole = try EnvelopeWindows.forEach(mapped: mapped, window: window, guessLines: true, decode)
        } else {
            let input = StreamingFileReader(fd: fd, path: path)
            whole = try EnvelopeWindows.forEach(window: window, guessLines: true, read: { try input.read(into: $0) }, decode)
        }
        CrashPoint.grow(path, at: "input-grows-while-read")
        identity = FileIdentity.of(fd)
        guard identity == opened else {
            for c in chunks { c.discard() }
            throw ImportError.inputChanged(path: path)
        }
        Trace.mark("bulk: read, split and decode \(envelopes) envelopes")
        if CrashPoint.armed == "input-grows-after-bulk-read" {
            // As if the bulk path declined the input, which another process then wrote to.
            for c in chunks { c.discard() }
            CrashPoint.grow(path, at: "input-grows-after-bulk-read")
            return nil
        }
        // Sorting, linking and writing take about as much again as the input,
        // in arrays read and written all over: past `hugePagesFrom` they
        // outgrow what the TLB covers in 4 KB pages, and 2 MB pages then spare
        // most of the TLB misses (below it they gain nothing). They grow the
        // heap by about half the input: that much is faulted in on the
        // other core while this one sorts and links (more
        // is memory the import never uses, each page of it fresh).
        var populating: Parallel.Pending<Bool>?
        if size >= BulkImporter.populateFrom,
           let space = MemoryTuning.preferHugePagesForHeap(reserving: size, hugePages: size >= BulkImporter.hugePagesFrom) {
            populating = MemoryTuning.populateInBackground(space, byteCount: size / 2)
        }
        guard whole else {
            for c in chunks { c.discard() }
            return nil
        }
        return BulkImportPlan(chunks, schema: schema, minimum: options.snapshotCommitChanges, after: populating)
    }

    /// How much of a file a bulk import reads at a time: enough that both
    /// cores have work, little beside the records.
    static let bulkImportWindow = 32 << 20

    /// The input size from which a bulk import asks for 2 MB pages for its work arrays.
    static let hugePagesFrom = 256 << 20
    /// The input size from which a bulk import faults in the memory it will fill ahead.
    static let populateFrom = 32 << 20

    /// Whether the store in `folder` may take a bulk import, judged from its
    /// files alone (no snapshot, no journal line): planning one for a store
    /// that holds objects would be work thrown away.
    static func mayTake(_ folder: String) -> Bool {
        let files = StoreFiles(folder: folder)
        guard let listing = try? files.list(), listing.snapshots.isEmpty else { return false }
        return listing.journals.allSatisfy { (FileIO.fileSize(files.journal($0)) ?? 0) == 0 }
    }

    /// Whether this store takes the planned bulk import: it is open to write
    /// and has never held an object since it was opened, the plan has not
    /// been imported before, and it has the plan's schema.
    public func accepts(_ plan: BulkImportPlan) -> Bool {
        storeIsEmpty && !plan.spent && plan.schema.fingerprint == store.schema.fingerprint
    }

    var storeIsEmpty: Bool {
        store.state == .writing && store.lock != nil && store.table.rowCount == 0 && store.table.image == nil
    }

    /// Commits a planned bulk import; nil (nothing changed) where this store
    /// does not take it (see `accepts`).
    public func insert(_ plan: BulkImportPlan, author: String, timestamp: Double? = nil) throws -> BulkImportResult? {
        try store.checkWritable(.bulkImport)
        guard accepts(plan) else { return nil }
        let time = max(timestamp ?? Store.now(), try store.lastCommitTime() ?? -.infinity)
        let token = store.lastToken + 1
        // Never return while the plan's thread reads records a failed store may free.
        defer { _ = plan.ahead.wait() }
        // From here on the table changes: nothing gives up.
        defer { plan.releaseWorkingState() }
        var objects = plan.adopt(into: store.table)
        let n = objects.count, rowOf = objects.rowOf
        // History lists the inserts by the rows they get, the runs back to back.
        let inserted: [BulkImportResult.Inserted]
        var rows: [RowID] = []
        do {
            let runs = plan.takeRuns()
            inserted = runs.map { .init(type: store.schema.entities[$0.entity].name, count: $0.objects.count) }
            rows.reserveCapacity(n)
            for run in runs { rows += run.objects.lazy.map { rowOf[Int($0)] } }
        }
        let ahead = BulkCommitWork(history: BulkInsertHistory(token: token, timestamp: time, author: author,
                                                              runs: inserted.map { ($0.type, $0.count) }, rows: rows),
                                   ahead: plan.ahead)
        let columns = objects.inIDOrder()
        // Only `rowOf` is needed from here on: what the rest held is reused for the rows and lists.
        objects = BulkObjects()
        guard store.table.adoptRowsInIDOrder(n, entities: columns.entities, locators: columns.locators, prefixes: columns.prefixes) == nil else {
            let e = StoreError.damaged(file: store.files.folder, line: nil, detail: "the imported objects could not be ordered by id; open the store again",
                                     repairable: false)
            store.markBroken(by: e)
            throw e
        }
        for row in 0..<n { store.indexes.appendType(RowID(row), Int(columns.entities[row])) }
        Trace.mark("bulk: rows in id order")
        plan.links.fill(store.table, rowOf: rowOf)
        Trace.mark("bulk: fill lists")
        // The snapshot's encoders can use what decoding and linking held.
        plan.releaseWorkingState()
        store.table.oneWay.reset()
        store.indexes.rebuildValueIndexes()
        Trace.mark("bulk: add and link \(store.table.count) objects")

        store.lastToken = token
        do {
            try store.compact(tableIsChecked: true, bulk: ahead)
        } catch {
            // Nothing was committed: a new store's folder can still go (see `StoreFiles.removeIfUnused`).
            store.lastToken = token - 1
            store.markBroken(by: error)
            throw error
        }
        return BulkImportResult(token: token, timestamp: time, author: author, inserted: inserted)
    }

    /// Each envelope's byte range: the elements of a top-level array, or the
    /// lines of JSON Lines (a byte-order mark skipped); nil when the input is neither.
    static func envelopeRanges(_ buf: UnsafeBufferPointer<UInt8>) -> [Range<Int>]? {
        var start = 0
        if buf.count >= 3 && buf[0] == 0xEF && buf[1] == 0xBB && buf[2] == 0xBF { start = 3 }
        var r = JSONReader(buffer: buf, start: start)
        guard let first = r.peekByte() else { return nil }
        if first == UInt8(ascii: "[") { return ArrayElements.split(buf, openingAt: r.index) }
        var lines: [Range<Int>] = []
        lines.reserveCapacity(buf.count / 200)
        JSONLines.forEachLine(in: UnsafeBufferPointer(rebasing: buf[start...])) { _, range, _ in
            lines.append((range.lowerBound + start)..<(range.upperBound + start))
        }
        return lines
    }
}

/// A bulk import decoded, sorted and linked, not yet in a store: its
/// records are freed with it unless a store's table adopts them.
public final class BulkImportPlan {
    private var chunks: [ImportRecordDecoder.Chunk]
    let schema: Schema
    private(set) var objects: BulkObjects
    private(set) var links: BulkLinks
    /// Whether a table took the records: a plan is imported once.
    private(set) var spent = false

    /// The input's envelopes as records; nil where the decoder gives up.
    static func decode(_ input: UnsafeBufferPointer<UInt8>, schema: Schema) -> [ImportRecordDecoder.Chunk]? {
        guard let envelopes = BulkImporter.envelopeRanges(input) else { return nil }
        Trace.mark("bulk: split \(envelopes.count) envelopes")
        let chunks = ImportRecordDecoder.decodeInParallel(envelopes, in: input, schema: schema)
        Trace.mark("bulk: decode into records")
        guard !chunks.contains(where: \.gaveUp) else {
            for c in chunks { c.discard() }
            return nil
        }
        return chunks
    }

    /// The inserts as history lists them (see `BulkObjects.insertRuns`).
    private var runs: [(entity: Int, objects: [Int32])]
    /// What the commit needs that the records alone decide, made on a thread
    /// of its own from the sort on: linking (and then filling the table) has
    /// the other core idle, and the snapshot's encoders would otherwise share
    /// both with this work.
    let ahead: Parallel.Pending<BulkWorkAhead>

    /// Sorts and links decoded records (which it owns from here on); nil
    /// where the bulk path does not apply (see `BulkImporter.insert`) or there
    /// are fewer than `minimum` objects. The work ahead starts once `after`
    /// is done: memory being faulted in for the steps that follow the sort
    /// has the idle core first, or they fault it in themselves.
    init?(_ chunks: [ImportRecordDecoder.Chunk], schema: Schema, minimum: Int, after: Parallel.Pending<Bool>? = nil) {
        guard let objects = BulkObjects(chunks), objects.count >= max(1, minimum) else {
            for c in chunks { c.discard() }
            return nil
        }
        Trace.mark("bulk: sort \(objects.count) ids")
        let runs = objects.insertRuns(schema)
        let ahead = BulkWorkAhead.start(objects, schema: schema, after: after)
        guard let links = BulkLinks(schema: schema, objects: objects, chunks: chunks) else {
            // Never free records that thread reads.
            _ = ahead.wait()
            for c in chunks { c.discard() }
            return nil
        }
        Trace.mark("bulk: resolve and check links")
        self.chunks = chunks
        self.schema = schema
        self.objects = objects
        self.links = links
        self.runs = runs
        self.ahead = ahead
    }

    /// Whether history would list the plan's inserts as `changes` lists
    /// them: the same types and ids in the same order.
    func lists(_ changes: [Change]) -> Bool {
        guard changes.count == objects.count else { return false }
        var k = 0
        for run in runs {
            let type = schema.entities[run.entity].name
            for g in run.objects {
                let c = changes[k]
                k += 1
                guard c.type == type, RecordReader.withID(objects.records[Int(g)], { c.id.utf8.elementsEqual($0) }) else { return false }
            }
        }
        return k == changes.count
    }

    /// The runs, which the plan no longer holds (their memory goes once the commit has listed their rows).
    func takeRuns() -> [(entity: Int, objects: [Int32])] {
        defer { runs = [] }
        return runs
    }

    /// Hands the records to the table's arena; the objects with their
    /// locators, which the plan no longer holds (nor the chunks' bookkeeping,
    /// which the links do not need), so that their memory goes as soon as the
    /// caller is done with them.
    func adopt(into table: ObjectTable) -> BulkObjects {
        spent = true
        objects.adopt(&chunks, into: table)
        chunks = []
        defer { objects = BulkObjects() }
        return objects
    }

    /// Frees the decoded chunks' bookkeeping, the objects' order and the
    /// links once a table holds the records and lists: the plan is spent.
    func releaseWorkingState() {
        // Records no table took are freed here: never under the thread that reads them.
        if chunks.contains(where: { $0.base != nil }) { _ = ahead.wait() }
        for c in chunks { c.discard() }
        chunks = []
        objects = BulkObjects()
        links = BulkLinks()
    }

    deinit {
        _ = ahead.wait()
        for c in chunks { c.discard() }
    }
}

/// The decoded objects of a bulk import in input order (`g`), and their order by id.
struct BulkObjects {
    var count: Int { entities.count }
    /// Per object: its entity, where its record is, and (once adopted) its locator.
    var entities: [Int16] = []
    var records: [UnsafeMutableRawPointer] = []
    var locators: [Int64] = []
    /// Per chunk, its first object.
    var firstObject: [Int] = []
    /// Objects by id; `rowOf[g]` is the row an object gets.
    var sorted: [Int32] = []
    var rowOf: [RowID] = []
    /// The first eight bytes of each id in `sorted`, as `ObjectTable.prefix` gives them.
    var sortedPrefixes: [UInt64] = []

    /// No objects (a spent plan's).
    init() {}

    /// Nil when two objects share an id.
    init?(_ chunks: [ImportRecordDecoder.Chunk]) {
        let n = chunks.reduce(0) { $0 + $1.entities.count }
        entities.reserveCapacity(n)
        records.reserveCapacity(n)
        for c in chunks {
            firstObject.append(entities.count)
            entities.append(contentsOf: c.entities)
            guard let base = c.base else { continue }
            for o in c.offsets { records.append(base + o) }
        }
        guard records.count == n, n < Int(Int32.max) else { return nil }
        let records = RecordPointers(records: self.records)
        // Each core sorts half the ids by their first eight bytes (then all
        // of them), and one merge makes the order and finds any id twice.
        let parts = n >= 1 << 16 ? 2 : 1
        let halves = Parallel.map(parts) { k in
            BulkObjects.sortedByID(Parallel.ranges(n, parts: parts)[k].map { g in (prefix: records.idPrefix(g), g: Int32(g)) },
                                   records: records)
        }
        var order: [Int32] = [], prefixes: [UInt64] = []
        order.reserveCapacity(n)
        prefixes.reserveCapacity(n)
        var last: (prefix: UInt64, g: Int32)?
        var i = 0, j = 0
        let a = halves[0], b = parts == 2 ? halves[1] : []
        while i < a.count || j < b.count {
            let next: (prefix: UInt64, g: Int32)
            if j >= b.count || (i < a.count && (a[i].prefix != b[j].prefix ? a[i].prefix < b[j].prefix
                                                : !records.idLess(Int(b[j].g), Int(a[i].g)))) {
                next = a[i]
                i += 1
            } else {
                next = b[j]
                j += 1
            }
            if let last, last.prefix == next.prefix, !records.idLess(Int(last.g), Int(next.g)) { return nil }
            order.append(next.g)
            prefixes.append(next.prefix)
            last = next
        }
        sorted = order
        sortedPrefixes = prefixes
        rowOf = Array(repeating: 0, count: n)
        for (row, g) in sorted.enumerated() { rowOf[Int(g)] = RowID(row) }
    }

    /// `keyed` in id order: a radix sort on the prefixes, then each run of
    /// equal prefixes by the whole id. Past `msdFrom` keys, one pass first
    /// deals them out by their top 16 bits, and each of those buckets (a
    /// small share of the keys for random ids) is sorted by the rest while it
    /// is in the cache; eight passes over the whole array each wrote to 256 places
    /// at once, a TLB miss per key once the array is larger than the TLB covers.
    static func sortedByID(_ keyed: consuming [(prefix: UInt64, g: Int32)], records: RecordPointers) -> [(prefix: UInt64, g: Int32)] {
        let n = keyed.count
        var a = consume keyed
        // Scratch: every element is written before it is read (none at
        // all for 0, which would write to the empty array threads share).
        var b = n == 0 ? [] : [(prefix: UInt64, g: Int32)](unsafeUninitializedCapacity: n) { _, count in count = n }
        a.withUnsafeMutableBufferPointer { a in
            b.withUnsafeMutableBufferPointer { b in
                guard n >= msdFrom else {
                    if RadixSort.byKey(a, scratch: b, bits: 64) { _ = a.update(fromContentsOf: b) }
                    return
                }
                // Bucket starts by the top 16 bits, then the keys dealt out into `b`.
                var starts = [Int](repeating: 0, count: (1 << 16) + 1)
                starts.withUnsafeMutableBufferPointer { starts in
                    for e in a { starts[Int(e.prefix >> 48) + 1] += 1 }
                    for d in 0..<(1 << 16) { starts[d + 1] += starts[d] }
                    var next = Array(starts[0..<(1 << 16)])
                    next.withUnsafeMutableBufferPointer { next in
                        for e in a {
                            let d = Int(e.prefix >> 48)
                            b[next[d]] = e
                            next[d] += 1
                        }
                    }
                    // Each bucket by the lower 48 bits, back into `a`.
                    for d in 0..<(1 << 16) where starts[d + 1] > starts[d] {
                        let range = starts[d]..<starts[d + 1]
                        let from = UnsafeMutableBufferPointer(rebasing: b[range]), to = UnsafeMutableBufferPointer(rebasing: a[range])
                        if !RadixSort.byKey(from, scratch: to, bits: 48) { _ = to.update(fromContentsOf: from) }
                    }
                }
            }
        }
        a.withUnsafeMutableBufferPointer { s in
            var i = 0
            while i < n {
                var j = i + 1
                while j < n && s[j].prefix == s[i].prefix { j += 1 }
                if j - i > 1 {
                    var run = UnsafeMutableBufferPointer(rebasing: s[i..<j])
                    run.sort { x, y in records.idLess(Int(x.g), Int(y.g)) }
                }
                i = j
            }
        }
        return a
    }

    /// How many keys `sortedByID` takes before it first deals them out by their top bits.
    static let msdFrom = 1 << 15

    /// Each object's entity, locator and id prefix in id order, in memory
    /// the caller owns (a table adopts it). The objects are in input order,
    /// so every read is a miss: they are loaded well ahead.
    func inIDOrder() -> (entities: UnsafeMutablePointer<Int16>, locators: UnsafeMutablePointer<Int64>, prefixes: UnsafeMutablePointer<UInt64>) {
        let n = sorted.count
        let byID = (UnsafeMutablePointer<Int16>.allocate(capacity: max(1, n)), UnsafeMutablePointer<Int64>.allocate(capacity: max(1, n)),
                    UnsafeMutablePointer<UInt64>.allocate(capacity: max(1, n)))
        sorted.withUnsafeBufferPointer { order in
            entities.withUnsafeBufferPointer { entities in
                locators.withUnsafeBufferPointer { locators in
                    for i in 0..<n {
                        if i + 16 < n {
                            let ahead = Int(order[i + 16])
                            Prefetch.read(entities.baseAddress! + ahead)
                            Prefetch.read(locators.baseAddress! + ahead)
                        }
                        let g = Int(order[i])
                        byID.0[i] = entities[g]
                        byID.1[i] = locators[g]
                        byID.2[i] = sortedPrefixes[i]
                    }
                }
            }
        }
        return byID
    }

    /// Hands the chunks' records to the table's arena and notes each object's locator.
    mutating func adopt(_ chunks: inout [ImportRecordDecoder.Chunk], into table: ObjectTable) {
        locators = Array(repeating: 0, count: count)
        for (k, c) in chunks.enumerated() {
            guard let base = c.base else { continue }
            let block = table.arena.adopt(base: base, count: c.byteCount)
            for (i, offset) in c.offsets.enumerated() { locators[firstObject[k] + i] = block | Int64(offset) }
            chunks[k].base = nil
        }
    }

    /// The inserts as history lists them (as `TransactionBuilder.insertOrder`):
    /// types in the order they first appear, each type's objects in input order.
    func insertRuns(_ schema: Schema) -> [(entity: Int, objects: [Int32])] {
        var byEntity = Array(repeating: [Int32](), count: schema.entities.count)
        var firstSeen: [Int] = []
        for (g, e) in entities.enumerated() {
            if byEntity[Int(e)].isEmpty { firstSeen.append(Int(e)) }
            byEntity[Int(e)].append(Int32(g))
        }
        return firstSeen.map { ($0, byEntity[$0]) }
    }
}

/// The decoded records of a bulk import, for the cores that sort their ids.
struct RecordPointers: @unchecked Sendable {
    let records: [UnsafeMutableRawPointer]
    @inline(__always) func idPrefix(_ g: Int) -> UInt64 { RecordReader.idPrefix(records[g]) }
    /// Whether object `a`'s id sorts before object `b`'s.
    @inline(__always) func idLess(_ a: Int, _ b: Int) -> Bool { RecordReader.idLess(records[a], records[b]) }
}

/// What a bulk import committed.
public struct BulkImportResult: Sendable, Equatable {
    /// How many objects of one type it inserted.
    public struct Inserted: Sendable, Equatable {
        public let type: String
        public let count: Int
    }

    /// The transaction's token.
    public let token: Int64
    /// Its commit time, seconds since 2001-01-01T00:00:00Z.
    public let timestamp: Double
    public let author: String
    /// Per type, in the order history lists them (the order types first appear in the input).
    public let inserted: [Inserted]
}
