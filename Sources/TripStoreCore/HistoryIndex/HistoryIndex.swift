import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// An open history index (`HistoryIndexFile`): lookups that read the pages
/// they need and check each. Nil or a nil answer means "damaged or not
/// this snapshot's": the caller reads the history without it.
final class HistoryIndex {
    let header: HistoryIndexFile.Header
    private let file: PagedFileReader
    let names: [String]
    /// Each term's postings: by term kind, then name.
    private let terms: [HistoryIndexFile.TermKind: [String: (start: Int, count: Int)]]

    /// Opens the index at `path` when it describes the history `binding` names.
    init?(path: String, binding: HistoryIndexFile.Binding) {
        guard let fd = try? FileIO.openRegular(path) else { return nil }
        guard let size = try? FileIO.size(fd, path: path), size % PagedFile.pageSize == 0 else {
            FileIO.close(fd)
            return nil
        }
        let file = PagedFileReader(fd: fd, size: size)
        guard let page = file.page(0), let h = HistoryIndexFile.Header.decode(page, pages: file.pages), h.binding == binding,
              let nameBytes = file.elements(h.names, size: 1, 0..<Int(h.names.count)),
              case .array(let list)? = try? JSONReader.parse(nameBytes),
              let termBytes = file.elements(h.terms, size: HistoryIndexFile.termSize, 0..<Int(h.terms.count)) else { return nil }
        var names: [String] = []
        for case .string(let s) in list { names.append(s) }
        guard names.count == list.count else { return nil }
        var terms: [HistoryIndexFile.TermKind: [String: (start: Int, count: Int)]] = [:]
        for k in 0..<Int(h.terms.count) {
            let o = k * HistoryIndexFile.termSize
            guard let kind = HistoryIndexFile.TermKind(rawValue: termBytes.get(UInt32.self, at: o)) else { return nil }
            let name = Int(termBytes.get(UInt32.self, at: o + 4))
            let start = Int(termBytes.get(UInt32.self, at: o + 8)), count = Int(termBytes.get(UInt32.self, at: o + 12))
            guard name < names.count, start + count <= h.postings.count else { return nil }
            terms[kind, default: [:]][names[name]] = (start, count)
        }
        self.header = h
        self.file = file
        self.names = names
        self.terms = terms
    }

    var transactionCount: Int { Int(header.transactions.count) }
    var deleteCount: Int { Int(header.deletes.count) }

    func transactions(_ range: Range<Int>) -> [HistoryIndexFile.Transaction]? {
        guard let b = file.elements(header.transactions, size: HistoryIndexFile.transactionSize, range) else { return nil }
        return (0..<range.count).map { HistoryIndexFile.Transaction(b, at: $0 * HistoryIndexFile.transactionSize) }
    }

    func transaction(_ n: Int) -> HistoryIndexFile.Transaction? { transactions(n..<(n + 1))?.first }

    /// The first transaction for which `isAfter` holds (they run in token
    /// and time order), by binary search; nil when a page is damaged.
    func firstTransaction(where isAfter: (HistoryIndexFile.Transaction) -> Bool) -> Int? {
        var lo = 0, hi = transactionCount
        while lo < hi {
            let mid = (lo + hi) / 2
            guard let t = transaction(mid) else { return nil }
            if isAfter(t) { hi = mid } else { lo = mid + 1 }
        }
        return lo
    }

    /// Every change of the object whose id hashes as `id` does, in token order.
    func entries(for id: String) -> [HistoryIndexFile.IDEntry]? {
        let hash = HistoryIndexFile.hash(id)
        let bucket = HistoryIndexFile.bucket(hash)
        guard let f = file.elements(header.fanout, size: 4, bucket..<(bucket + 2)) else { return nil }
        let lo = Int(f.get(UInt32.self, at: 0)), hi = Int(f.get(UInt32.self, at: 4))
        guard lo <= hi, hi <= Int(header.ids.count) else { return nil }
        // The fanout is checked where it says the bucket starts and ends: the
        // entry before is of an earlier bucket, the one after of a later one.
        func bucketOf(_ k: Int) -> Int? {
            file.elements(header.ids, size: HistoryIndexFile.idEntrySize, k..<(k + 1)).map { HistoryIndexFile.bucket($0.get(UInt64.self, at: 0)) }
        }
        if lo > 0 { guard let b = bucketOf(lo - 1), b < bucket else { return nil } }
        if hi < Int(header.ids.count) { guard let b = bucketOf(hi), b > bucket else { return nil } }
        // The entries are sorted by hash: a bucket holds ids / 4,096 of them
        // (thousands after a big import), so its first entry of this hash is
        // found by binary search, reading a page per step, not the bucket whole.
        // Each page read is checked whole: every entry of it that is the
        // bucket's must be of the bucket, of a transaction there is, and in
        // order, or the index is not believed (a small bucket, on a page or
        // two, is so checked throughout).
        let perPage = PagedFile.payload / HistoryIndexFile.idEntrySize
        var pages: [Int: [HistoryIndexFile.IDEntry]] = [:]
        func page(_ p: Int) -> [HistoryIndexFile.IDEntry]? {
            if let read = pages[p] { return read }
            let from = max(lo, p * perPage), to = min(hi, (p + 1) * perPage)
            guard from < to, let b = file.elements(header.ids, size: HistoryIndexFile.idEntrySize, from..<to) else { return nil }
            var entries: [HistoryIndexFile.IDEntry] = []
            entries.reserveCapacity(to - from)
            for k in 0..<(to - from) {
                let e = HistoryIndexFile.IDEntry(b, at: k * HistoryIndexFile.idEntrySize)
                guard HistoryIndexFile.bucket(e.hash) == bucket, Int(e.transaction) < transactionCount,
                      entries.last.map({ $0 < e }) ?? true else { return nil }
                entries.append(e)
            }
            pages[p] = entries
            return entries
        }
        /// Entry `k` of the bucket (from `lo` to `hi`).
        func entry(_ k: Int) -> HistoryIndexFile.IDEntry? {
            let p = k / perPage
            guard let entries = page(p) else { return nil }
            let i = k - max(lo, p * perPage)
            return i < entries.count ? entries[i] : nil
        }
        var a = lo, z = hi
        while a < z {
            let mid = (a + z) / 2
            guard let e = entry(mid) else { return nil }
            if e.hash < hash { a = mid + 1 } else { z = mid }
        }
        // Just before the run, a smaller hash (the search's answer, checked where it is on another page).
        if a > lo { guard let e = entry(a - 1), e.hash < hash else { return nil } }
        var out: [HistoryIndexFile.IDEntry] = []
        while a < hi {
            guard let e = entry(a) else { return nil }
            // Entries in order across pages too, and none below the hash searched for.
            guard e.hash >= hash, out.last.map({ $0 < e }) ?? true else { return nil }
            if e.hash != hash { return out }
            out.append(e)
            a += 1
        }
        return out
    }

    /// Delete entries `range` (in token order): each delete change's transaction and where it starts.
    func deletes(_ range: Range<Int>) -> [(transaction: Int, offset: Int64)]? {
        guard let b = file.elements(header.deletes, size: HistoryIndexFile.deleteEntrySize, range) else { return nil }
        var out: [(transaction: Int, offset: Int64)] = []
        for k in 0..<range.count {
            let tx = b.get(UInt64.self, at: k * 16)
            guard tx < UInt64(transactionCount) else { return nil }
            out.append((Int(tx), b.get(Int64.self, at: k * 16 + 8)))
        }
        return out
    }

    /// The transactions with a change of that type, by that author, or of that kind (ascending).
    func postings(_ kind: HistoryIndexFile.TermKind, _ name: String) -> [Int]? {
        guard let t = terms[kind]?[name] else { return [] }
        guard let b = file.elements(header.postings, size: 4, t.start..<(t.start + t.count)) else { return nil }
        var out: [Int] = []
        out.reserveCapacity(t.count)
        for k in 0..<t.count {
            let tx = Int(b.get(UInt32.self, at: k * 4))
            guard tx < transactionCount, out.last.map({ $0 < tx }) ?? true else { return nil }
            out.append(tx)
        }
        return out
    }

    /// Reads every page (for `verify`): false when one fails its checksum.
    func checkEveryPage() -> Bool {
        (1..<max(1, file.pages)).allSatisfy { file.page($0) != nil }
    }
}
