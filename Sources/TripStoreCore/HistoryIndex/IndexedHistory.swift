import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The index disagrees with the snapshot (or a page of it is damaged): the
/// caller answers from the whole history instead.
struct HistoryIndexMismatch: Error {}

/// A snapshot's history lines read through its index: only the lines and
/// changes an answer needs, each read from the JSON and checked against
/// what the index said it would be (token, kind, id).
final class IndexedHistory {
    let index: HistoryIndex
    /// The snapshot, open (a duplicate of the history's descriptor: it stays
    /// readable when a compaction removes the file).
    private let fd: Int32

    init(index: HistoryIndex, snapshotFD: Int32) {
        self.index = index
        self.fd = dup(snapshotFD)
    }

    deinit { if fd >= 0 { FileIO.close(fd) } }

    private func bytes(_ range: Range<Int64>) throws -> [UInt8] {
        guard fd >= 0, range.lowerBound >= index.header.binding.historyStart, range.upperBound <= index.header.binding.historyEnd else {
            throw HistoryIndexMismatch()
        }
        var b = [UInt8](repeating: 0, count: range.count)
        let got = b.withUnsafeMutableBytes { FileIO.read(fd, into: $0, at: Int(range.lowerBound)) }
        guard got == b.count else { throw HistoryIndexMismatch() }
        return b
    }

    private func transaction(_ n: Int) throws -> HistoryIndexFile.Transaction {
        guard let t = index.transaction(n) else { throw HistoryIndexMismatch() }
        return t
    }

    /// A whole history line.
    func line(_ n: Int) throws -> HistoryTransaction {
        let t = try transaction(n)
        let b = try bytes(t.lineStart..<(t.lineStart + t.lineLength))
        var why = ""
        guard let read = b.withUnsafeBufferPointer({ Store.readHistoryLine($0, why: &why) }), read.token == t.token else {
            throw HistoryIndexMismatch()
        }
        return read
    }

    /// A history line's token, time and author, without its changes.
    func head(_ n: Int) throws -> (HistoryTransaction, HistoryIndexFile.Transaction) {
        let t = try transaction(n)
        guard t.changesOpen >= 0, t.changesOpen < t.changesClose, t.changesClose <= t.lineLength else { throw HistoryIndexMismatch() }
        let line = t.lineStart..<(t.lineStart + t.lineLength)
        let head = try bytes(line.lowerBound..<(line.lowerBound + t.changesOpen)) + Array("[]".utf8)
            + bytes((line.lowerBound + t.changesClose)..<line.upperBound)
        var why = ""
        guard let read = head.withUnsafeBufferPointer({ Store.readHistoryLine($0, why: &why) }), read.token == t.token else {
            throw HistoryIndexMismatch()
        }
        return (read, t)
    }

    /// The JSON value that starts at `offset` in line `t`'s changes array.
    private func value(at offset: Int64, in t: HistoryIndexFile.Transaction) throws -> JSONValue {
        let end = t.lineStart + t.changesClose
        guard offset > t.lineStart + t.changesOpen, offset < end else { throw HistoryIndexMismatch() }
        // A change is usually small: read a window, and more only when it is longer.
        var window: Int64 = 4096
        while true {
            let b = try bytes(offset..<min(end, offset + window))
            let parsed: JSONValue? = b.withUnsafeBufferPointer { buf in
                var r = JSONReader(buffer: buf)
                r.depth = 2  // inside the line's object and its changes array, as the line reader counts
                guard let v = try? r.parseValue() else { return nil }
                return v
            }
            if let parsed { return parsed }
            guard offset + window < end else { throw HistoryIndexMismatch() }
            window *= 4
        }
    }

    /// The change an id entry names, checked: the same kind; nil when it is
    /// another object's (whose id has the same hash).
    func change(_ e: HistoryIndexFile.IDEntry, of id: String, in t: HistoryIndexFile.Transaction) throws -> Change? {
        if e.grouped {
            // A run of inserts: the run's kind and type from its object's head, the id from its string.
            let groupStart = e.offset - Int64(e.groupDelta)
            let idBytes = try bytes(e.offset..<min(t.lineStart + t.changesClose, e.offset + 4 * Int64(id.utf8.count) + 64))
            let raw: String? = idBytes.withUnsafeBufferPointer { buf in
                var r = JSONReader(buffer: buf)
                guard buf.first == UInt8(ascii: "\""), let s = try? r.parseString() else { return nil }
                return s
            }
            guard let raw, let stored = Identifier.stored(raw) else { throw HistoryIndexMismatch() }
            if stored != id { return nil }
            let (kind, type) = try runHead(at: groupStart, before: e.offset, in: t)
            guard kind == "insert" else { throw HistoryIndexMismatch() }
            return Change(kind: .insert, type: type, id: id)
        }
        var changes: [Change] = []
        guard HistoryCoding.readChanges(try value(at: e.offset, in: t), into: &changes), changes.count == 1,
              let c = changes.first, HistoryIndexFile.kindCode(c.kind.rawValue) == e.kind else { throw HistoryIndexMismatch() }
        return c.id == id ? c : nil
    }

    /// A run of inserts' `kind` and `type`, read from its object up to its ids.
    private func runHead(at start: Int64, before idStart: Int64, in t: HistoryIndexFile.Transaction) throws -> (String, String) {
        let end = min(idStart, start + 65536)
        let b = try bytes(start..<end)
        let found: (String, String)? = b.withUnsafeBufferPointer { buf in
            var r = JSONReader(buffer: buf)
            var kind: String?, type: String?
            guard buf.first == UInt8(ascii: "{") else { return nil }
            r.index = 1
            while r.index < buf.count {
                r.skipWhitespace()
                guard r.index < buf.count, buf[r.index] == UInt8(ascii: "\""), let key = try? r.parseString() else { return nil }
                r.skipWhitespace()
                guard r.index < buf.count, buf[r.index] == UInt8(ascii: ":") else { return nil }
                r.index += 1
                r.skipWhitespace()
                if key == "ids" { break }
                guard let v = try? r.parseValue() else { return nil }
                if key == "kind", case .string(let s) = v { kind = s }
                if key == "type", case .string(let s) = v { type = s }
                r.skipWhitespace()
                guard r.index < buf.count, buf[r.index] == UInt8(ascii: ",") else { return nil }
                r.index += 1
            }
            guard let kind, let type, !type.isEmpty else { return nil }
            return (kind, type)
        }
        guard let found else { throw HistoryIndexMismatch() }
        return found
    }

    /// Every change of `id` in the snapshot's history: one transaction per
    /// line that has one, holding only that object's changes.
    func changes(of id: String) throws -> [HistoryTransaction] {
        guard let entries = index.entries(for: id) else { throw HistoryIndexMismatch() }
        var out: [HistoryTransaction] = []
        var current: (number: Int, line: HistoryIndexFile.Transaction)?
        for e in entries {
            let line: HistoryIndexFile.Transaction
            if let current, current.number == Int(e.transaction) {
                line = current.line
            } else {
                let (h, t) = try head(Int(e.transaction))
                out.append(h)
                current = (Int(e.transaction), t)
                line = t
            }
            // Another id with the same hash is passed over.
            if let c = try change(e, of: id, in: line) { out[out.count - 1].changes.append(c) }
        }
        return out.filter { !$0.changes.isEmpty }
    }

    /// The delete changes of the snapshot's history that pass `filter`,
    /// newest transaction first, one transaction per line holding only its
    /// deletes, until `take` says it has enough. With `enough`, a
    /// transaction's deletes are read from its last and only until that many
    /// passed (a transaction of many deletes is not read whole for a few).
    func deletes(tombstonesOnly: Bool, passing filter: HistoryFilter, enough: Int?,
                 take: (HistoryTransaction) -> Bool) throws {
        var left = enough ?? Int.max
        // The transaction being read (entries come newest first), and its deletes that passed.
        var current: (number: Int, head: HistoryTransaction, line: HistoryIndexFile.Transaction)?
        var kept: [Change] = []
        // Within a line, each delete comes before the one read after it (no entry twice).
        var before = Int64.max
        func finish() -> Bool {
            defer { kept = [] }
            guard var h = current?.head, !kept.isEmpty else { return false }
            left -= kept.count
            h.changes = kept.reversed()
            return take(h) || left <= 0
        }
        var k = index.deleteCount
        while k > 0 {
            let from = max(0, k - 64)
            guard let entries = index.deletes(from..<k) else { throw HistoryIndexMismatch() }
            for e in entries.reversed() {
                if current?.number != e.transaction {
                    // Entries are in token order: a later one never belongs to an older line.
                    if let current, e.transaction > current.number { throw HistoryIndexMismatch() }
                    if finish() { return }
                    let (h, t) = try head(e.transaction)
                    current = (e.transaction, h, t)
                    before = Int64.max
                }
                guard e.offset < before else { throw HistoryIndexMismatch() }
                before = e.offset
                guard let line = current?.line, let head = current?.head else { throw HistoryIndexMismatch() }
                var changes: [Change] = []
                guard HistoryCoding.readChanges(try value(at: e.offset, in: line), into: &changes), changes.count == 1,
                      changes[0].kind == .delete else { throw HistoryIndexMismatch() }
                if tombstonesOnly { changes[0].deletedValues = nil }
                var one = head
                one.changes = changes
                if !filter.apply(to: [one]).isEmpty { kept.append(changes[0]) }
                // Enough: the rest of a transaction the limit cut is not read.
                if kept.count >= left { _ = finish(); return }
            }
            k = from
        }
        _ = finish()
    }

    /// The line numbers (in the index) that may hold what `filter` asks
    /// for: narrowed by token, time, author, type and kind; in token order.
    func candidates(_ filter: HistoryFilter) throws -> [Int] {
        var lo = 0, hi = index.transactionCount
        if let since = filter.since {
            guard let k = index.firstTransaction(where: { $0.token > since }) else { throw HistoryIndexMismatch() }
            lo = max(lo, k)
        }
        if let after = filter.after {
            guard let k = index.firstTransaction(where: { !after.isAtOrAfter($0.timestamp) }) else { throw HistoryIndexMismatch() }
            lo = max(lo, k)
        }
        if let before = filter.before {
            guard let k = index.firstTransaction(where: { !before.isAfter($0.timestamp) }) else { throw HistoryIndexMismatch() }
            hi = min(hi, k)
        }
        guard lo < hi else { return [] }
        var lists: [[Int]] = []
        func union(_ kind: HistoryIndexFile.TermKind, _ names: some Sequence<String>) throws {
            var all = Set<Int>()
            for n in names {
                guard let p = index.postings(kind, n) else { throw HistoryIndexMismatch() }
                all.formUnion(p)
            }
            lists.append(all.sorted())
        }
        if let author = filter.author { try union(.author, [author]) }
        if let types = filter.types { try union(.type, types) }
        if let names = filter.typeNames { try union(.type, names.allNames) }
        if let kinds = filter.kinds { try union(.kind, kinds.map(\.rawValue)) }
        guard var result = lists.first else { return Array(lo..<hi) }
        for l in lists.dropFirst() { result = result.filter(Set(l).contains) }
        return result.filter { $0 >= lo && $0 < hi }
    }
}
