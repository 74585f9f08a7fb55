import TripStoreFormat
import TripStoreSystem

/// The layout of `snapshot-<token>.history-index`: a cache that says where
/// in the snapshot's history lines each object's changes, each delete and
/// each transaction are, so that reading one object's history or the
/// newest deletes costs what it returns. It says where only: every answer
/// is read from the snapshot's JSON and checked against the question.
///
/// A paged file (`PagedFile`): page 0 is the header; then the sections.
enum HistoryIndexFile {
    static let magic = Array("TSHISTIX".utf8)
    static let format: UInt32 = 1

    /// Top bits of an id's hash that pick its bucket in the fan-out table.
    static let bucketBits = 12
    static let buckets = 1 << bucketBits

    static let transactionSize = 48
    static let idEntrySize = 24
    static let deleteEntrySize = 16
    static let termSize = 16

    /// What ties an index to the snapshot whose history it describes.
    struct Binding: Equatable {
        var token: Int64
        /// The history lines' bytes in the snapshot, and the first one's line number.
        var historyStart: Int64
        var historyEnd: Int64
        var firstLine: Int64
        /// The snapshot file as `fstat` saw it.
        var file: FileIdentity
    }

    struct Header: Equatable {
        var binding: Binding
        var transactions = PagedFile.Section()
        var fanout = PagedFile.Section()
        var ids = PagedFile.Section()
        var deletes = PagedFile.Section()
        var names = PagedFile.Section()
        var terms = PagedFile.Section()
        var postings = PagedFile.Section()

        var sections: [PagedFile.Section] { [transactions, fanout, ids, deletes, names, terms, postings] }

        func encode() -> [UInt8] {
            var out = HistoryIndexFile.magic
            out.put(HistoryIndexFile.format)
            out.put(UInt32(0))
            out.put(binding.token); out.put(binding.historyStart); out.put(binding.historyEnd); out.put(binding.firstLine)
            out.put(binding.file.device); out.put(binding.file.inode); out.put(binding.file.size)
            out.put(binding.file.modified); out.put(binding.file.changed)
            for s in sections { out.put(s.firstPage); out.put(s.count) }
            return out
        }

        /// Reads a header page that passed its checksum; nil for another format or impossible counts.
        static func decode(_ page: [UInt8], pages: Int64) -> Header? {
            guard page.count >= 200, Array(page[0..<8]) == HistoryIndexFile.magic,
                  page.get(UInt32.self, at: 8) == HistoryIndexFile.format else { return nil }
            var at = 16
            func i64() -> Int64 { defer { at += 8 }; return page.get(Int64.self, at: at) }
            func u64() -> UInt64 { defer { at += 8 }; return page.get(UInt64.self, at: at) }
            let token = i64(), start = i64(), end = i64(), firstLine = i64()
            let file = FileIdentity(device: u64(), inode: u64(), size: i64(), modified: i64(), changed: i64())
            var h = Header(binding: Binding(token: token, historyStart: start, historyEnd: end, firstLine: firstLine, file: file))
            var sections: [PagedFile.Section] = []
            for _ in 0..<7 { sections.append(PagedFile.Section(firstPage: i64(), count: i64())) }
            let sizes = [transactionSize, 4, idEntrySize, deleteEntrySize, 1, termSize, 4]
            // Every section within the file, each count possible for its pages, before anything is read by it.
            for (s, size) in zip(sections, sizes) {
                guard s.firstPage >= 1, s.count >= 0, s.count < 1 << 40, s.firstPage + s.pages(elementSize: size) <= pages else { return nil }
            }
            (h.transactions, h.fanout, h.ids, h.deletes) = (sections[0], sections[1], sections[2], sections[3])
            (h.names, h.terms, h.postings) = (sections[4], sections[5], sections[6])
            guard h.fanout.count == Int64(buckets + 1), h.transactions.count < Int64(UInt32.max) else { return nil }
            return h
        }
    }

    /// One history line: where it and its changes array are, its token and time.
    struct Transaction {
        var lineStart: Int64
        var lineLength: Int64
        /// The changes array, from its `[` to just after its `]`, relative to the line.
        var changesOpen: Int64
        var changesClose: Int64
        var token: Int64
        var timestamp: Double

        func put(into out: inout [UInt8]) {
            out.put(lineStart); out.put(lineLength); out.put(changesOpen); out.put(changesClose); out.put(token)
            out.put(timestamp.bitPattern)
        }

        init(lineStart: Int64, lineLength: Int64, changesOpen: Int64, changesClose: Int64, token: Int64, timestamp: Double) {
            (self.lineStart, self.lineLength, self.changesOpen, self.changesClose) = (lineStart, lineLength, changesOpen, changesClose)
            (self.token, self.timestamp) = (token, timestamp)
        }

        init(_ b: [UInt8], at o: Int) {
            self.init(lineStart: b.get(Int64.self, at: o), lineLength: b.get(Int64.self, at: o + 8),
                      changesOpen: b.get(Int64.self, at: o + 16), changesClose: b.get(Int64.self, at: o + 24),
                      token: b.get(Int64.self, at: o + 32), timestamp: Double(bitPattern: b.get(UInt64.self, at: o + 40)))
        }
    }

    /// One change of one object: where in the snapshot, in which transaction.
    struct IDEntry: Comparable {
        var hash: UInt64
        /// The change object's `{`, or for an insert of a run, the id's string.
        var offset: Int64
        var kind: UInt8
        var grouped: Bool
        var transaction: UInt32
        /// For an insert of a run: how far before `offset` the run's object starts.
        var groupDelta: UInt32

        static func < (a: IDEntry, b: IDEntry) -> Bool {
            (a.hash, a.transaction, a.offset) < (b.hash, b.transaction, b.offset)
        }

        func put(into out: inout [UInt8]) {
            out.put(hash)
            out.put(UInt64(offset) | UInt64(kind) << 48 | (grouped ? 1 << 56 : 0))
            out.put(transaction); out.put(groupDelta)
        }

        init(hash: UInt64, offset: Int64, kind: UInt8, grouped: Bool, transaction: UInt32, groupDelta: UInt32) {
            (self.hash, self.offset, self.kind, self.grouped, self.transaction, self.groupDelta) = (hash, offset, kind, grouped, transaction, groupDelta)
        }

        init(_ b: [UInt8], at o: Int) {
            let packed = b.get(UInt64.self, at: o + 8)
            self.init(hash: b.get(UInt64.self, at: o), offset: Int64(packed & (1 << 48 - 1)), kind: UInt8(truncatingIfNeeded: packed >> 48),
                      grouped: packed >> 56 & 1 == 1, transaction: b.get(UInt32.self, at: o + 16), groupDelta: b.get(UInt32.self, at: o + 20))
        }
    }

    /// What a term's postings list: the transactions with a change of a type, by an author, of a kind.
    enum TermKind: UInt32 { case type = 0, author = 1, kind = 2 }

    static let kinds: [Change.Kind] = [.insert, .update, .delete, .redact, .migrate]

    static func kindCode(_ name: String) -> UInt8 {
        kinds.firstIndex { $0.rawValue == name }.map(UInt8.init) ?? 255
    }

    /// FNV-1a over an id's UTF-8 bytes (its stored, NFC form).
    static func hash(_ id: String) -> UInt64 {
        var h: UInt64 = 0xcbf2_9ce4_8422_2325
        for b in id.utf8 {
            h ^= UInt64(b)
            h = h &* 0x100_0000_01b3
        }
        return h
    }

    static func bucket(_ hash: UInt64) -> Int { Int(hash >> UInt64(64 - bucketBits)) }
}
