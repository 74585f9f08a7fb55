/// A moment as written in ISO 8601 text, kept exactly: whole seconds since
/// the reference date and the decimal fraction as written (up to 18 digits).
/// A commit's time is what the store prints for it; text may say more, and
/// `2026-11-16T09:00:01.95399999Z` is before a commit at `…01.954Z` even
/// where both round to the same `Double`.
///
/// ```swift
/// let commitTimestamp = 785_062_801.954    // a commit's time, seconds since 2001
/// if let t = ISOTime("2026-11-16T09:00:01.95399999Z") {
///     print(t.isAtOrAfter(commitTimestamp))   // exact, not after rounding
/// }
/// ```
public struct ISOTime: Sendable, Equatable, CustomStringConvertible {
    /// Whole seconds since the reference date (2001-01-01T00:00:00Z).
    let whole: Int
    /// The fraction's digits as an integer, and how many digits it has.
    let fraction: Int64
    let places: Int
    /// The moment, when it was given as a `Double` (compared as it is).
    let seconds: Double?

    /// Parses a date-only (midnight UTC) or date-time with `Z` or an offset.
    public init?(_ text: String) {
        var text = text
        guard let parts = text.withUTF8({ ISODate.parts(bytes: $0) }) else { return nil }
        (whole, fraction, places, seconds) = (parts.whole, parts.fraction, parts.places, nil)
    }

    /// The moment a `Double` of seconds since the reference date names.
    public init(seconds: Double) {
        (whole, fraction, places) = (0, 0, 0)
        self.seconds = seconds
    }

    /// The nearest `Double` (seconds since the reference date).
    public var approximateSeconds: Double {
        seconds ?? ISODate.value(whole: whole, fraction: fraction, places: places)
    }

    public var description: String { ISODate.format(approximateSeconds) }

    /// Whether a commit at `t` (seconds since the reference date) is at or
    /// before this moment. `t` counts as the time its text says (what the
    /// store prints for it), and the two are compared digit for digit.
    public func isAtOrAfter(_ t: Double) -> Bool { order(of: t) <= 0 }

    /// Whether a commit at `t` is strictly before this moment (see `isAtOrAfter`).
    public func isAfter(_ t: Double) -> Bool { order(of: t) < 0 }

    /// A commit at `t` against this moment: negative before, 0 the same, positive after.
    func order(of t: Double) -> Int {
        if let seconds { return t < seconds ? -1 : t == seconds ? 0 : 1 }
        guard ISODate.isWritable(t) else { return t < 0 ? -1 : 1 }
        let other = ISODate.textParts(t)
        if other.whole != whole { return other.whole < whole ? -1 : 1 }
        let a = Self.scaled(other.fraction, other.places), b = Self.scaled(fraction, places)
        return a < b ? -1 : a == b ? 0 : 1
    }

    /// A fraction of `places` digits as 18 digits (it fits an `Int64`).
    private static func scaled(_ fraction: Int64, _ places: Int) -> Int64 {
        var v = fraction
        for _ in places..<18 { v *= 10 }
        return v
    }
}
