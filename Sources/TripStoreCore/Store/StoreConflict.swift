import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Why a transaction (or a model context's save) was refused: another commit,
/// after the token it was staged on, changed what it changes.
///
/// Nothing is written when a commit is refused for a conflict; the caller
/// starts the transaction again on the current state (a context: `refresh`,
/// then `save` again).
public struct StoreConflict: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the later commit did.
    public enum Reason: Sendable, Equatable {
        /// The property was changed by a later commit.
        case changed(property: String)
        /// The object was deleted by a later commit (this transaction changes, deletes or links to it).
        case deleted
        /// The id this transaction inserts was inserted by a later commit.
        case inserted
        /// History since the staging token is no longer retained, so nothing can be proven unchanged.
        case historyUnavailable
    }

    /// The object's type and id.
    public var type: String
    /// The object's id.
    public var id: String
    /// What changed.
    public var reason: Reason
    /// The token of the commit that made the change, when history still has it.
    public var token: Int64?
    /// The token the transaction (or the context's read of the object) was staged on.
    public var stagedOn: Int64

    /// A conflict from its parts.
    public init(type: String, id: String, reason: Reason, token: Int64?, stagedOn: Int64) {
        self.type = type
        self.id = id
        self.reason = reason
        self.token = token
        self.stagedOn = stagedOn
    }

    /// One sentence naming the object, the property and the token.
    public var description: String {
        let by = token.map { " by transaction \($0)" } ?? ""
        switch reason {
        case .changed(let p):
            return "\(type) '\(id)': property '\(p)' was changed\(by) after token \(stagedOn)"
        case .deleted:
            return "\(type) '\(id)' was deleted\(by) after token \(stagedOn)"
        case .inserted:
            return "\(type) id '\(id)' was inserted\(by) after token \(stagedOn)"
        case .historyUnavailable:
            return "\(type) '\(id)': history since token \(stagedOn) is no longer retained, so a change by another commit cannot be ruled out"
        }
    }
}
