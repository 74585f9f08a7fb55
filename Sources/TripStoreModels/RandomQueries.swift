/// Deterministic random queries over the trip schema (every construct of
/// the query language), for differential and fuzz tests: the same state
/// gives the same queries.
public struct RandomQueries: Sendable {
    public var random: SplitMix64

    public init(state: UInt64) {
        random = SplitMix64(seed: state)
    }

    public mutating func next() -> UInt64 { random.next() }

    public mutating func int(_ n: Int) -> Int { Int(next() % UInt64(n)) }
    public mutating func pick<T>(_ xs: [T]) -> T { xs[int(xs.count)] }

    static let comparisons = ["==", "!=", "<", "<=", ">", ">="]

    /// One comparison, type test, quantifier or count.
    public mutating func atom() -> String {
        switch int(16) {
        case 0: return "is " + pick(["Trip", "BusinessTrip", "PersonalTrip"])
        case 1: return "is exactly " + pick(["Trip", "BusinessTrip", "PersonalTrip"])
        case 2: return "destination " + pick(["~", "^=", "<", ">="]) + " " + pick(["\"rome\"", "\"ZÜRICH\"", "\"zurich\"", "\"málaga\"", "\"malaga\"", "\"\"", "\"york\"", "\"LON\"",
                                                                          "\"e\u{301}ahov\"", "\"\u{e9}ahov\"", "\"Zu\u{308}rich\""])
        case 3: return "name " + pick(["~ \"draft\"", "^= \"Q1\"", "== \"Q3 summit\"", "< \"M\"", ">= \"Trip\""])
        case 4: return "startDate " + pick(Self.comparisons) + " " + pick(["2026-06-01", "2023-01-01T12:00:00Z", "\"2025-05-05\""])
        case 5: return "reason " + pick(["==", "!="]) + " " + pick(["\"family\"", "\"vacation\"", "\"unknown\""])
        case 6: return "reason in [" + pick(["\"family\", \"reunion\"", "", "\"wellness\","]) + "]"
        case 7: return "perDiemRate " + pick(Self.comparisons) + " " + pick(["100", "150.5", "0", "2e2"])
        case 8: return "notes " + pick(["== nil", "!= nil", "!= \"x\"", "~ \"book\""])
        case 9: return "expenseCode " + pick(["in [\"EX-1\", \"EX-2\"]", "== \"EX-3\"", "> \"EX-30\""])
        case 10: return "livingAccommodation " + pick(["== nil", "!= nil"])
        case 11: return "livingAccommodation.name " + pick(["~ \"hilton\"", "== nil", "^= \"apartment\"", "!= nil"])
        case 12: return pick(["any", "all"]) + " businessMeals.cost " + pick(Self.comparisons) + " " + pick(["80", "20", "200"])
        case 13: return pick(["any", "all"]) + " frequentFlyerCodes " + pick(["^= \"LH\"", "== \"IB-12345678\"", "~ \"-1\""])
        case 14: return "count(" + pick(["bucketList", "venuePasses", "businessMeals"]) + ") " + pick(Self.comparisons) + " " + pick(["0", "2", "3"])
        default: return "itinerary.location " + pick(["~ \"office\"", "== nil", "!= nil"])
        }
    }

    /// A predicate of atoms under `&&`, `||` and `!`, up to three levels deep.
    public mutating func query(depth: Int = 0) -> String {
        if depth > 2 || int(3) == 0 { return (int(5) == 0 ? "!" : "") + atom() }
        let a = query(depth: depth + 1), b = query(depth: depth + 1)
        switch int(4) {
        case 0: return "(\(a) || \(b))"
        case 1: return "!(\(a) && \(b))"
        default: return "\(a) && \(b)"
        }
    }
}
