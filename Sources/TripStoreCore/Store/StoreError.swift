import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Why a store operation failed: what, where and why, in the store's own terms.
/// (The command line turns each case into an exit code and advice, in one place.)
public enum StoreError: Error, Sendable, CustomStringConvertible {
    /// The folder holds no store (a read command on an empty folder).
    case noStore(path: String)
    /// Where the store's folder goes is something else (a file).
    case notAFolder(path: String)
    /// A file is damaged: which file, which line, and what is wrong.
    case damaged(file: String, line: Int?, detail: String, repairable: Bool)
    /// Another writer holds the lock beyond the wait.
    case locked(path: String, pid: Int32?)
    /// The store was written by a newer tripstore.
    case newerFormat(file: String, version: Int)
    /// The store's schema differs from the program's in ways that are not additions.
    case schemaMismatch([String])
    /// A migration that cannot be made: every change it refuses; nothing was changed.
    case migrationRefused([String])
    /// The store's schema is a later version than the program's.
    case newerSchema(store: String, program: String)
    /// The input does not fit the schema.
    case invalid(EnvelopeError)
    /// Several input errors (from validation).
    case invalidMany([EnvelopeError])
    /// An id that is not in the store.
    case notFound(id: String)
    /// A delete refused by a deny rule.
    case denied(entity: String, id: String, relationship: String, count: Int)
    /// A store of schema-less days (no `schema.json`) holds a name this
    /// program's schema lacks: open it with the schema of the program that made it.
    case schemaNotRecorded(file: String, detail: String)
    /// A write on a store whose state does not allow it (see `StoreState`).
    case notWritable(StoreWrite, state: StoreState)
    /// A transaction made by another open store was given to `commit`.
    case foreignTransaction
    /// A type name the schema does not have; `suggestion` is the closest one.
    case unknownType(name: String, suggestion: String?)
    /// A property name the entity does not have (`id`: the object, where one is meant).
    case unknownProperty(entity: String, id: String?, name: String, suggestion: String?)
    /// A relationship named where an attribute is expected (relationships change through `link` and `unlink`).
    case notAnAttribute(entity: String, name: String)
    /// An attribute named where a relationship is expected (attributes change through `set`).
    case notARelationship(entity: String, name: String)
    /// An insert of an id that is already in use, or that the same transaction deletes.
    case idInUse(id: String)
    /// A token that retained history does not reach (time travel).
    case tokenOutOfReach(token: Int64, reachable: ClosedRange<Int64>, oldestRetained: Int64?)
    /// A time before every reachable token; `earliest` is the oldest state
    /// reachable by time, and when it was committed.
    case timeOutOfReach(time: ISOTime, reachable: ClosedRange<Int64>, earliest: (token: Int64, timestamp: Double)?)
    /// Going back to `token` needs the values of an object deleted at
    /// `deletedAt`, which history recorded before it kept deleted values.
    case deletedValuesNotKept(token: Int64, id: String, deletedAt: Int64, reachable: ClosedRange<Int64>)
    /// Following history after `after`, which pruning has dropped.
    case historyNotRetained(after: Int64, oldestRetained: Int64?, lastToken: Int64)
    /// Dangling references are removed only by a store opened for writing
    /// with `StoreOptions.salvageDanglingReferences`.
    case salvageNotEnabled
    /// A key path of a model that is not one of its declared properties (`use`: what it was for).
    case undeclaredProperty(model: String, keyPath: String, use: String)
    /// A sort descriptor whose key path is not a declared property.
    case unsortable(keyPath: String)
    /// An inserted model whose class is not in the container's schema.
    case modelNotInSchema(String)
    /// An object that belongs to another context was given to `insert` or
    /// `delete` (`action`); nothing was saved.
    case modelOfAnotherContext(type: String, id: String, action: String)
    /// An object read from the past (`fetch(_:asOf:)`, a context on
    /// `container.asOf`) was changed (`action`) and a save was asked for:
    /// the past is read-only. Nothing was saved; the pending changes stay
    /// until `rollback()`.
    case pastModel(type: String, id: String, token: Int64, action: String)
    /// The `ModelContainer` a context works on was closed (`close()`).
    case containerClosed
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
    /// showed damage before a commit or in what a fetch read: nothing was
    /// written or answered; do the work again on `Store.reopenedFromJSON()`
    /// (a `ModelContext` does so itself).
    case imageDamaged(file: String, detail: String)

    private static func hint(_ suggestion: String?) -> String {
        suggestion.map { " (did you mean '\($0)'?)" } ?? ""
    }

    /// One sentence: what was wrong and where.
    public var description: String {
        switch self {
        case .noStore(let p): return "no store at \(p)"
        case .notAFolder(let p): return "\(p) is not a folder; a store is a folder of its own"
        case .imageDamaged(let f, let d): return "\(f): \(d); nothing was written or answered (the JSON is sound: open the store again with every image check at open, or without the image)"
        case .damaged(let f, let l, let d, let r):
            return "the store is damaged: \(f)\(l.map { " line \($0)" } ?? ""): \(d)"
                + (r ? " (a write cut short, which a repair can cut)" : "")
        case .locked(let p, let pid):
            return "the store is locked by another writer\(pid.map { " (pid \($0))" } ?? "") (\(p))"
        case .newerFormat(let f, let v):
            return "\(f) was written in store format \(v), newer than this version reads (\(SnapshotFormat.version))"
        case .schemaMismatch(let ds):
            return "the store's schema differs from this program's: " + ds.joined(separator: "; ")
        case .migrationRefused(let ps):
            return "cannot migrate: " + ps.joined(separator: "; ") + "; nothing was changed"
        case .newerSchema(let store, let program):
            return "the store's schema is version \(store), newer than this program's version \(program); open it with a newer version of the program"
        case .invalid(let e): return e.description
        case .invalidMany(let es): return es.map(\.description).joined(separator: "\n")
        case .notFound(let id): return "no object with id '\(id)'"
        case .denied(let e, let id, let rel, let n):
            return "cannot delete \(e) '\(id)': its relationship '\(rel)' still holds \(n) object\(n == 1 ? "" : "s") and its delete rule is deny"
        case .schemaNotRecorded(let f, let d):
            return "the store's schema differs from this program's: \(f) \(d); the store records no schema "
                + "(it predates schema.json), so open it with the schema of the program that made it"
        case .notWritable(let w, let state): return "\(w.noun) is not possible: the store is \(state)"
        case .foreignTransaction: return "the transaction belongs to another open store"
        case .unknownType(let n, let s): return "unknown type '\(n)'" + Self.hint(s)
        case .unknownProperty(let e, let id, let n, let s):
            return "\(e)\(id.map { " '\($0)'" } ?? "") has no property '\(n)'" + Self.hint(s)
        case .notAnAttribute(let e, let n): return "'\(n)' is a relationship of \(e), not an attribute (a relationship changes by link and unlink)"
        case .notARelationship(let e, let n): return "'\(n)' is an attribute of \(e), not a relationship (an attribute changes by set)"
        case .idInUse(let id): return "id '\(id)' is already in use (or deleted in this transaction: a replacement with the same id goes in a transaction of its own)"
        case .tokenOutOfReach(let t, let r, let oldest):
            return "token \(t) is out of reach: retained history reaches tokens \(r.lowerBound) to \(r.upperBound)"
                + (t < r.lowerBound ? (oldest.map { " (the oldest retained history is token \($0))" } ?? " (no history is retained)") : "")
        case .timeOutOfReach(let time, let r, let first):
            return "\(time) is before the oldest reachable state: retained history reaches tokens \(r.lowerBound) to \(r.upperBound)"
                + (first.map { " (token \($0.token) was committed at \(ISODate.format($0.timestamp)))" } ?? "")
        case .deletedValuesNotKept(let t, let id, let at, let r):
            return "token \(t) is out of reach: the delete of '\(id)' at token \(at) was recorded before history kept deleted values; "
                + "retained history reaches tokens \(r.lowerBound) to \(r.upperBound)"
        case .historyNotRetained(let after, let oldest, let last):
            return "history after token \(after) is no longer retained (pruned): "
                + (oldest.map { "the oldest retained transaction is token \($0)" } ?? "no transaction is retained; the last token is \(last)")
        case .salvageNotEnabled:
            return "dangling references are removed only by a store opened for writing with salvageDanglingReferences"
        case .pastModel(let type, let id, let token, let action):
            return "\(type) '\(id)' was \(action), but it was read as the store was at token \(token), which is read-only; "
                + "nothing was saved (rollback() drops the change; fetch the object without asOf to change it)"
        case .containerClosed: return "the container was closed; open a new ModelContainer on the folder to go on"
        case .undeclaredProperty(let m, let kp, let use): return "\(use): \(kp) is not a declared property of \(m)"
        case .unsortable(let kp): return "cannot sort by \(kp)"
        case .modelOfAnotherContext(let t, let id, let action):
            return "\(t) '\(id)' belongs to another context, so this context \(action) nothing; "
                + "fetch it in this context, or rollback() to drop the call; nothing was saved"
        case .modelNotInSchema(let m):
            return "\(m) is not in the model schema: add the class to ModelSchema, or delete the object from the context"
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
