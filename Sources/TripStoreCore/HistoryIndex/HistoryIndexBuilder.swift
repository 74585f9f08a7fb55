import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Builds a snapshot's history index by reading its history lines once,
/// a line at a time (memory: the longest line and the entries), and writes
/// it beside the snapshot (to a temporary file, renamed into place: a
/// reader sees a whole index or none; it is a cache, so it is not flushed).
struct HistoryIndexBuilder {
    let binding: HistoryIndexFile.Binding
    let snapshotFD: Int32

    private var transactions: [HistoryIndexFile.Transaction] = []
    private var ids: [HistoryIndexFile.IDEntry] = []
    private var deletes: [(UInt32, Int64)] = []
    private var names: [String] = []
    private var nameNumbers: [String: UInt32] = [:]
    private var postings: [HistoryIndexFile.TermKind: [UInt32: [UInt32]]] = [:]

    /// How much of the history is read at a time (grown for a longer line).
    var chunkBytes = 1 << 22

    init(binding: HistoryIndexFile.Binding, snapshotFD: Int32) {
        self.binding = binding
        self.snapshotFD = snapshotFD
    }

    /// Reads every history line; false when one is not a transaction (the
    /// full read reports it) or cannot be read.
    mutating func readLines() -> Bool {
        var buffer = [UInt8](repeating: 0, count: max(16, chunkBytes))
        var filled = 0
        var at = Int(binding.historyStart)
        let end = Int(binding.historyEnd)
        var consumed = at
        while consumed < end {
            if filled == buffer.count { buffer += [UInt8](repeating: 0, count: buffer.count) }
            let want = min(buffer.count - filled, end - at)
            if want > 0 {
                let got = buffer.withUnsafeMutableBytes { FileIO.read(snapshotFD, into: UnsafeMutableRawBufferPointer(rebasing: $0[filled..<(filled + want)]), at: at) }
                guard got == want else { return false }
                filled += got
                at += got
            }
            var start = 0
            var ok = true
            buffer.withUnsafeBufferPointer { buf in
                while ok, let nl = buf[start..<filled].firstIndex(of: UInt8(ascii: "\n")) {
                    ok = line(UnsafeBufferPointer(rebasing: buf[start..<nl]), at: Int64(consumed + start))
                    start = nl + 1
                }
            }
            guard ok else { return false }
            if start == 0 && at == end && filled > 0 {
                // The last line has no newline: the history ends at the trailer, so this is not a line.
                return false
            }
            buffer.withUnsafeMutableBytes { b in
                if start > 0, let base = b.baseAddress { memmove(base, base + start, filled - start) }
            }
            filled -= start
            consumed += start
        }
        return true
    }

    private mutating func number(_ name: String) -> UInt32 {
        if let n = nameNumbers[name] { return n }
        let n = UInt32(names.count)
        names.append(name)
        nameNumbers[name] = n
        return n
    }

    private mutating func post(_ kind: HistoryIndexFile.TermKind, _ name: String, _ tx: UInt32) {
        let n = number(name)
        if postings[kind, default: [:]][n, default: []].last != tx { postings[kind, default: [:]][n, default: []].append(tx) }
    }

    /// One history line, starting at `offset` in the snapshot.
    private mutating func line(_ bytes: UnsafeBufferPointer<UInt8>, at offset: Int64) -> Bool {
        let tx = UInt32(transactions.count)
        var found: [HistoryLineScanner.Found] = []
        var bad = false
        var entries: [HistoryIndexFile.IDEntry] = []
        var types: Set<String> = [], kinds: Set<String> = []
        guard let changes = HistoryLineScanner.scan(bytes, found: { f in
            switch f {
            case .change(let start, let kind, let type, let id):
                types.insert(type); kinds.insert(kind)
                if kind == "delete" { found.append(f) }
                if let id {
                    entries.append(.init(hash: HistoryIndexFile.hash(id), offset: offset + Int64(start), kind: HistoryIndexFile.kindCode(kind),
                                         grouped: false, transaction: tx, groupDelta: 0))
                }
            case .groupedInsert(let groupStart, let idStart, let type, let id):
                types.insert(type); kinds.insert("insert")
                guard idStart - groupStart <= Int(UInt32.max) else { bad = true; return }
                entries.append(.init(hash: HistoryIndexFile.hash(id), offset: offset + Int64(idStart), kind: 0,
                                     grouped: true, transaction: tx, groupDelta: UInt32(idStart - groupStart)))
            }
        }), !bad, offset + Int64(bytes.count) < 1 << 48 else { return false }
        // The line without its changes: its token, time and author, read as every reader reads them.
        let head = Array(bytes[0..<changes.lowerBound]) + Array("[]".utf8) + Array(bytes[changes.upperBound...])
        var why = ""
        guard let t = head.withUnsafeBufferPointer({ Store.readHistoryLine($0, why: &why) }) else { return false }
        // Lookups by token and time search the lines in order: a history that goes back is read whole instead.
        if let last = transactions.last, t.token <= last.token || t.timestamp < last.timestamp { return false }
        transactions.append(.init(lineStart: offset, lineLength: Int64(bytes.count), changesOpen: Int64(changes.lowerBound),
                                  changesClose: Int64(changes.upperBound), token: t.token, timestamp: t.timestamp))
        ids.append(contentsOf: entries)
        for case .change(let start, _, _, _) in found { deletes.append((tx, offset + Int64(start))) }
        post(.author, t.author, tx)
        for type in types.sorted() { post(.type, type, tx) }
        for kind in kinds.sorted() { post(.kind, kind, tx) }
        return true
    }

    /// Writes the index to `path` (through `path.PID.N.tmp`); false when it could not be written.
    mutating func write(to path: String) -> Bool {
        ids.sort()
        var fanout = [UInt32](repeating: 0, count: HistoryIndexFile.buckets + 1)
        for e in ids { fanout[HistoryIndexFile.bucket(e.hash) + 1] += 1 }
        for b in 0..<HistoryIndexFile.buckets { fanout[b + 1] += fanout[b] }
        var w = JSONWriter()
        w.beginArray()
        for n in names { w.string(n) }
        w.endArray()
        let nameBytes = Array(w.string.utf8)
        var terms: [(HistoryIndexFile.TermKind, UInt32, [UInt32])] = []
        for (kind, byName) in postings { for (n, list) in byName { terms.append((kind, n, list)) } }
        terms.sort { ($0.0.rawValue, $0.1) < ($1.0.rawValue, $1.1) }
        var flat: [UInt32] = []
        var termStarts: [UInt32] = []
        for t in terms {
            termStarts.append(UInt32(flat.count))
            flat += t.2
        }
        guard ids.count < Int(UInt32.max), flat.count < Int(UInt32.max) else { return false }

        // Ends in .tmp: a writer removes what a reader killed here left.
        let temporary = path + ".\(TemporaryNames.unique()).tmp"
        // A reader writes this too: made new, never through a link someone left at its name.
        FileIO.unlink(temporary)
        guard let fd = try? FileIO.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW) else { return false }
        defer { FileIO.close(fd) }
        var h = HistoryIndexFile.Header(binding: binding)
        do {
            var out = PagedFileWriter(fd: fd, path: temporary)
            let txs = transactions, idEntries = ids, dels = deletes
            h.transactions = try out.section(elementSize: HistoryIndexFile.transactionSize, count: txs.count) { i, b in txs[i].put(into: &b) }
            h.fanout = try out.section(elementSize: 4, count: fanout.count) { i, b in b.put(fanout[i]) }
            h.ids = try out.section(elementSize: HistoryIndexFile.idEntrySize, count: idEntries.count) { i, b in idEntries[i].put(into: &b) }
            h.deletes = try out.section(elementSize: HistoryIndexFile.deleteEntrySize, count: dels.count) { i, b in
                b.put(UInt64(dels[i].0)); b.put(dels[i].1)
            }
            h.names = try out.section(elementSize: 1, count: nameBytes.count) { i, b in b.append(nameBytes[i]) }
            h.terms = try out.section(elementSize: HistoryIndexFile.termSize, count: terms.count) { i, b in
                b.put(terms[i].0.rawValue); b.put(terms[i].1); b.put(termStarts[i]); b.put(UInt32(terms[i].2.count))
            }
            h.postings = try out.section(elementSize: 4, count: flat.count) { i, b in b.put(flat[i]) }
            try out.header(h.encode())
            // Flushed though a cache: its dirty pages would otherwise be written by a writer's next flush.
            try FileIO.fsync(fd, path: temporary, dataOnly: true)
            try FileIO.rename(temporary, path)
            return true
        } catch {
            FileIO.unlink(temporary)
            return false
        }
    }
}
