import TripStoreCore
import TripStoreFormat
import TripStoreJSON
import Foundation

/// What to fetch: a model type (its subclasses included), a predicate as
/// Foundation's `Predicate` or the query language, sorting and paging.
///
/// ```swift
/// let rome = FetchDescriptor<Trip>(predicate: #Predicate { $0 is BusinessTrip && $0.destination.contains("Rome") },
///                                  sortBy: [SortDescriptor(\.startDate)])
/// let sameRome = FetchDescriptor<Trip>(query: #"is BusinessTrip && destination ~ "Rome""#)
/// ```
public struct FetchDescriptor<T: PersistentModel> {
    /// The Foundation predicate objects must match (nil: all).
    public var predicate: Predicate<T>?
    /// More Foundation predicates that objects must match as well (ANDed
    /// with `predicate`): Linux Foundation's `#Predicate` cannot call
    /// another predicate's `evaluate`, so compose them here instead.
    public var morePredicates: [Predicate<T>] = []
    /// A predicate in the query language, used when `predicate` is nil.
    public var query: String?
    /// Sort order, on declared properties.
    public var sortBy: [SortDescriptor<T>]
    /// At most this many objects.
    public var fetchLimit: Int?
    /// Objects skipped before the first returned.
    public var fetchOffset: Int?
    /// The attributes a fetch fills (empty: all of them). Any other
    /// attribute of a fetched object is a fault, loaded when first read.
    public var propertiesToFetch: [PartialKeyPath<T>] = []
    /// Relationships a fetch loads at once instead of on first access.
    public var relationshipKeyPathsForPrefetching: [PartialKeyPath<T>] = []

    /// Objects of `T` (and its subclasses) matching `predicate`.
    public init(predicate: Predicate<T>? = nil, sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicate
        self.sortBy = sortBy
    }

    /// Objects of `T` matching every one of `predicates`, as SwiftData apps
    /// compose a class predicate and a search predicate.
    ///
    /// ```swift
    /// let kind = #Predicate<Trip> { $0 is BusinessTrip }
    /// let search = #Predicate<Trip> { $0.destination.contains("Rome") }
    /// let both = FetchDescriptor(predicates: [kind, search], sortBy: [SortDescriptor(\.startDate)])
    /// ```
    public init(predicates: [Predicate<T>], sortBy: [SortDescriptor<T>] = []) {
        self.predicate = predicates.first
        self.morePredicates = Array(predicates.dropFirst())
        self.sortBy = sortBy
    }

    /// Both descriptors' predicates; this one's sorting and paging.
    public static func && (lhs: FetchDescriptor<T>, rhs: FetchDescriptor<T>) -> FetchDescriptor<T> {
        var out = lhs
        let extra = (rhs.predicate.map { [$0] } ?? []) + rhs.morePredicates
        if out.predicate == nil, let first = extra.first {
            out.predicate = first
            out.morePredicates += extra.dropFirst()
        } else {
            out.morePredicates += extra
        }
        return out
    }

    /// Every Foundation predicate the descriptor holds.
    var allPredicates: [Predicate<T>] { (predicate.map { [$0] } ?? []) + morePredicates }

    /// Objects of `T` matching a query-language predicate (`is ElectricCar && rangeKilometres > 300`).
    public init(query: String, sortBy: [SortDescriptor<T>] = []) {
        self.query = query
        self.sortBy = sortBy
    }
}

/// How a fetch was answered: the engine query its predicate became, the
/// plan, and whether each candidate was then tested with the Foundation predicate.
public struct FetchPlan: CustomStringConvertible {
    /// The query-language text of the translated predicate.
    public var query: String
    /// The engine's plan.
    public var plan: QueryPlan
    /// True when the translation was not exact, so each candidate was also
    /// evaluated with the Foundation predicate.
    public var evaluatedCandidates: Bool

    /// The query and its plan, as `--explain` prints them.
    public var description: String {
        "query: \(query.isEmpty ? "(all)" : query)\n\(plan)"
            + (evaluatedCandidates ? "\nthen each candidate is tested with the Foundation predicate" : "")
    }
}
