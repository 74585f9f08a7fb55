import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Why a store operation failed: what, where and why, in the store's own terms.
/// (The command line turns each case into an exit code and advice, in one place.)
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The folder holds no store (a read command on an empty folder).
    case noStore(path: String)
    /// A file is damaged: which file, which line, and what is wrong.
    case damaged(file: String, line: Int?, detail: String, repairable: Bool)
    /// Another writer holds the lock beyond the wait.
    case locked(path: String, pid: Int32?)
    /// The store was written by a newer tripstore.
    case newerFormat(file: String, version: Int)
    /// The store's schema differs from the program's in ways that are not additions.
    case schemaMismatch([String])
    /// The input does not fit the schema.
    case invalid(EnvelopeError)
    /// Several input errors (from validation).
    case invalidMany([EnvelopeError])
    /// An id that is not in the store.
    case notFound(id: String)
    /// A delete refused by a deny rule.
    case denied(entity: String, id: String, relationship: String, count: Int)
    /// A request the store cannot carry out as asked (an unknown type or
    /// property name, a value that does not read as its attribute's type).
    case usage(String)
    /// A system call failed (permission denied, disk full, a failed write).
    case io(IOError)
    /// Later commits changed what the transaction changes (see `Store.commit`); nothing was written.
    case conflict([StoreConflict])
    /// The transaction would break the store's invariants (a reference to a
    /// missing object, of the wrong type, a one-sided pair); nothing was written.
    case inconsistent([String])
    /// Files hold references to objects that do not exist; `Store.removeDanglingReferences` removes them.
    case danglingReferences(file: String, line: Int?, detail: String)
    /// The snapshot image, checked piece by piece (`ImageChecks.onFirstTouch`),
    /// showed damage before a commit: nothing was written; open the store
    /// again without the image (`StoreOptions.useSnapshotImage`) and retry.
    case imageDamaged(file: String, detail: String)

    /// One sentence: what was wrong and where.
    public var description: String {
        switch self {
        case .noStore(let p): return "no store at \(p)"
        case .imageDamaged(let f, let d): return "\(f): \(d); nothing was written (the JSON is sound: open the store without the image)"
        case .damaged(let f, let l, let d, let r):
            return "the store is damaged: \(f)\(l.map { " line \($0)" } ?? ""): \(d)"
                + (r ? " (a write cut short, which a repair can cut)" : "")
        case .locked(let p, let pid):
            return "the store is locked by another writer\(pid.map { " (pid \($0))" } ?? "") (\(p))"
        case .newerFormat(let f, let v):
            return "\(f) was written in store format \(v), newer than this version reads (\(SnapshotFormat.version))"
        case .schemaMismatch(let ds):
            return "the store's schema differs from this program's: " + ds.joined(separator: "; ")
        case .invalid(let e): return e.description
        case .invalidMany(let es): return es.map(\.description).joined(separator: "\n")
        case .notFound(let id): return "no object with id '\(id)'"
        case .denied(let e, let id, let rel, let n):
            return "cannot delete \(e) '\(id)': its relationship '\(rel)' still holds \(n) object\(n == 1 ? "" : "s") and its delete rule is deny"
        case .usage(let m): return m
        case .io(let e): return e.description
        case .conflict(let cs):
            return "conflict: " + cs.map(\.description).joined(separator: "; ") + "; nothing was written"
        case .inconsistent(let ps):
            return "refused: the change would leave the store inconsistent: " + ps.joined(separator: "; ") + "; nothing was written"
        case .danglingReferences(let f, let l, let d):
            return "the store is damaged: \(f)\(l.map { " line \($0)" } ?? ""): \(d) (a dangling reference, which a repair can remove)"
        }
    }
}
