import TripStoreFormat
import TripStoreJSON
import TripStoreSystem
/// Which history to show: `--since`, `--type` (deep), `--kind`, `--deletes`,
/// `--author`, `--id`, `--after`, `--before` and `--limit`.
public struct HistoryFilter: Sendable {
    /// Transactions after this token (not the token itself).
    public var since: Int64?
    /// Only the changes of this object (an NFC id).
    public var id: String?
    /// Transactions committed after this time (seconds since the reference date).
    public var after: ISOTime?
    /// Transactions committed before this time.
    public var before: ISOTime?
    /// The newest this many transactions that pass the other filters (still
    /// oldest first); with `limitCountsChanges`, the newest this many changes.
    public var limit: Int?
    /// `limit` counts changes, not transactions: the audit view's
    /// `--deletes --limit N` shows the newest N deletes, as a query of an
    /// audit table by token would, even when one transaction deleted many.
    /// A transaction the limit cuts keeps its newest (last) changes.
    public var limitCountsChanges = false
    /// Changes of these concrete types (a type and its subclasses).
    public var types: Set<String>?
    /// Changes of a type under the names it had when each was recorded
    /// (`Store.historyTypeNames`), across migrations that renamed it.
    public var typeNames: HistoryTypeNames?
    /// Only changes of these kinds (nil: all).
    public var kinds: Set<Change.Kind>?
    /// Only transactions by this author (nil: all).
    public var author: String?
    /// Deletes keep their tombstones only, without the values a delete
    /// records for time travel and the feed (what the audit views print):
    /// an answer of many deletes then holds what it shows.
    public var tombstonesOnly = false

    /// A filter; nil means no restriction.
    public init(since: Int64? = nil, id: String? = nil, types: Set<String>? = nil, kinds: Set<Change.Kind>? = nil, author: String? = nil) {
        self.since = since
        self.id = id
        self.types = types
        self.kinds = kinds
        self.author = author
    }

    /// The transactions that pass, each with only the changes that pass;
    /// a transaction with no change left is left out.
    public func apply(to history: [HistoryTransaction]) -> [HistoryTransaction] {
        var out: [HistoryTransaction] = []
        for t in history {
            if let since, t.token <= since { continue }
            if let author, t.author != author { continue }
            if let after, after.isAtOrAfter(t.timestamp) { continue }
            if let before, !before.isAfter(t.timestamp) { continue }
            var kept = t
            kept.changes = t.changes.filter { c in
                (kinds?.contains(c.kind) ?? true) && (types?.contains(c.type) ?? true) && (id.map { c.id == $0 } ?? true)
                    && (typeNames?.contains(c.type, at: t.token) ?? true)
            }
            if tombstonesOnly {
                for k in kept.changes.indices where kept.changes[k].kind == .delete { kept.changes[k].deletedValues = nil }
            }
            if !kept.changes.isEmpty { out.append(kept) }
        }
        guard let limit else { return out }
        if !limitCountsChanges {
            if out.count > limit { out.removeFirst(out.count - limit) }
            return out
        }
        var left = limit
        var newest: [HistoryTransaction] = []
        for var t in out.reversed() where left > 0 {
            if t.changes.count > left { t.changes.removeFirst(t.changes.count - left) }
            left -= t.changes.count
            newest.append(t)
        }
        return newest.reversed()
    }

    /// How many of `transactions` the limit counts: transactions, or changes.
    func limitCount(of transactions: [HistoryTransaction]) -> Int {
        limitCountsChanges ? transactions.reduce(0) { $0 + $1.changes.count } : transactions.count
    }
}

extension Schema {
    /// The names of a type and its subclasses, for `HistoryFilter.types`.
    public func deepTypeNames(_ name: String) -> Set<String>? {
        entity(named: name).map { Set($0.closure.map { entities[$0].name }) }
    }
}
