import TripStoreFormat
import TripStoreJSON
import TripStoreSystem

/// The names one type and its subclasses had in each part of retained
/// history: migrations may rename, add or remove entities, and a name may
/// mean another entity before a migration than after it.
public struct HistoryTypeNames: Sendable, Equatable {
    /// Each era of history, from the token that starts it (a migration's),
    /// with the names the type and its subclasses had then.
    public let eras: [Era]

    public struct Era: Sendable, Equatable {
        /// The first token of the era (`Int64.min` for the first).
        public let from: Int64
        public let names: Set<String>
    }

    /// Whether a change of `type` recorded at `token` is one of the type's.
    public func contains(_ type: String, at token: Int64) -> Bool {
        (eras.last { $0.from <= token }?.names.contains(type)) ?? false
    }

    /// Every name the type had, in any era.
    public var allNames: Set<String> { eras.reduce(into: Set<String>()) { $0.formUnion($1.names) } }
}

extension Store {
    /// The names under which retained history records objects of type
    /// `name` and its subclasses, era by era (each migration starts one): a
    /// type renamed since is found under its former names, a name that only
    /// history knows (an entity removed or renamed) counts too. Nil for a
    /// name that no schema of retained history has.
    /// - Throws: `StoreError.damaged` naming a history line it cannot read.
    public func historyTypeNames(_ name: String) throws -> HistoryTypeNames? {
        let plans = try migrationPlans().sorted { $0.key < $1.key }
        // Era k runs under the schema before migration k; the last under the store's own.
        let schemas = plans.map(\.value.from) + [schema]
        guard let start = schemas.indices.reversed().first(where: { schemas[$0].entity(named: name) != nil }) else { return nil }
        var entity = [String?](repeating: nil, count: schemas.count)
        entity[start] = name
        // Back: the entity that migration k-1 carried into this one.
        var k = start
        while k > 0, let current = entity[k] {
            let plan = plans[k - 1].value
            let target = plan.to.entity(named: current)?.id
            entity[k - 1] = plan.mappings.firstIndex { $0 != nil && $0?.entity == target }.map { plan.from.entities[$0].name }
            k -= 1
        }
        // Forward: what migration k carried it into.
        k = start
        while k < plans.count, let current = entity[k] {
            let plan = plans[k].value
            entity[k + 1] = plan.from.entity(named: current).flatMap { plan.mappings[$0.id] }.map { plan.to.entities[$0.entity].name }
            k += 1
        }
        var eras: [HistoryTypeNames.Era] = []
        for (k, e) in entity.enumerated() {
            let names = e.flatMap { schemas[k].deepTypeNames($0) } ?? []
            eras.append(.init(from: k == 0 ? Int64.min : plans[k - 1].key, names: names))
        }
        return HistoryTypeNames(eras: eras)
    }
}
