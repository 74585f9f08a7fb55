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
        }
    }
}
