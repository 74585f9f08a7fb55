/// Something worth showing a person that did not stop the operation
/// (`Store.warnings`). The command line words and prefixes each one.
public enum StoreWarning: Sendable, Equatable, CustomStringConvertible {
    /// The journal ends with an incomplete transaction (a write cut short):
    /// it was ignored, and cut from the file where `cut` (a writer's open).
    case tornTail(file: String, cut: Bool)
    /// A commit was durable in the journal, but the automatic snapshot after
    /// it failed; the journal keeps every transaction.
    case automaticSnapshotFailed(reason: String)
    /// This program's schema added to the store's, and `record` now records it.
    case schemaExtended(fingerprint: String, record: String)
    /// A migration committed (its snapshot is on disk), but a step after
    /// that failed; the next writer finishes it. This store takes no writes.
    case migrationUnfinished(reason: String)
    /// A read or a commit met a damaged piece of the snapshot image after
    /// the store was open; the store was read again from its JSON files
    /// (which takes as long as an open without an image: tens of seconds
    /// at a million objects) and went on from there. `rebuilt`: this writer
    /// removed the image and wrote a new one; otherwise the next writer does.
    case imageReadAgain(file: String, detail: String, rebuilt: Bool)
    /// The journal holds fewer transactions than its replay state records
    /// (see `detail`): the answers are the journal's, without them. A
    /// writer refuses such a store (`StoreError.damaged`).
    case journalBehindState(file: String, detail: String)

    /// Whether this is only for information (nothing was wrong).
    public var isNote: Bool {
        if case .schemaExtended = self { return true }
        return false
    }

    public var description: String {
        switch self {
        case .tornTail(let file, let cut):
            return "\(file) ends with an incomplete transaction (a write cut short); it is ignored"
                + (cut ? " and cut" : "; the next writer cuts it")
        case .automaticSnapshotFailed(let reason):
            return "the automatic snapshot failed (\(reason)); the journal keeps every transaction"
        case .schemaExtended(let fingerprint, let record):
            return "the store's schema was extended by this program's (fingerprint \(fingerprint)); \(record) records it"
        case .migrationUnfinished(let reason):
            return "the migration is committed, but a step after it failed (\(reason)); the next writer finishes it"
        case .imageReadAgain(let file, let detail, let rebuilt):
            return "\(file): \(detail); the store was read again from its JSON files"
                + (rebuilt ? " and a new image written" : " (the next writer writes a new image)")
        case .journalBehindState(let file, let detail):
            return "\(file): \(detail); this answer is without them"
        }
    }
}
