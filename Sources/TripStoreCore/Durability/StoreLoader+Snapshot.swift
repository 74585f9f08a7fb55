import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension StoreLoader {
    /// Loads a snapshot into the empty table. The file is read in pieces, so
    /// the whole file and all its objects are never in memory at once: each
    /// piece is checksummed, its object lines decoded into records on every
    /// core, and the history lines left in the file until they are asked for.
    /// Nothing decoded is used before the whole checksum has matched.
    func loadSnapshot(_ token: Int64) throws {
        let path = store.files.snapshot(token)
        Trace.mark("load start")
        let fd = try FileIO.openRegular(path)
        ReplacedFiles.holdForReading(fd)
        var keepOpen = false
        defer { if !keepOpen { FileIO.close(fd) } }
        let size = try FileIO.size(fd, path: path)
        let trailer = try StoreLoader.readTrailer(fd, size: size, path: path)
        let objectCount = trailer.objects
        let headerStart = try readHeaderStart(fd, path: path)
        try StoreLoader.checkLastCommitIsSaid(headerStart, trailer, path: path)
        store.historyLog.oldestReachableCommit = headerStart?.oldestReachableCommit
        if store.options.useSnapshotImage, let file = FileIdentity.of(fd), loadImage(token, snapshot: fd, binding: SnapshotImage.Binding(
            token: token, snapshotBytes: Int64(size), snapshotCRC: trailer.crc, fingerprint: SnapshotImage.fingerprint(store.schema), file: file),
            objects: objectCount, history: trailer.history, historyEnd: trailer.start) {
            if trailer.history > 0 {
                store.historyLog.pending = (fd, Int(store.historyLog.imageStart)..<trailer.start, 2 + objectCount, path)
                keepOpen = true
            }
            store.historyLog.snapshotCount = trailer.history
            store.historyLog.snapshotLastCommit = headerStart?.lastCommit ?? trailer.lastCommit
            store.lastToken = token
            return
        }

        var work = UnsafeMutableRawBufferPointer.allocate(byteCount: max(4096, store.options.snapshotReadBytes), alignment: 16)
        var workFreed = false
        defer { if !workFreed { work.deallocate() } }
        var filled = 0, workOffset = 0, readTo = 0
        var crc: UInt32 = 0
        var lines = 0
        var historyStart: Int?
        var chunks: [SnapshotRecordDecoder.Chunk] = []
        var bases: [Int64] = []
        var firstError: (line: Int, message: String, dangling: Bool)?
        var headerError: (any Error)?
        while readTo < trailer.start {
            if filled == work.count {
                // One line longer than the piece: make room for it.
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: work.count * 2, alignment: 16)
                bigger.copyMemory(from: UnsafeRawBufferPointer(work))
                work.deallocate()
                work = bigger
            }
            let want = min(work.count - filled, trailer.start - readTo)
            let got = FileIO.read(fd, into: UnsafeMutableRawBufferPointer(rebasing: work[filled..<(filled + want)]), at: readTo)
            guard got == want else {
                throw StoreError.damaged(file: path, line: nil, detail: "the snapshot could not be read to its end", repairable: false)
            }
            let fresh = UnsafeRawBufferPointer(rebasing: work[filled..<(filled + got)])
            crc = CRC32C.checksum(fresh, continuing: crc)
            readTo += got
            if historyStart != nil {
                // Past the objects: only count the lines.
                lines += SnapshotScan.newlines(fresh)
                continue
            }
            filled += got
            let bytes = UnsafeBufferPointer(start: work.baseAddress!.assumingMemoryBound(to: UInt8.self), count: filled)
            var start = 0
            var objectLines: [Range<Int>] = []
            let firstObjectLine = lines + 1
            while historyStart == nil, let end = SnapshotScan.nextNewline(bytes, from: start) {
                lines += 1
                if lines == 1 {
                    do {
                        var header = JSONReader(buffer: UnsafeBufferPointer(rebasing: bytes[start..<end]))
                        try checkHeader(try header.parseDocument(), start: headerStart, path: path, token: token)
                    } catch {
                        headerError = error
                    }
                } else if lines <= 1 + objectCount {
                    objectLines.append(start..<end)
                } else {
                    historyStart = workOffset + start
                    lines -= 1
                    break
                }
                start = end + 1
            }
            if !objectLines.isEmpty && firstError == nil && headerError == nil {
                for c in SnapshotRecordDecoder.decodeInParallel(objectLines, in: bytes, firstLine: max(2, firstObjectLine), schema: store.schema) {
                    // The arena owns the records from here on, whatever happens next.
                    bases.append(c.base.map { store.table.arena.adopt(base: $0, count: c.byteCount) } ?? 0)
                    if firstError == nil, let e = c.error { firstError = (e.line, e.message, c.errorIsDangling) }
                    chunks.append(c)
                }
            }
            if historyStart == nil && lines == 1 + objectCount && start < filled {
                // Every object is in: what follows is history, however long its lines.
                historyStart = workOffset + start
            }
            if historyStart != nil {
                lines += SnapshotScan.newlines(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(work)[start..<filled]))
                filled = 0
            } else {
                // Keep the unfinished line for the next piece.
                if start > 0 && start < filled {
                    (work.baseAddress!).copyMemory(from: work.baseAddress! + start, byteCount: filled - start)
                }
                workOffset += start
                filled -= start
            }
        }
        work.deallocate()
        workFreed = true
        Trace.mark("snapshot read, checksum and decode (\(chunks.reduce(0) { $0 + $1.fallback.count }) lines the slow way)")
        let trailerTime = try trailer.check(bodyCRC: crc, path: path)
        if let e = headerError {
            if let syntax = e as? JSONSyntaxError { throw StoreError.damaged(file: path, line: 1, detail: "\(syntax)", repairable: false) }
            throw e
        }
        guard filled == 0, lines == 1 + objectCount + trailer.history else {
            throw StoreError.damaged(file: path, line: nil, detail: "the trailer counts \(objectCount) objects and \(trailer.history) transactions, the file holds \(max(0, lines - 1)) lines", repairable: false)
        }
        if let (line, message, dangling) = firstError {
            if dangling { throw StoreError.danglingReferences(file: path, line: line, detail: message) }
            throw StoreError.damaged(file: path, line: line, detail: message, repairable: false)
        }
        try addObjects(chunks, bases: bases, count: objectCount, file: path)
        guard store.table.count == objectCount else {
            throw StoreError.damaged(file: path, line: nil, detail: "the trailer counts \(objectCount) objects, the file holds \(store.table.count)", repairable: false)
        }
        if trailer.history > 0, let h = historyStart {
            store.historyLog.pending = (fd, h..<trailer.start, 2 + objectCount, path)
            keepOpen = true
        }
        store.historyLog.snapshotCount = trailer.history
        store.historyLog.snapshotLastCommit = headerStart?.lastCommit ?? trailerTime
        store.lastToken = token
        // A writer rebuilds a missing, stale or damaged image now, while the
        // table holds exactly the snapshot (the journal is replayed after);
        // not for a 0.9.0 trailer whose time the checksum does not cover (an
        // open from the image would take that time on trust).
        let trailerTimeUnchecked = headerStart?.lastCommit == nil && trailer.lastCommit != nil && trailerTime == nil
        if store.options.useSnapshotImage && store.mayWrite(.repair) && !trailerTimeUnchecked, let file = FileIdentity.of(fd) {
            store.snapshotHasImage = store.bindImage(store.table.writeImage(order: store.table.rowsSortedByID(), indexed: IndexedProperty.of(store.indexes.valueIndexes),
                                       lists: FlatLists(store.table.lists), path: store.files.image(token) + ".tmp"), binding: SnapshotImage.Binding(
                token: token, snapshotBytes: Int64(size), snapshotCRC: trailer.crc, fingerprint: SnapshotImage.fingerprint(store.schema), file: file),
                historyStart: historyStart ?? trailer.start, historyCount: trailer.history)
        }
    }

    /// Loads the snapshot's image if it matches; false when there is none or it does not.
    /// Its counts and history range must agree with the snapshot's trailer too.
    private func loadImage(_ token: Int64, snapshot: Int32, binding: SnapshotImage.Binding, objects: Int, history: Int, historyEnd: Int) -> Bool {
        guard let fd = try? FileIO.openRegular(store.files.image(token)) else { return false }
        defer { FileIO.close(fd) }
        // Held while mapped, after the descriptor is closed.
        ReplacedFiles.holdForReading(fd)
        guard let image = MappedImage(fd: fd, schema: store.schema, binding: binding, accept: { h in
            h.rows == Int64(objects) && h.historyCount == Int64(history) && h.historyStart >= 0 && h.historyStart <= Int64(historyEnd)
        }) else {
            Trace.mark("snapshot image does not match; reading the JSON")
            return false
        }
        // The image of another copy of this snapshot (a copied or restored
        // folder, a file of its own): it serves this one once this copy's
        // bytes match the checksum both name, read through now; a writer
        // binds it to this copy. The snapshot it was made beside, changed in
        // place since, is read from the JSON: the checksum tells damage, not
        // an edit made to keep it.
        let otherCopy = image.header.binding.file != binding.file
        if otherCopy && (image.header.binding.file.isSameFile(as: binding.file)
                         || (try? Store.verifySnapshotChecksum(snapshot, path: store.files.snapshot(token))) == nil) {
            Trace.mark("snapshot image of another copy, or of this one before it changed; reading the JSON")
            image.discard()
            return false
        }
        let checked = store.options.imageChecks == .atOpen
        if checked && !image.checkEverything().isEmpty || image.damage != nil {
            Trace.mark("snapshot image damaged: \(image.damage ?? ""); reading the JSON")
            image.discard()
            return false
        }
        guard store.table.adoptImage(image, checked: checked) else {
            image.discard()
            return false
        }
        if otherCopy && store.mayWrite(.repair) && image.writeBound(to: binding, from: fd, path: store.files.image(token)) {
            Trace.mark("snapshot image bound to this copy")
        }
        store.historyLog.imageStart = Int(image.header.historyStart)
        store.loadedFromImage = true
        store.snapshotChecksumChecked = otherCopy
        store.indexes.adoptImage(image)
        Trace.mark("snapshot image \(image.rows) rows, \(image.header.recordBytes) record bytes")
        return true
    }

    /// The header's first bytes, read before anything else of the file: a
    /// format newer than this program reads is refused (from the image as
    /// from the JSON), and the times the header starts with are read (see
    /// `SnapshotFormat.header`). A header in another form is left to
    /// `checkHeader`, which reads it whole.
    func readHeaderStart(_ fd: Int32, path: String) throws -> SnapshotFormat.HeaderStart? {
        var bytes = [UInt8](repeating: 0, count: SnapshotFormat.headerStartBytes)
        let got = bytes.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: 0) }
        guard got > 0, let start = SnapshotFormat.headerStart(Array(bytes.prefix(got))) else { return nil }
        guard start.format <= SnapshotFormat.version else { throw StoreError.newerFormat(file: path, version: start.format) }
        if start.format == 4 && start.oldestReachableCommit == nil {
            throw StoreError.damaged(file: path, line: 1, detail: "the header's format 4 does not start with its oldestReachableCommit", repairable: false)
        }
        return start
    }

    /// A format-4 snapshot says when its last commit was (in the header, or
    /// in a 0.9.0 trailer): with every history line pruned, nothing else does.
    static func checkLastCommitIsSaid(_ start: SnapshotFormat.HeaderStart?, _ trailer: SnapshotTrailer, path: String) throws {
        guard start?.format == 4, start?.lastCommit == nil, trailer.lastCommit == nil else { return }
        throw StoreError.damaged(file: path, line: 1, detail: "the format-4 header does not say when the last commit was (lastCommit)", repairable: false)
    }

    /// The last line: `{"end":{"objects":…,"history":…,"crc32c":"…"}}`
    /// (with `"lastCommit":"…"` before the checksum in snapshots 0.9.0 wrote).
    static func readTrailer(_ fd: Int32, size: Int, path: String) throws -> SnapshotTrailer {
        let tailLength = min(size, 4096)
        var tail = [UInt8](repeating: 0, count: tailLength)
        let got = tail.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: size - tailLength) }
        guard got == tailLength, let last = tail.last, last == 0x0A else {
            throw StoreError.damaged(file: path, line: nil, detail: "the snapshot is cut short (no trailer)", repairable: false)
        }
        var start = tailLength - 1
        while start > 0 && tail[start - 1] != 0x0A { start -= 1 }
        guard start > 0 || tailLength == size else {
            throw StoreError.damaged(file: path, line: nil, detail: "the snapshot is cut short or its trailer is unreadable", repairable: false)
        }
        guard let trailer = try? JSONReader.parse(Array(tail[start..<(tailLength - 1)])), let end = trailer["end"],
              case .object(let members) = end, Set(members.map(\.key)).count == members.count,
              case .string(let crcHex)? = end["crc32c"], let crc = UInt32(crcHex, radix: 16),
              case .int(let objects)? = end["objects"], case .int(let history)? = end["history"], objects >= 0, history >= 0 else {
            throw StoreError.damaged(file: path, line: nil, detail: "the snapshot is cut short or its trailer is unreadable", repairable: false)
        }
        var lastCommit: (time: Double, text: [UInt8])?
        if let value = end["lastCommit"] {
            guard case .string(let text) = value, let time = ISODate.parse(text) else {
                throw StoreError.damaged(file: path, line: nil, detail: "the snapshot's trailer has an unreadable lastCommit", repairable: false)
            }
            lastCommit = (time, Array(text.utf8))
        }
        return SnapshotTrailer(start: size - tailLength + start, objects: Int(objects), history: Int(history),
                               lastCommit: lastCommit?.time, lastCommitText: lastCommit?.text ?? [], crc: crc)
    }

    /// Adds the decoded object lines to the empty table, in file order, and links them.
    private func addObjects(_ chunks: [SnapshotRecordDecoder.Chunk], bases: [Int64], count: Int, file path: String) throws {
        store.table.reserve(count)
        var firstRows: [Int] = []
        var pending: [(RowID, [PendingLink])] = []
        for (k, chunk) in chunks.enumerated() {
            firstRows.append(store.table.rowCount)
            for i in chunk.entities.indices {
                let entity = Int(chunk.entities[i]), offset = chunk.offsets[i]
                let row = RowID(store.table.rowCount)
                if offset >= 0 {
                    store.table.appendRecord(entity: entity, locator: bases[k] | Int64(offset))
                } else {
                    let d = chunk.fallback[-1 - offset]
                    store.table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
                    if !d.links.isEmpty { pending.append((row, d.links)) }
                }
                store.indexes.appendType(row, entity)
            }
        }
        if let bad = store.table.adoptSnapshotOrder() {
            throw StoreError.damaged(file: path, line: bad + 2, detail: "objects are not in strictly increasing id order (a duplicate or misplaced id)", repairable: false)
        }
        Trace.mark("snapshot add objects")
        let (targetRows, missing) = SnapshotRecordDecoder.resolveTargets(chunks, table: store.table)
        Trace.mark("find reference targets")
        for (k, m) in missing.enumerated() {
            guard let t = m else { continue }
            let c = chunks[k]
            let id = c.targets.string(t)
            throw StoreError.danglingReferences(file: path, line: nil, detail: "a reference points at missing id '\(id)'")
        }
        let plans = LinkPlan.all(store.schema)
        let fits = kindTable()
        for (k, c) in chunks.enumerated() {
            try targetRows[k].withUnsafeBufferPointer { targets in
                for f in c.fixups {
                    let row = RowID(firstRows[k] + Int(f.line))
                    let plan = plans[Int(c.entities[Int(f.line)])][Int(f.slot)]
                    let first = Int(f.firstTarget)
                    let slice = targets[first..<(first + Int(f.targetCount))]
                    // A reference must name an object of its relationship's type: never
                    // write a derived side into an object of another layout.
                    for t in slice where !(store.table.entity(at: t).map { fits[plan.destination][$0] } ?? false) {
                        throw wrongType(row: row, slot: Int(f.slot), target: t, file: path)
                    }
                    store.table.fill(store.table.arena.pointer(bases[k] | Int64(f.slotOffset)), toMany: plan.toMany, slice)
                    guard plan.inverseSlot >= 0 else { continue }
                    for t in slice {
                        if plan.inverseToMany {
                            store.table.appendReference(row, to: t, slot: plan.inverseSlot)
                        } else {
                            store.table.fill(store.table.slotPointer(t, plan.inverseSlot), toOne: row)
                        }
                    }
                }
            }
        }
        try resolveSnapshotLinks(pending, file: path)
        Trace.mark("resolve links (records \(store.table.recordBytes.total) bytes, \(store.table.lists.count) lists)")
    }

    /// How a snapshot's relationship slot is filled: its kind, and the derived
    /// inverse slot of each target (-1 when the inverse is written itself or absent).
    struct LinkPlan {
        var toMany = false
        var inverseSlot = -1
        var inverseToMany = false
        var destination = 0

        static func all(_ schema: Schema) -> [[LinkPlan]] {
            schema.entities.map { e in
                e.properties.map { p in
                    guard let r = p.relationship else { return LinkPlan() }
                    var plan = LinkPlan(toMany: r.isToMany, destination: r.destination)
                    if let inv = r.inverseSlot, let back = schema.entities[r.destination].properties[inv].relationship, !back.isStoredSide {
                        plan.inverseSlot = inv
                        plan.inverseToMany = back.isToMany
                    }
                    return plan
                }
            }
        }
    }

    /// Sets the relationships of the snapshot lines that took the slow decoder
    /// (ids found by binary search over the id-ordered rows, on every core),
    /// with their derived sides.
    func resolveSnapshotLinks(_ pending: [(RowID, [PendingLink])], file: String) throws {
        let parts = pending.count >= 4096 ? 2 : 1
        let view = store.table.readView
        let work = pending
        // Per part: each pending object's resolved targets, or the first id not found.
        let results = Parallel.map(parts) { k -> (resolved: [[[RowID]]], missing: String?) in
            var resolved: [[[RowID]]] = []
            for i in Parallel.ranges(work.count, parts: parts)[k] {
                var links: [[RowID]] = []
                links.reserveCapacity(work[i].1.count)
                for link in work[i].1 {
                    var rows: [RowID] = []
                    rows.reserveCapacity(link.targets.count)
                    for t in link.targets {
                        guard let r = view.sortedRow(for: t.id) else { return (resolved, t.id) }
                        rows.append(r)
                    }
                    links.append(rows)
                }
                resolved.append(links)
            }
            return (resolved, nil)
        }
        let missing = results.map(\.missing)
        let resolved = results.flatMap(\.resolved)
        if let id = missing.compactMap({ $0 }).first {
            throw StoreError.danglingReferences(file: file, line: nil, detail: "a reference points at missing id '\(id)'")
        }
        let fits = kindTable()
        for (i, (row, links)) in pending.enumerated() {
            guard let e = store.table.entity(at: row) else { continue }
            for (k, link) in links.enumerated() {
                guard let rel = store.schema.entities[e].properties[link.slot].relationship else { continue }
                for (t, target) in zip(resolved[i][k], link.targets) {
                    let te = store.table.entity(at: t)
                    guard let te, fits[rel.destination][te], target.type.map({ $0 == store.schema.entities[te].name }) ?? true else {
                        throw wrongType(row: row, slot: link.slot, target: t, file: file)
                    }
                }
                store.table.setLinks(resolved[i][k], row: row, slot: link.slot, deriveInverses: true)
            }
        }
    }

    /// `fits[destination][entity]`: whether an object of `entity` may stand in a relationship to `destination`.
    func kindTable() -> [[Bool]] {
        store.schema.entities.map { d in store.schema.entities.map { store.schema.isKind($0.id, of: d.id) } }
    }

    func wrongType(row: RowID, slot: Int, target: RowID, file: String) -> StoreError {
        let owner = store.table.entity(at: row).map { store.schema.entities[$0] }
        let property = owner.map { $0.properties[slot] }
        let destination = property?.relationship.map { store.schema.entities[$0.destination].name } ?? "?"
        let actual = store.table.entity(at: target).map { store.schema.entities[$0].name } ?? "nothing"
        return .damaged(file: file, line: nil,
                        detail: "\(owner?.name ?? "?") '\(store.table.id(at: row) ?? "?")'.\(property?.name ?? "?") refers to '\(store.table.id(at: target) ?? "?")', "
                              + "a \(actual), where a \(destination) belongs (a reference of the wrong type)", repairable: false)
    }

}

/// Line scanning over the pieces of a snapshot.
enum SnapshotScan {
    static func nextNewline(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard start < bytes.count, let p = memchr(bytes.baseAddress! + start, 0x0A, bytes.count - start) else { return nil }
        return UnsafeRawPointer(p) - UnsafeRawPointer(bytes.baseAddress!)
    }

    static func newlines(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard var p = bytes.baseAddress, bytes.count > 0 else { return 0 }
        let end = p + bytes.count
        var n = 0
        while p < end, let hit = memchr(p, 0x0A, end - p) {
            n += 1
            p = UnsafeRawPointer(hit) + 1
        }
        return n
    }
}

/// A snapshot's trailer, as `readTrailer` reads it.
struct SnapshotTrailer {
    /// Where the trailer line starts: the body is every byte before it.
    let start: Int
    let objects: Int
    let history: Int
    /// When the last transaction was committed, and the text that says it,
    /// in a trailer 0.9.0 wrote (newer ones say it in the header).
    let lastCommit: Double?
    let lastCommitText: [UInt8]
    /// The stored checksum: the body's, or in a trailer with `lastCommit`
    /// the body's continued over `lastCommitText` (see `SnapshotFormat.sealed`).
    let crc: UInt32

    /// Checks that the body's checksum matches `crc`: the CRC-32C of the
    /// bytes before the trailer, or in a trailer 0.9.0 wrote with
    /// `lastCommit` also that continued over its text (0.9.0's rule; a hand
    /// edit of such a file resealed by the plain rule opens too). Returns
    /// the trailer's `lastCommit` where the checksum covers it (0.9.0's
    /// rule matched), else nil: a time outside the checksum is not trusted.
    /// - Throws: `StoreError.damaged` naming both checksums; `note` ends its detail.
    @discardableResult
    func check(bodyCRC: UInt32, path: String, note: String = "") throws -> Double? {
        let sealed = SnapshotFormat.sealed(bodyCRC, lastCommit: lastCommitText)
        if crc == sealed && !lastCommitText.isEmpty { return lastCommit }
        guard crc != bodyCRC else { return nil }
        throw StoreError.damaged(file: path, line: nil, detail: "checksum mismatch (stored \(CRC32C.hex(crc)), computed \(CRC32C.hex(bodyCRC)))" + note,
                                 repairable: false)
    }
}
