import TripStoreFormat
import TripStoreJSON

/// Where the change feed finds each insert's envelope, the object right
/// after its transaction: a walk back from now, or, for the objects of a
/// bulk import that nothing changed since, their records as they are. A
/// walk back holds every envelope it makes as a JSON tree, which an import
/// of a million objects cannot afford; its records are already there.
struct InsertEnvelopeSources {
    /// Envelopes made by the walk back, by token and id.
    let walked: [Int64: [String: JSONValue]]
    /// The bulk imports whose objects are read from their records.
    let bulk: Set<Int64>
    /// Per bulk import, the ids that changed after it: walked instead.
    let changedSince: [Int64: Set<String>]

    /// Whether the insert of `id` in bulk import `token` is written from its record.
    func fromRecord(_ token: Int64, _ id: String) -> Bool {
        bulk.contains(token) && !(changedSince[token]?.contains(id) ?? false)
    }

    /// Transactions of at least this many inserts and nothing else are bulk
    /// imports to the feed: their unchanged objects are written from records.
    static let bulkInsertThreshold = 64

    /// Whether `t` is a bulk import: only inserts, at least `bulkInsertThreshold`.
    /// (A redacted insert's envelope is the object as it is now either way.)
    static func isBulkInsert(_ t: HistoryTransaction) -> Bool {
        t.changes.count >= bulkInsertThreshold && t.changes.allSatisfy { $0.kind == .insert }
    }

    /// The sources of the insert envelopes of `transactions` (retained
    /// history, in any order). An object of a bulk import is walked back
    /// when a later transaction changed it, or when a migration came after.
    /// - Throws: what reading history and time travel throw, and
    ///   `imageDamaged` when a bulk import's records are read from a damaged image.
    static func of(_ transactions: [HistoryTransaction], in store: Store) throws -> InsertEnvelopeSources {
        guard let first = transactions.map(\.token).min() else { return InsertEnvelopeSources(walked: [:], bulk: [], changedSince: [:]) }
        let bulk = Set(transactions.filter(isBulkInsert).map(\.token))
        var walked = Set(transactions.map(\.token)).subtracting(bulk)
        var changedSince: [Int64: Set<String>] = [:]
        if let earliest = bulk.min() {
            // From the newest transaction back (printed or not), the ids changed after it.
            var changedLater = Set<String>(), migratedLater = false
            for t in try store.history(after: earliest - 1).reversed() {
                if bulk.contains(t.token) {
                    let changed = migratedLater ? Set(t.changes.map(\.id))
                        : changedLater.isEmpty ? [] : Set(t.changes.lazy.map(\.id).filter { changedLater.contains($0) })
                    if !changed.isEmpty {
                        walked.insert(t.token)
                        changedSince[t.token] = changed
                    }
                    if t.token == earliest { break }
                }
                for c in t.changes {
                    if c.kind == .migrate { migratedLater = true } else { changedLater.insert(c.id) }
                }
            }
            // Records are read whole: a damaged image says so here, not in the middle of the output.
            guard store.table.checkEverything() else { throw StoreError.imageDamaged(file: store.imagePath, detail: store.table.imageDamage ?? "") }
        }
        let envelopes = walked.isEmpty ? [:] : try Rewinder(store).insertEnvelopes(after: first - 1, wanted: walked) { token, id in
            changedSince[token].map { $0.contains(id) } ?? true
        }
        return InsertEnvelopeSources(walked: envelopes, bulk: bulk, changedSince: changedSince)
    }
}
