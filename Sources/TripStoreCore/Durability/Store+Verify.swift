import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// A reference in the store's files to an object that does not exist (left
/// by an older tripstore): where it is, who holds it, what it names.
public struct DanglingReference: Sendable, Equatable, CustomStringConvertible {
    /// The file that holds it.
    public var file: String
    /// Its line in that file.
    public var line: Int
    /// The holder's type and id.
    public var type: String
    /// The holder's id.
    public var id: String
    /// The relationship that holds it.
    public var property: String
    /// The id it names; nil where the file holds `null` in place of a reference.
    public var missingID: String?
    /// The relationship's whole value as the file holds it (history's old value after a repair).
    public var recorded: JSONValue

    /// "FILE line N: Type 'id'.property holds 'x', which does not exist (a dangling reference)".
    public var description: String {
        let what = missingID.map { "holds '\($0)', which does not exist" } ?? "holds null in place of a reference"
        return "\(file) line \(line): \(type) '\(id)'.\(property) \(what) (a dangling reference)"
    }
}

extension Store {
    /// True when the journal ends with a torn (incomplete) line.
    public var hasTornTail: Bool { journal.tornTail != nil }

    /// The journal's replay state, `journal-<token>.state`: a cache of the
    /// rows the journal's lines changed, which an open takes instead of
    /// replaying those lines.
    public var journalStatePath: String { files.journalState(snapshotToken) }

    /// How many journal lines this open took from the replay state instead
    /// of replaying them (0 when there was none, or it did not bind).
    public var journalStateLines: Int { journal.state?.coveredLinesAtOpen ?? 0 }

    /// True when the store has a snapshot file.
    public var hasSnapshotFile: Bool { hasSnapshot }

    /// Checks that every reference points at a live object of the right type
    /// and that both sides of every relationship agree. Empty when sound.
    public func checkInvariants() -> [String] {
        var problems = table.referenceProblems(limit: 100)
        problems.append(contentsOf: indexes.checkInvariants(table))
        _ = history.count  // reads the snapshot's history lines, noting any that cannot be read
        problems.append(contentsOf: historyLog.problems.map(\.description))
        let tokens = history.map(\.token)
        if tokens != tokens.sorted() || Set(tokens).count != tokens.count {
            problems.append("history tokens are not strictly increasing")
        }
        if let last = tokens.max(), last > lastToken {
            problems.append("history holds token \(last), after the store's last token \(lastToken)")
        }
        return problems
    }

    /// What `verify` adds about commit times (apart from `checkInvariants`,
    /// whose damage blocks a repair; these do not): times that go back, a
    /// snapshot's `lastCommit` that disagrees with its last history line,
    /// and an oldest reachable state said to be younger than retained history.
    public func commitTimeProblems() -> [String] {
        var problems: [String] = []
        let history = self.history
        let snapshotLines = historyLog.snapshotCount
        if let said = historyLog.snapshotLastCommit, snapshotLines > 0, snapshotLines <= history.count,
           history[snapshotLines - 1].timestamp != said {
            problems.append("the snapshot says its last commit was at \(ISODate.format(said)), "
                + "its last history line says \(ISODate.format(history[snapshotLines - 1].timestamp))")
        }
        if let oldest = historyLog.oldestReachableCommit, let last = historyLog.snapshotLastCommit ?? history.last?.timestamp, last < oldest {
            problems.append("the snapshot says the oldest reachable state was committed at \(ISODate.format(oldest)), after the last commit (\(ISODate.format(last)))")
        }
        if let oldest = historyLog.oldestReachableCommit, let first = history.first, first.timestamp < oldest {
            problems.append("the snapshot says the oldest reachable state was committed at \(ISODate.format(oldest)), "
                + "after the oldest retained transaction (token \(first.token), \(ISODate.format(first.timestamp)))")
        }
        if let k = history.indices.dropFirst().first(where: { history[$0].timestamp < history[$0 - 1].timestamp }) {
            problems.append("history goes back in time at token \(history[k].token) (\(ISODate.format(history[k].timestamp)), "
                + "after \(ISODate.format(history[k - 1].timestamp)))")
        }
        return problems
    }

    /// Removes the dangling references found by a salvaging open as one
    /// transaction (by `author`), committed by writing a snapshot, so the
    /// damaged files are replaced. History records each relationship's value
    /// as the files held it and as it is now. Nil when there was nothing to
    /// record (nothing found, or every holder was deleted later; the files
    /// are rewritten all the same).
    ///
    /// - Throws: `StoreError.notWritable` / `.salvageNotEnabled` unless the store was opened for writing
    ///   with `salvageDanglingReferences`; `StoreError.damaged` (changing
    ///   nothing) when the store has other damage that this cannot mend;
    ///   file-system errors from the snapshot.
    public func removeDanglingReferences(author: String) throws -> HistoryTransaction? {
        try checkWritable(.repair)
        guard options.salvageDanglingReferences else { throw StoreError.salvageNotEnabled }
        guard !danglingReferences.isEmpty else { return nil }
        let remaining = checkInvariants()
        if !remaining.isEmpty {
            throw StoreError.damaged(file: files.folder, line: nil,
                                     detail: "besides dangling references: " + remaining.prefix(5).joined(separator: "; ")
                                         + "; removing the dangling references would not mend it, so nothing was changed",
                                     repairable: false)
        }
        var changes: [Change] = []
        var done = Set<String>()
        for d in danglingReferences where done.insert(d.id + "\u{0}" + d.property).inserted {
            guard let row = table.row(for: d.id), let o = table.object(at: row),
                  let p = schema.entities[o.entity].property(named: d.property) else { continue }
            let now = EnvelopeEncoder.jsonValue(o.values[p.slot], of: p, schema: schema, lookup: table)
            let change = ValueChange(name: d.property, old: d.recorded, new: now)
            if let k = changes.firstIndex(where: { $0.id == d.id }) {
                changes[k].values.append(change)
            } else {
                changes.append(Change(kind: .update, type: schema.entities[o.entity].name, id: d.id, values: [change]))
            }
        }
        var t: HistoryTransaction?
        if !changes.isEmpty {
            let repair = HistoryTransaction(token: lastToken + 1, timestamp: Store.now(), author: author, changes: changes)
            historyLog.append(repair)
            lastToken = repair.token
            t = repair
        }
        do {
            try compact()
        } catch {
            markBroken(by: error)
            throw error
        }
        danglingReferences = []
        return t
    }

    /// Why the snapshot's image is stale rather than damaged, if it is: made
    /// by another version of the format, for another schema (the store's
    /// schema was extended since), or beside a snapshot of this token that
    /// was since replaced by another (another size or checksum) or changed
    /// in place. The next writer writes a new one.
    public func imageStaleness() -> String? {
        guard let bytes = imageHeaderBytes() else { return nil }
        if bytes.prefix(7).elementsEqual(SnapshotImage.magic.prefix(7)) && bytes[7] != SnapshotImage.magic[7] {
            return "it was written by another version of tripstore"
        }
        guard let header = bytes.withUnsafeBytes(SnapshotImage.Header.decode) else { return nil }
        if header.binding.fingerprint != SnapshotImage.fingerprint(schema) { return "it was made for an earlier schema" }
        guard header.binding.token == snapshotToken, let snapshot = snapshotIdentity() else { return nil }
        if header.binding.snapshotBytes != snapshot.file.size || header.binding.snapshotCRC != snapshot.crc {
            return "the snapshot file was replaced or changed since it was made"
        }
        if header.binding.file.isSameFile(as: snapshot.file) && header.binding.file != snapshot.file {
            return "the snapshot file was changed or touched since it was made"
        }
        return nil
    }

    /// Whether the snapshot's image was made beside another copy of the
    /// snapshot file (the folder was copied or restored) and is not yet
    /// bound to this one: it serves all the same, but each open reads the
    /// snapshot through to check its checksum first, until a writer opens
    /// the store and binds the image to this copy.
    public func imageIsOfAnotherCopy() -> Bool {
        guard let header = imageHeaderBytes()?.withUnsafeBytes(SnapshotImage.Header.decode), let snapshot = snapshotIdentity() else { return false }
        return header.binding.token == snapshotToken && header.binding.snapshotBytes == snapshot.file.size
            && header.binding.snapshotCRC == snapshot.crc && !header.binding.file.isSameFile(as: snapshot.file)
    }

    /// The first bytes of the snapshot's image file, a header's worth, if it has them.
    private func imageHeaderBytes() -> [UInt8]? {
        guard let fd = try? FileIO.openRegular(files.image(snapshotToken)) else { return nil }
        defer { FileIO.close(fd) }
        var bytes = [UInt8](repeating: 0, count: SnapshotImage.Header.byteCount)
        return bytes.withUnsafeMutableBytes({ FileIO.read(fd, into: $0, at: 0) }) == bytes.count ? bytes : nil
    }

    /// The snapshot file's identity now, and the checksum its trailer names.
    private func snapshotIdentity() -> (file: FileIdentity, crc: UInt32)? {
        let path = files.snapshot(snapshotToken)
        guard let fd = try? FileIO.openRegular(path) else { return nil }
        defer { FileIO.close(fd) }
        guard let file = FileIdentity.of(fd), let trailer = try? StoreLoader.readTrailer(fd, size: Int(file.size), path: path) else { return nil }
        return (file, trailer.crc)
    }
}
