/// A context's one instance per id, held weakly: an object the program no
/// longer holds (and that has no unsaved change, which the context holds
/// itself) is freed, and a later fetch makes a new instance. Objects hold
/// their context strongly, so there is no cycle to leak.
struct IdentityMap {
    private struct Entry {
        weak var model: PersistentModel?
    }

    private var entries: [String: Entry] = [:]
    /// Entries added since dead ones were last swept.
    private var addedSinceSweep = 0

    subscript(id: String) -> PersistentModel? {
        get { entries[id]?.model }
        set {
            guard let newValue else {
                entries[id] = nil
                return
            }
            entries[id] = Entry(model: newValue)
            addedSinceSweep += 1
        }
    }

    /// The live instances.
    var values: [PersistentModel] { entries.values.compactMap(\.model) }

    /// Drops the entries of freed instances once as many were added as the
    /// map holds (amortised constant time); returns their ids so the caller
    /// can forget what it kept about them.
    mutating func sweepIfDue() -> [String] {
        guard addedSinceSweep > max(1024, entries.count / 2) else { return [] }
        addedSinceSweep = 0
        let dead = entries.compactMap { $0.value.model == nil ? $0.key : nil }
        for id in dead { entries[id] = nil }
        return dead
    }
}
