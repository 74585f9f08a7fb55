extension Store {
    /// Loads the newest snapshot and replays its journal.
    func load() throws {
        let listing = try files.list()
        if let snap = listing.snapshots.last {
            try loadSnapshot(snap)
            snapshotToken = snap
            hasSnapshot = true
        } else if let j = listing.journals.first(where: { $0 != 0 }) {
            throw StoreError.damaged(file: files.journal(j), line: nil,
                                     detail: "it follows snapshot-\(j).jsonl, which is missing", repairable: false)
        }
        let journal = files.journal(snapshotToken)
        if FileIO.exists(journal) {
            try loadJournal(journal)
        } else if access == .read, let newest = try files.list().snapshots.last, newest > snapshotToken {
            // A writer compacted while we read: its journal is gone. Read again, from the new snapshot.
            throw IOError(operation: "open", path: journal, code: ENOENT)
        }
        // The snapshot's rows went into the type index as they were added; a
        // replayed journal may have changed them, so then it is built again.
        if journalTransactions > 0 { indexes.rebuild(from: table) }
        Trace.mark("build indexes")
    }

    func loadSnapshot(_ token: Int64) throws {
        let path = files.snapshot(token)
        Trace.mark("load start")
        let bytes = try FileIO.readFile(path)
        Trace.mark("read snapshot \(bytes.count) bytes")
        try bytes.withUnsafeBufferPointer { buf in
            // The trailer is the last line; its checksum covers everything before it.
            guard buf.count > 0, buf[buf.count - 1] == 0x0A else {
                throw StoreError.damaged(file: path, line: nil, detail: "the snapshot is cut short (no trailer)", repairable: false)
            }
            var trailerStart = buf.count - 1
            while trailerStart > 0 && buf[trailerStart - 1] != 0x0A { trailerStart -= 1 }
            var reader = JSONReader(buffer: UnsafeBufferPointer(rebasing: buf[trailerStart..<(buf.count - 1)]))
            guard let trailer = try? reader.parseDocument(), let end = trailer["end"],
                  case .string(let crcHex)? = end["crc32c"], let crc = UInt32(crcHex, radix: 16),
                  case .int(let objectCount)? = end["objects"], case .int(let historyCount)? = end["history"] else {
                throw StoreError.damaged(file: path, line: nil, detail: "the snapshot is cut short or its trailer is unreadable", repairable: false)
            }
            let actual = CRC32C.checksum(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buf)[0..<trailerStart]))
            guard actual == crc else {
                throw StoreError.damaged(file: path, line: nil, detail: "checksum mismatch (stored \(crcHex), computed \(CRC32C.hex(actual)))", repairable: false)
            }
            Trace.mark("snapshot checksum")
            // Lines: the header, the objects, then the history.
            var lines: [Range<Int>] = []
            lines.reserveCapacity(Int(objectCount) + Int(historyCount) + 1)
            JSONLines.forEachLine(in: UnsafeBufferPointer(rebasing: buf[0..<trailerStart])) { _, range, _ in lines.append(range) }
            guard lines.count == 1 + Int(objectCount) + Int(historyCount) else {
                throw StoreError.damaged(file: path, line: nil, detail: "the trailer counts \(objectCount) objects and \(historyCount) transactions, the file holds \(lines.count - 1) lines", repairable: false)
            }
            var header = JSONReader(buffer: UnsafeBufferPointer(rebasing: buf[lines[0]]))
            do {
                try checkHeader(try header.parseDocument(), path: path, token: token)
            } catch let e as JSONSyntaxError {
                throw StoreError.damaged(file: path, line: 1, detail: "\(e)", repairable: false)
            }
            // Objects: decoded on every core, then added in file order.
            let objectLines = lines[1...Int(objectCount)]
            var chunks = DecodeChunks.decode(objectLines, in: buf, schema: schema)
            Trace.mark("snapshot decode objects")
            var pending: [(RowID, [PendingLink])] = []
            pending.reserveCapacity(Int(objectCount))
            table.reserve(Int(objectCount))
            for k in chunks.indices {
                if let (line, message) = chunks[k].error {
                    throw StoreError.damaged(file: path, line: line, detail: message, repairable: false)
                }
                // Move each object's values out, so the table holds the only
                // reference and setting relationships later copies nothing.
                let objects = chunks[k].objects
                chunks[k].objects = []
                for d in objects {
                    let row = table.append(StoredObject(entity: d.entity, id: d.id, values: d.values))
                    indexes.appendType(row, d.entity)
                    if !d.links.isEmpty { pending.append((row, d.links)) }
                }
            }
            chunks = []
            if let bad = table.adoptSnapshotOrder() {
                throw StoreError.damaged(file: path, line: bad + 2, detail: "objects are not in strictly increasing id order (a duplicate or misplaced id)", repairable: false)
            }
            Trace.mark("snapshot add objects")
            // History lines are kept as bytes and read when first needed.
            let historyLines = lines[(1 + Int(objectCount))...]
            if let first = historyLines.first, let last = historyLines.last {
                let bytes = Array(buf[first.lowerBound..<last.upperBound])
                pendingHistory = (bytes, historyLines.map { ($0.lowerBound - first.lowerBound)..<($0.upperBound - first.lowerBound) },
                                  2 + Int(objectCount), path)
            }
            snapshotHistoryCount = Int(historyCount)
            Trace.mark("snapshot history")
            guard table.count == Int(objectCount) else {
                throw StoreError.damaged(file: path, line: nil, detail: "the trailer counts \(objectCount) objects, the file holds \(table.count)", repairable: false)
            }
            try resolveSnapshotLinks(pending, file: path)
            Trace.mark("resolve links")
        }
        lastToken = token
    }

    /// Reads the snapshot's history lines kept aside at load.
    func readPendingHistory() {
        guard let pending = pendingHistory else { return }
        pendingHistory = nil
        var read: [HistoryTransaction] = []
        read.reserveCapacity(pending.lines.count + loadedHistory.count)
        pending.bytes.withUnsafeBufferPointer { buf in
            for (k, range) in pending.lines.enumerated() {
                let line = UnsafeBufferPointer(rebasing: buf[range])
                if let t = HistoryFastReader.read(line) {
                    read.append(t)
                    continue
                }
                var r = JSONReader(buffer: line)
                if let value = try? r.parseDocument(), let t = HistoryCoding.read(value) {
                    read.append(t)
                } else {
                    historyProblems.append("\(pending.file) line \(pending.firstLine + k): unreadable history transaction")
                }
            }
        }
        loadedHistory = read + loadedHistory
    }

    func checkHeader(_ header: JSONValue, path: String, token: Int64) throws {
        guard case .int(let format)? = header["format"] else {
            throw StoreError.damaged(file: path, line: 1, detail: "the header has no format version", repairable: false)
        }
        guard format <= SnapshotFormat.version else { throw StoreError.newerFormat(file: path, version: Int(format)) }
        guard case .int(let t)? = header["token"], t == token else {
            throw StoreError.damaged(file: path, line: 1, detail: "the header's token does not match the file name", repairable: false)
        }
        if let s = header["schema"], case .string(let fp)? = s["fingerprint"], fp != schema.fingerprint {
            guard let entities = s["entities"], let stored = SchemaCoding.read(entities) else {
                throw StoreError.damaged(file: path, line: 1, detail: "the header's schema is unreadable", repairable: false)
            }
            let problems = SchemaCompatibility.differences(stored: stored, current: schema.descriptions)
            if !problems.isEmpty { throw StoreError.schemaMismatch(problems) }
        }
    }

    /// Sets a snapshot's relationships: ids are found by binary search over the
    /// id-ordered rows, on every core, then set in order with their derived sides.
    func resolveSnapshotLinks(_ pending: [(RowID, [PendingLink])], file: String) throws {
        let cores = pending.count >= 4096 ? 2 : 1
        let per = (pending.count + cores - 1) / max(cores, 1)
        var resolved = [[[RowID]]](repeating: [], count: pending.count)
        var missing = [String?](repeating: nil, count: cores)
        nonisolated(unsafe) let table = self.table
        let work = pending
        resolved.withUnsafeMutableBufferPointer { out in
            missing.withUnsafeMutableBufferPointer { missed in
                nonisolated(unsafe) let out = out
                nonisolated(unsafe) let missed = missed
                Parallel.forEach(cores) { k in
                    for i in (k * per)..<min(work.count, (k + 1) * per) {
                        var links: [[RowID]] = []
                        links.reserveCapacity(work[i].1.count)
                        for link in work[i].1 {
                            var rows: [RowID] = []
                            rows.reserveCapacity(link.targets.count)
                            for t in link.targets {
                                guard let r = table.sortedRow(for: t.id) else {
                                    missed[k] = t.id
                                    return
                                }
                                rows.append(r)
                            }
                            links.append(rows)
                        }
                        out[i] = links
                    }
                }
            }
        }
        if let id = missing.compactMap({ $0 }).first {
            throw StoreError.damaged(file: file, line: nil, detail: "a reference points at missing id '\(id)'", repairable: false)
        }
        for (i, (row, links)) in pending.enumerated() {
            for (k, link) in links.enumerated() {
                set(resolved[i][k], row: row, slot: link.slot, deriveInverses: true)
            }
        }
    }

    /// Sets a relationship slot and, for a snapshot, the derived side of each target.
    func set(_ rows: [RowID], row: RowID, slot: Int, deriveInverses: Bool) {
        guard let entity = table.entity(at: row), let rel = schema.entities[entity].properties[slot].relationship else { return }
        table.setValue(rel.isToMany ? .toMany(rows) : (rows.first.map { .toOne($0) } ?? .null), row: row, slot: slot)
        guard deriveInverses, let inverse = rel.inverseSlot else { return }
        for t in rows {
            guard let target = table.entity(at: t),
                  let back = schema.entities[target].properties[inverse].relationship, !back.isStoredSide else { continue }
            if back.isToMany {
                table.appendReference(row, to: t, slot: inverse)
            } else {
                table.setValue(.toOne(row), row: t, slot: inverse)
            }
        }
    }

    /// Sets relationship slots from references by id, as a journal line records
    /// them (both sides are in the line, so nothing is derived).
    func resolveLinks(_ pending: [(RowID, [PendingLink])], file: String) throws {
        for (row, links) in pending {
            for link in links {
                var rows: [RowID] = []
                rows.reserveCapacity(link.targets.count)
                for t in link.targets {
                    guard let r = table.row(for: t.id) else {
                        throw StoreError.damaged(file: file, line: nil, detail: "a reference points at missing id '\(t.id)'", repairable: false)
                    }
                    rows.append(r)
                }
                set(rows, row: row, slot: link.slot, deriveInverses: false)
            }
        }
    }

    func loadJournal(_ path: String) throws {
        let bytes = try FileIO.readFile(path)
        journalSize = bytes.count
        try bytes.withUnsafeBufferPointer { buf in
            try JSONLines.forEachLine(in: buf) { number, range, complete in
                guard complete else {
                    tornTail = range.lowerBound
                    journalSize = range.lowerBound
                    return
                }
                let line = UnsafeBufferPointer(rebasing: buf[range])
                guard JournalFormat.isIntact(line) else {
                    throw StoreError.damaged(file: path, line: number, detail: "checksum mismatch", repairable: false)
                }
                var reader = JSONReader(buffer: line)
                let value: JSONValue
                do {
                    value = try reader.parseDocument()
                } catch {
                    throw StoreError.damaged(file: path, line: number, detail: "\(error)", repairable: false)
                }
                guard let t = HistoryCoding.read(value) else {
                    throw StoreError.damaged(file: path, line: number, detail: "unreadable transaction", repairable: false)
                }
                guard t.token == lastToken + 1 else {
                    throw StoreError.damaged(file: path, line: number, detail: "token \(t.token) follows \(lastToken)", repairable: false)
                }
                try JournalReplay.apply(value, to: self, file: path, line: number)
                loadedHistory.append(t)
                lastToken = t.token
                journalTransactions += 1
            }
        }
        if tornTail != nil {
            if access == .write || !StoreLock.isHeld(folder: files.folder) {
                warnings.append("warning: \(path) ends with an incomplete transaction (a write cut short); it is ignored"
                                + (access == .write ? " and cut" : "; 'tripstore verify --repair' cuts it"))
            }
        }
    }

    /// Cuts a torn last journal line (writers only).
    func repairTornTail() throws {
        guard let cut = tornTail else { return }
        let path = files.journal(snapshotToken)
        let fd = try FileIO.open(path, O_WRONLY)
        defer { FileIO.close(fd) }
        try FileIO.truncate(fd, to: cut, path: path)
        try FileIO.fsync(fd, path: path)
        tornTail = nil
        journalSize = cut
    }
}
#if canImport(Glibc)
import Glibc
#endif
