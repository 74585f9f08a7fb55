import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The replay state of a journal, `journal-<token>.state`: for the journal
/// lines it covers, the records of the rows they changed or added and the
/// relationship lists they changed or made, as the table holds them after
/// those lines.
///
/// Why: every open replays the journal, and replaying a line that updates
/// an object finds that object's row by id in the image, checks it and
/// re-encodes it: most of an open's time once the journal holds a few
/// hundred lines. With the state, an open checks the covered lines' bytes
/// (the JSON stays the truth), takes each changed row's final record and
/// each list as they are, and replays only the lines after the state's end.
///
/// It is a cache: bound to the snapshot's image, and to the journal by the
/// checksum of every byte it covers; checksummed per frame; deleting it
/// changes no answer.
///
/// The writer appends a frame after each commit it covers (`committed`),
/// or writes the file anew when more than `rewriteAfterLines` lines are
/// not covered yet (a writer after another that wrote none, or after a
/// fold that carried lines over). It never cuts the file shorter (it
/// removes it instead), so a reader can map it.
final class JournalState {
    let path: String
    private let binding: JournalStateFormat.Binding
    /// The journal's bytes and lines the state covers.
    private(set) var coveredBytes = 0
    private(set) var coveredLines = 0
    /// The lines an open took from the state.
    private(set) var coveredLinesAtOpen = 0
    /// Off after a write failed (the file was removed): this
    /// process writes no more of it.
    private var writable = true
    /// The file's bytes up to the end of the last frame this process read
    /// or wrote, where the next frame goes; nil when none is known.
    private var fileBytes: Int?
    /// Open between appends of a writer.
    private var fd: Int32 = -1
    /// What the state's last whole frame says the journal held when it was
    /// written (set by `read`): bytes, and lines since the snapshot.
    private(set) var promised = (bytes: 0, lines: 0)
    /// Whether every frame that ends within the journal bound to it (set by
    /// `read`): when one does not, the state is another journal's (a copy
    /// that went on otherwise), not this one's ahead of it.
    private(set) var framesWithinBound = true
    /// Where the frames that bound end in the journal (set by `read`).
    private(set) var boundEnd = 0

    /// Lines past the covered ones after which a writer writes the state anew.
    static let rewriteAfterLines = 16

    init(path: String, binding: JournalStateFormat.Binding) {
        self.path = path
        self.binding = binding
    }

    // MARK: Reading

    /// The records the state holds for the journal's first `journalBytes`
    /// (as an open takes them: complete lines, and perhaps a torn tail),
    /// newest per row, and how far they cover; nil when there is no state,
    /// or it covers nothing of them.
    ///
    /// Frames are taken while each is whole, checksummed and bound: the
    /// journal holds, where the frame says, bytes with the checksum of
    /// every byte it covers, ending with a newline. One pass of the checksum over the covered bytes, and no line parsed:
    /// a line damaged, swapped or edited and sealed again unbinds its frame
    /// (and the ones after it), and the replay from there says what is wrong.
    func read(journal: JournalFile, journalBytes: Int, table: ObjectTable) -> Covered? {
        guard let file = readFile(journalBytes: journalBytes) else { return nil }
        return file.withUnsafeBytes { raw -> Covered? in
            guard let read = frames(raw, table: table) else { return nil }
            let within = read.frames.prefix { $0.end <= journalBytes }
            let sums = journal.checksums(within.map { $0.start..<$0.end })
            var bound = 0
            while bound < sums.count && sums[bound].last == 0x0A && sums[bound].crc == within[bound].coveredCRC { bound += 1 }
            framesWithinBound = bound == within.count
            boundEnd = bound > 0 ? read.frames[bound - 1].end : 0
            guard bound > 0, case let last = read.frames[bound - 1],
                  let lastLine = journal.readWhole((last.end - last.lastLineBytes)..<(last.end - 1)) else { return nil }
            // Bound frames are the first ones, so their records and lists are the first ones too.
            let entries = read.records[..<last.records.upperBound].map {
                ReplayedRecords.Entry(row: Int32($0.row), entity: Int16(truncatingIfNeeded: $0.entity), offset: $0.offset, count: $0.count)
            }
            let lists = read.lists[..<last.lists.upperBound].map { ReplayedRecords.ListEntry(number: Int32($0.number), offset: $0.offset, count: $0.count) }
            let taken = read.frames[..<bound]
            // (Each record's bytes are checked against the bounds of its entity's when the table takes it.)
            guard let records = ReplayedRecords(bytes: file, newestLast: entries, lists: lists, rowCount: last.rowsAfter,
                                                listCount: last.listsAfter, imageRows: table.baseRows, imageLists: table.lists.count) else {
                return nil
            }
            return Covered(bytes: last.end, lines: taken.reduce(0) { $0 + $1.lines }, longestLine: taken.map(\.longestLine).max() ?? 0,
                           lastLine: lastLine, fileBytes: last.fileEnd, records: records)
        }
    }

    /// Reads the state only for what it says the journal held (see
    /// `promised`): for a journal that is not there to read.
    func readPromise(table: ObjectTable) {
        guard let file = readFile(journalBytes: 0) else { return }
        _ = file.withUnsafeBytes { frames($0, table: table) }
    }

    /// The file's bytes, if it is a regular file of a size worth reading for a journal of `journalBytes`.
    private func readFile(journalBytes: Int) -> StateFileBytes? {
        // Never through a link (the history index is not either).
        guard let fd = try? FileIO.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW) else { return nil }
        defer { FileIO.close(fd) }
        guard FileIO.isRegularFile(fd) else { return nil }
        // Records are smaller than the lines that made them, except for a
        // line that sets one small value of a big object: the bound is generous, and checked before reading.
        guard let size = try? FileIO.size(fd, path: path), size > JournalStateFormat.headerBytes,
              size <= Self.byteLimit(journalBytes: journalBytes) else { return nil }
        return StateFileBytes.read(fd, size: size)
    }

    /// The file's whole frames, when it is bound to this image; notes what they promise.
    private func frames(_ raw: UnsafeRawBufferPointer, table: ObjectTable) -> JournalStateFormat.Frames? {
        guard JournalStateFormat.hasHeader(raw, of: binding) else { return nil }
        let read = JournalStateFormat.frames(raw, imageRows: table.baseRows, imageLists: table.lists.count,
                                             entities: table.schema.entities.count)
        promised = (read.frames.last?.end ?? 0, read.frames.reduce(0) { $0 + $1.lines })
        return read
    }

    /// The transactions this state's frames say the journal held that it
    /// does not (nil when none): the journal holds `journalBytes` (nil: it
    /// is missing), and its lines end at `lastToken`. Frames are written
    /// only after the lines they cover are on disk, and a journal is only
    /// cut back past its last whole line, so a state ahead of its journal
    /// means lines were lost, or the folder was copied while a writer ran
    /// (the journal before the state), or the state was put there from a
    /// copy of the store. A state whose frames stop binding inside the
    /// journal is another journal's, and says nothing of this one.
    ///
    /// `wholeLinesEnd` is where the journal's last whole line ends: a
    /// journal cut back ends where a frame does (or in the line after it),
    /// while one that holds a whole line past the last frame that bound
    /// went on otherwise (or was cut inside a frame written anew for many
    /// lines, which this cannot tell: it is not called a loss).
    func missingTransactions(journalBytes: Int?, wholeLinesEnd: Int, lastToken: Int64, snapshotToken: Int64) -> ClosedRange<Int64>? {
        guard framesWithinBound, wholeLinesEnd == boundEnd, promised.bytes > (journalBytes ?? 0) else { return nil }
        let last = snapshotToken + Int64(promised.lines)
        return last > lastToken ? (lastToken + 1)...last : nil
    }

    /// What `missingTransactions` found, in words: the journal at `path`,
    /// and the ways on.
    func missingTransactionsDetail(_ missing: ClosedRange<Int64>, journal path: String, journalBytes: Int?) -> String {
        let name = path.split(separator: "/").last.map(String.init) ?? path
        let state = self.path.split(separator: "/").last.map(String.init) ?? self.path
        let holds = journalBytes.map { "it holds \($0) byte\($0 == 1 ? "" : "s"), up to token \(missing.lowerBound - 1)" } ?? "it is missing"
        let one = missing.count == 1
        let which = one ? "transaction \(missing.lowerBound) is" : "transactions \(missing.lowerBound) to \(missing.upperBound) are"
        return "\(holds), but its replay state \(state) records \(promised.bytes) bytes, up to token \(missing.upperBound): \(which) not in it. "
            + "Restore \(name) from a backup if it lost \(one ? "it" : "them"); if this folder was copied while a writer ran, or \(state) comes from another copy, "
            + "delete \(state) to go on without \(one ? "it" : "them")"
    }

    /// What a state read covers: the first `bytes` of the journal, `lines` lines, and each changed row's record.
    struct Covered {
        var bytes: Int
        var lines: Int
        /// The longest of those lines, newline included.
        var longestLine: Int
        /// The last of them, without its newline.
        var lastLine: [UInt8]
        /// Where the last frame taken ends in the file.
        var fileBytes: Int
        var records: ReplayedRecords
    }

    /// The biggest state file worth reading for a journal of this size.
    static func byteLimit(journalBytes: Int) -> Int { 64 << 20 + 16 * journalBytes }

    /// Takes a read's coverage as this state's.
    func adopt(_ covered: Covered) {
        coveredLinesAtOpen = covered.lines
        fileBytes = covered.fileBytes
        coveredBytes = covered.bytes
        coveredLines = covered.lines
    }

    // MARK: Writing

    /// After a commit appended `line` to `journal` (its last line now):
    /// covers it, by a frame appended with the records of `rows` (those the
    /// commit changed or added) and the lists it changed or made, when the
    /// state covers every line before it, or by the file written anew from
    /// every row and list the journal changed once enough lines are not
    /// covered. Never throws: a failure leaves the state as it was, or removes it.
    func committed(line: [UInt8], journal: Journal, rows: [RowID], table: ObjectTable) {
        let lists = table.lists.takeChanged()
        guard writable else { return }
        // Rows of a damaged unit read as empty: what the state would hold of them is not what they hold.
        guard table.imageDamage == nil else {
            writable = false
            FileIO.unlink(path)
            return
        }
        let end = journal.size, start = end - line.count
        if coveredBytes == start && (start == 0 || fileBytes != nil) {
            let f = frame(start: start, end: end, lines: journal.transactions - coveredLines, longestLine: line.count,
                          coveredCRC: CRC32C.checksum(line), lastLineBytes: line.count, rows: rows, lists: lists, table: table)
            append(f, newFile: start == 0, end: end, lines: journal.transactions)
        } else if journal.transactions - coveredLines > Self.rewriteAfterLines {
            // Every line is bound: the journal is read again (as far as this line) for its checksum.
            guard let file = try? JournalFile(path: journal.path), file.size >= end, file.readWhole(start..<end) == line,
                  let sum = file.checksums([0..<end]).first else { return }
            let f = frame(start: 0, end: end, lines: journal.transactions, longestLine: journal.longestLine, coveredCRC: sum.crc,
                          lastLineBytes: line.count, rows: table.journalChangedRows, lists: table.lists.changedOrMadeLists, table: table)
            rewrite(f, end: end, lines: journal.transactions)
        }
    }

    /// Writes the file anew to cover every line of `journal` as an open
    /// read it into `table` (see `Store.writeJournalStateForNextOpen`).
    func writeWhole(journal: Journal, table: ObjectTable) {
        let end = journal.size
        guard writable, journal.transactions > coveredLines, journal.tornTail == nil, end > 0,
              let file = try? JournalFile(path: journal.path), file.size >= end,
              let sum = file.checksums([0..<end]).first, sum.last == 0x0A else { return }
        // The last line is no longer than the longest: its start is after the newline before that many bytes.
        let window = max(0, end - journal.longestLine - 1)
        guard let before = file.readWhole(window..<(end - 1)) else { return }
        let newline = before.lastIndex(of: 0x0A)
        guard newline != nil || window == 0 else { return }
        let lastStart = newline.map { window + $0 + 1 } ?? 0
        let f = frame(start: 0, end: end, lines: journal.transactions, longestLine: journal.longestLine, coveredCRC: sum.crc,
                      lastLineBytes: end - lastStart, rows: table.journalChangedRows, lists: table.lists.changedOrMadeLists, table: table)
        rewrite(f, end: end, lines: journal.transactions)
    }

    /// A frame with the records of `rows` as the table holds them (a row
    /// with no object, a record of no bytes: of the entity the image held
    /// it as, or of none), and the lists numbered `lists`.
    private func frame(start: Int, end: Int, lines: Int, longestLine: Int, coveredCRC: UInt32, lastLineBytes: Int,
                       rows: [RowID], lists: [Int], table: ObjectTable) -> [UInt8] {
        let records = rows.map { row -> (row: Int, entity: Int, bytes: UnsafeRawBufferPointer) in
            guard let e = table.entity(at: row) else {
                return (Int(row), table.imageEntity(row) ?? JournalStateFormat.noEntity, UnsafeRawBufferPointer(start: nil, count: 0))
            }
            let p = table.record(row)
            return (Int(row), e, UnsafeRawBufferPointer(start: p, count: RecordReader.length(p, count: table.slotCounts[e])))
        }
        return JournalStateFormat.frame(start: start, end: end, lines: lines, longestLine: longestLine, coveredCRC: coveredCRC,
                                        lastLineBytes: lastLineBytes, rowsAfter: table.rowCount, listsAfter: table.lists.count,
                                        records: records, lists: lists.map { ($0, table.lists[$0]) })
    }

    private func append(_ frame: [UInt8], newFile: Bool, end: Int, lines: Int) {
        do {
            if newFile {
                close()
                // Never through a link, never into what is not a file of its own.
                FileIO.unlink(path)
                fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
            } else if fd < 0 {
                fd = try FileIO.open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK)
                guard FileIO.isRegularFileOfItsOwn(fd) else {
                    close()
                    fileBytes = nil
                    return
                }
            }
        } catch {
            writable = false
            return
        }
        let at = newFile ? 0 : fileBytes ?? 0
        // Frames follow the last one this process read or wrote; a file that
        // does not end there (a damaged frame) is written anew later.
        guard newFile || (try? FileIO.size(fd, path: path)) == at else {
            fileBytes = nil
            return
        }
        let bytes = newFile ? JournalStateFormat.header(binding) + frame : frame
        do {
            try bytes.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: at, path: path) }
            fileBytes = at + bytes.count
            coveredBytes = end
            coveredLines = lines
        } catch {
            // A partial frame would fail its checksum, but nothing could
            // follow it. The file goes, rather than be cut back: a reader
            // may have it mapped (see `StateFileBytes`).
            close()
            FileIO.unlink(path)
            fileBytes = nil
            writable = false
        }
    }

    /// Closes the file if a writer has it open.
    func close() {
        if fd >= 0 { FileIO.close(fd) }
        fd = -1
    }

    deinit { close() }

    private func rewrite(_ frame: [UInt8], end: Int, lines: Int) {
        let temporary = path + ".\(TemporaryNames.unique()).tmp"
        do {
            FileIO.unlink(temporary)
            let fd = try FileIO.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW)
            defer { FileIO.close(fd) }
            try FileIO.writeAll(fd, JournalStateFormat.header(binding), path: temporary)
            try FileIO.writeAll(fd, frame, path: temporary)
            close()
            try FileIO.rename(temporary, path)
            fileBytes = JournalStateFormat.headerBytes + frame.count
            coveredBytes = end
            coveredLines = lines
        } catch {
            FileIO.unlink(temporary)
            writable = false
        }
    }
}
