import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
import Dispatch
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Writes a store's objects and history as a new snapshot file, its image
/// beside it: the objects encoded on every core in id order, the history
/// carried over as it is where it was never read. It only reads what it is
/// given; putting the snapshot in place is the store's (`Store.install`).
struct SnapshotWriter {
    let schema: Schema
    let table: ObjectTable
    let indexes: StoreIndexes
    let files: StoreFiles
    let history: HistoryLog
    /// The snapshot's token: the last transaction it holds.
    let token: Int64
    /// The store's current image, for a damage message.
    let imagePath: String

    /// Writes the snapshot to its temporary file and flushes it, with its
    /// image written beside it on a thread of its own that reads the table
    /// until `install` or `discard` waits for it. Changes no store file and no state of the store,
    /// so a read-only store can write it too (see `BackgroundSnapshot`).
    /// `checkingSource` runs the checks of the table it is given alongside
    /// a check of the snapshot the store was opened from (see
    /// `Store.whileCheckingSnapshotChecksum`).
    /// `temporaryTag` goes into the temporary files' names, so that a
    /// compaction without the lock never writes over a writer's.
    func write(tableIsChecked: Bool, bulk: BulkCommitWork? = nil, temporaryTag: String = "",
               checkingSource: (() throws -> FlatLists) throws -> FlatLists) throws -> WrittenSnapshot {
        let path = files.snapshot(token)
        let temp = path + temporaryTag + ".tmp"
        // The snapshot's history lines not read yet are carried over as they
        // are, checksummed with the rest (decoding them would cost more than
        // the objects at a million trips, and drops nothing: a line that
        // does not read stays for `verify` to name). An old snapshot whose
        // trailer does not say when its last commit was is read instead.
        let carried = history.snapshotLastCommit == nil ? nil : history.pending
        // Never build on a snapshot that fails its checksum: opened from its
        // image, this process has not read the JSON, so it is read through
        // on a thread of its own while the table is checked, and no file is
        // made before it matched. Never drop a history line that could
        // not be read either.
        let lists = try checkingSource { () throws -> FlatLists in
            if carried == nil { _ = history.all.count }
            if let problem = history.problems.first {
                throw StoreError.damaged(file: problem.file, line: problem.line, detail: problem.detail + "; the snapshot was not rewritten", repairable: false)
            }
            // Every image group is checked before anything is read for writing
            // (a damaged one must never become a smaller snapshot), and so
            // before the workers below read the table: checking changes it.
            guard table.checkEverything() else { throw StoreError.imageDamaged(file: imagePath, detail: table.imageDamage ?? "") }
            let lists = FlatLists(table.lists)
            Trace.mark("snapshot lists")
            // Never let a table that fails its invariants become the truth on
            // disk. A commit checked the rows it changed; rows from an image
            // were never checked against each other (a forged image may hold one
            // side of a pair without the other), so those are checked here too.
            let problems = tableIsChecked && table.image == nil ? [] : table.referenceProblems(lists: lists)
            if !problems.isEmpty {
                if let image = table.image {
                    // The JSON was not read: the image is what disagrees with itself, and a run from the JSON tells.
                    image.noteDamage("relationships whose sides disagree (\(problems[0]))")
                    throw StoreError.imageDamaged(file: imagePath, detail: table.imageDamage ?? problems[0])
                }
                throw StoreError.damaged(file: files.folder, line: nil, detail: problems.joined(separator: "; ") + "; the snapshot was not written",
                                         repairable: false)
            }
            Trace.mark("snapshot invariants")
            return lists
        }
        defer { withExtendedLifetime(lists) {} }
        Trace.mark("snapshot checksum")
        // Where the history stays unread, the new file is read from later.
        let lazyHistory = bulk != nil || carried != nil
        let fd = try FileIO.createFresh(temp, lazyHistory ? O_RDWR : O_WRONLY)
        let out = StreamingFileWriter(fd: fd, path: temp)
        var closed = false
        defer {
            if !closed {
                out.waitForWrites()
                FileIO.close(fd)
                FileIO.unlink(temp)
            }
        }

        var crc: UInt32 = 0
        var buffer = JSONWriter(capacity: 1 << 20)
        func drain(_ buffer: inout JSONWriter, force: Bool) {
            guard force || buffer.bytes.count >= 1 << 20 else { return }
            crc = buffer.bytes.withUnsafeBytes { CRC32C.checksum($0, continuing: crc) }
            out.write(buffer.bytes)
            buffer.bytes.removeAll(keepingCapacity: true)
        }
        func flush(force: Bool) { drain(&buffer, force: force) }
        // With no history retained, the header still says when the last
        // commit was (see `pruneHistory`); so does it with the snapshot's
        // lines carried over unread.
        let lastCommit = bulk?.history.timestamp ?? history.lastLoadedTimestamp ?? history.snapshotLastCommit
        buffer.bytes.append(contentsOf: SnapshotFormat.header(schema: schema, token: token, objects: table.count,
                                                              oldestReachableCommit: history.oldestReachableCommit, lastCommit: lastCommit))
        Trace.mark("snapshot start")
        let rows = table.rowsSortedByID()
        Trace.mark("snapshot sort \(rows.count) rows")
        // The image is built on a thread of its own while the snapshot is
        // encoded and written (both only read the table); it is bound to the
        // snapshot file after the rename.
        let view = TableForWorker(table), indexed = IndexedProperty.of(indexes.valueIndexes)
        let imageTemp = files.image(token) + temporaryTag + ".tmp"
        // After a bulk import, the encoders copy each record into the
        // image's blocks while they have it in the cache (in id order, a
        // record is a miss each time it is read), and the image thread takes
        // the blocks in order. Its lists are each in one record (see
        // `BulkLinks.fill`), so their number is known up front; elsewhere
        // the image thread counts them in a pass of its own first, and makes
        // its blocks itself, so that the encoders never wait for it.
        let imagePlan = bulk == nil ? nil : ImageRowPlan(schema: schema, order: rows, rowCount: table.rowCount)
        let imageBlocks = ImageBlockChannel(capacity: 4)
        let image = Parallel.start {
            defer { imageBlocks.close() }
            guard let imagePlan else { return view.table.writeImage(order: rows, indexed: indexed, lists: lists, path: imageTemp) }
            return view.table.writeImage(plan: imagePlan, indexed: indexed, lists: lists, path: imageTemp, listsReferencedOnce: true,
                                         builtIndexes: { bulk?.indexes(for: indexed) }, blocks: imageBlocks.next)
        }
        // Never leave the image thread reading a table this function's caller
        // may change, nor its file behind when the snapshot is not written.
        var imageTaken = false
        defer { if !imageTaken { image.wait()?.discard() } }
        defer { imageBlocks.close() }
        // Objects are encoded (and checksummed) on every core a block at a
        // time, then written in order.
        flush(force: true)
        let blocks = SnapshotBlockEncoder.start(rows: rows, view: view, schema: schema, lists: lists.view, image: imagePlan)
        defer { blocks.finish() }
        var crashed = false, written = 0
        while let block = blocks.next() {
            if let image = block.image { imageBlocks.put(image) }
            crc = CRC32C.combine(crc, block.crc, lengthOfB: block.bytes.count)
            out.write(block.bytes.bytes)
            written += SnapshotBlockEncoder.rowsPerBlock
            if !crashed && written >= rows.count / 2 && CrashPoint.armed == "snapshot-mid-write" {
                crashed = true
                CrashPoint.hit("snapshot-mid-write")
            }
        }
        imageBlocks.close()
        Trace.mark("snapshot sort+objects")
        let historyStart = out.count + buffer.bytes.count
        // Never carry a history whose tokens go back or past the last one
        // (what `verify` reports): the carried lines' tokens are read from
        // the start of each line as the bytes go by.
        var tokens = LeadingTokens()
        if let carried {
            flush(force: true)
            try Self.read(carried.fd, path: carried.file, carried.bytes) { chunk in
                crc = CRC32C.checksum(chunk, continuing: crc)
                tokens.take(chunk)
                out.write(chunk)
            }
        }
        let encoded = carried == nil ? history.all : history.loaded
        for t in encoded { tokens.note(t.token) }
        if let bad = tokens.firstOutOfOrder ?? tokens.last.flatMap({ $0 > token ? $0 : nil }) {
            throw StoreError.damaged(file: carried?.file ?? files.folder, line: nil,
                                     detail: "history tokens are not strictly increasing up to the last token \(token) (at token \(bad)); the snapshot was not rewritten",
                                     repairable: false)
        }
        for t in encoded {
            HistoryCoding.appendCompact(t, to: &buffer.bytes, groupInserts: true, drain: { bytes in
                crc = bytes.withUnsafeBytes { CRC32C.checksum($0, continuing: crc) }
                out.write(bytes)
                bytes.removeAll(keepingCapacity: true)
            })
            buffer.bytes.append(0x0A)
            flush(force: false)
        }
        if let bulk {
            bulk.history.appendHeader(to: &buffer)
            flush(force: true)
            let blocks = bulk.history.blocks(table: view.table.readView)
            defer { blocks.finish() }
            while let block = blocks.next() {
                crc = CRC32C.combine(crc, block.crc, lengthOfB: block.bytes.count)
                out.write(block.bytes)
            }
        }
        let historyCount = history.count + (bulk == nil ? 0 : 1)
        flush(force: true)
        let bodyBytes = out.count
        buffer.bytes.append(contentsOf: SnapshotFormat.trailer(objects: table.count, history: historyCount, bodyCRC: crc))
        out.write(buffer.bytes)
        try out.finish()
        Trace.mark("snapshot history")
        try FileIO.fsync(fd, path: temp)
        // The history stays in the file, to be read from it when first used.
        let historyFD = lazyHistory ? dup(fd) : -1
        if lazyHistory && historyFD < 0 { throw IOError(operation: "dup", path: temp, code: errno) }
        FileIO.close(fd)
        closed = true
        imageTaken = true
        Trace.mark("snapshot history+fsync")
        return WrittenSnapshot(token: token, temp: temp, bytes: bodyBytes + buffer.bytes.count, crc: crc,
                               history: historyStart..<bodyBytes, historyCount: historyCount, historyFD: historyFD,
                               lastCommit: lastCommit, objects: table.count, image: image)
    }

    /// Reads `bytes` of a snapshot a few MB at a time, past the page cache
    /// where they are not cached (a snapshot is written past it, and copying
    /// a million trips' worth into it costs seconds of kernel time here).
    static func read(_ fd: Int32, path: String, _ bytes: Range<Int>, _ body: (UnsafeRawBufferPointer) -> Void) throws {
        let reader = StreamingFileReader(fd: fd, path: path, from: bytes.lowerBound)
        var chunk = [UInt8](repeating: 0, count: min(bytes.count, 8 << 20))
        var at = bytes.lowerBound
        while at < bytes.upperBound {
            let want = min(chunk.count, bytes.upperBound - at)
            let got = try chunk.withUnsafeMutableBytes { try reader.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want])) }
            guard got == want else {
                throw StoreError.damaged(file: path, line: nil, detail: "the snapshot could not be read to its end; it was not rewritten", repairable: false)
            }
            chunk.withUnsafeBytes { body(UnsafeRawBufferPointer(rebasing: $0[0..<got])) }
            at += got
        }
    }
}

/// Encodes the snapshot's object lines on every core, a block of rows at a
/// time, ahead of the writer (see `compact`).
private enum SnapshotBlockEncoder {
    /// Blocks small enough that the few made ahead cost little memory beside
    /// the table; the image's blocks of rows, each made with the same rows.
    static let rowsPerBlock = ImageRowPlan.rowsPerBlock
    /// The most targets of one row whose records are loaded ahead.
    static let targetsNoted = 32

    /// Each block's lines, their checksum and (with an `image` plan) the image's block of the same rows, in order, from `next()`.
    static func start(rows: [RowID], view: TableForWorker, schema: Schema, lists: FlatLists.View,
                      image: ImageRowPlan?) -> OrderedWork<(bytes: OwnedBytes, crc: UInt32, image: ImageBlock?)> {
        let blocks = (rows.count + rowsPerBlock - 1) / rowsPerBlock
        return OrderedWork(count: blocks, ahead: 4) {
            // A private copy of the schema per core, so the cores share no reference counts.
            let encoder = RecordEnvelopeWriter(schema: schema.privateCopy())
            let table = view.table.readView
            return { k in
                let range = (k * rowsPerBlock)..<min(rows.count, (k + 1) * rowsPerBlock)
                var w = ByteOutput(capacity: range.count * 400)
                var scratch = JSONWriter()
                var imageBlock = image.map { _ in ImageBlockBuilder(rows: range.count) }
                // Rows in id order reach records all over the arena: start
                // loading a row's record, then the columns of the rows it
                // refers to, then their records, ahead of it (the targets
                // noted in a ring of the last eight rows' worth).
                withUnsafeTemporaryAllocation(of: RowID.self, capacity: 8 * targetsNoted) { ring in
                    var noted = (0, 0, 0, 0, 0, 0, 0, 0)
                    withUnsafeMutableBytes(of: &noted) { noted in
                        let counts = noted.bindMemory(to: Int.self)
                        for i in range {
                            if i + 12 < range.upperBound { table.prefetch(rows[i + 12]) }
                            if i + 8 < range.upperBound {
                                counts[(i + 8) & 7] = encoder.prefetchTargets(of: rows[i + 8], table: table, lists: lists,
                                                                               into: ring.baseAddress! + ((i + 8) & 7) * targetsNoted, capacity: targetsNoted)
                            }
                            if i + 4 < range.upperBound && i + 4 >= range.lowerBound + 8 {
                                let at = ring.baseAddress! + ((i + 4) & 7) * targetsNoted
                                for k in 0..<counts[(i + 4) & 7] { table.prefetch(at[k]) }
                            }
                            encoder.write(row: rows[i], table: table, lists: lists, to: &w, scratch: &scratch)
                            w.append(0x0A)
                            if let image { imageBlock?.add(i, plan: image, table: table, lists: lists) }
                        }
                    }
                }
                let crc = CRC32C.checksum(w.bytes)
                return (w.finish(), crc, imageBlock?.finish(first: range.lowerBound))
            }
        }
    }
}

/// The table handed to the image thread, which only reads it while
/// `compact` encodes the snapshot (also only reading it) and waits for it
/// before returning.
private struct TableForWorker: @unchecked Sendable {
    let table: ObjectTable
    init(_ table: ObjectTable) { self.table = table }
}

/// The tokens at the start of history lines (`{"token":N,…`) in bytes that
/// come a chunk at a time, and the first that does not come after the one
/// before it. A line in another form is passed over (it is carried as it is).
struct LeadingTokens {
    private(set) var last: Int64?
    private(set) var firstOutOfOrder: Int64?
    private var prefix: [UInt8] = []
    private var inPrefix = true

    mutating func note(_ token: Int64) {
        if let last, token <= last, firstOutOfOrder == nil { firstOutOfOrder = token }
        last = token
    }

    mutating func take(_ chunk: UnsafeRawBufferPointer) {
        guard let base = chunk.baseAddress else { return }
        var i = 0
        while i < chunk.count {
            if inPrefix {
                let b = chunk[i]
                i += 1
                if b != 0x0A { prefix.append(b) }
                if b == 0x0A || prefix.count >= 32 {
                    if let t = prefix.withUnsafeBufferPointer({ Store.leadingToken($0) }) { note(t) }
                    prefix.removeAll(keepingCapacity: true)
                    inPrefix = b == 0x0A
                }
                continue
            }
            guard let nl = memchr(base + i, 0x0A, chunk.count - i) else { return }
            i = UnsafeRawPointer(nl) - base + 1
            inPrefix = true
        }
    }
}
