import TripStoreJSON

// History prints as the audit view reads it, not as a dump of its fields:
// `print(transaction)` in a program shows what happened, in the words of
// `tripstore history`.

extension ValueChange: CustomStringConvertible {
    /// `name: old → new`, each value as JSON.
    public var description: String { "\(name): \(old.debugDescription) → \(new.debugDescription)" }
}

extension Change: CustomStringConvertible {
    /// One line: the kind, the type and id, then what changed (an update's
    /// values, a delete's tombstone, a migration's fingerprints).
    public var description: String {
        switch kind {
        case .insert, .redact:
            return "\(kind.rawValue) \(type) \(id)"
        case .update:
            return "update \(type) \(id): " + values.map(\.description).joined(separator: ", ")
        case .delete:
            return "delete \(type) \(id)" + (tombstone.isEmpty ? "" : " " + JSONValue.object(tombstone).debugDescription)
        case .migrate:
            guard let m = migration else { return "migrate" }
            return "migrate \(m.from) → \(m.to)"
        }
    }
}

extension HistoryTransaction: CustomStringConvertible {
    /// How many changes a transaction's description lists before it says how many more there are.
    static let printedChanges = 10

    /// `#token date author:` and its changes, one per line (the first ten).
    public var description: String {
        var text = "#\(token) \(ISODate.format(timestamp)) \(author)"
        for c in changes.prefix(Self.printedChanges) { text += "\n  " + c.description }
        if changes.count > Self.printedChanges { text += "\n  … and \(changes.count - Self.printedChanges) more" }
        return text
    }
}
