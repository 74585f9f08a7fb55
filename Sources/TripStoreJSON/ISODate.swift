/// ISO 8601 dates without Foundation's formatters (which are slow and
/// locale-dependent): `2026-03-02`, `2026-03-02T09:30:00Z`,
/// `2026-03-02T09:30:00.250+02:00`. Values are seconds since
/// 2001-01-01T00:00:00Z, Foundation's reference date, so that a `Date`
/// converts to and from its stored value exactly.
public enum ISODate {
    /// Seconds from 1970-01-01 to the reference date 2001-01-01 (UTC).
    public static let referenceOffset: Int = 978_307_200

    /// Whether a date value is one that ISO 8601 text of four-digit years can
    /// hold (0001-01-01 up to 9999-12-31).
    @inline(__always) public static func isWritable(_ seconds: Double) -> Bool {
        seconds >= -63_113_904_000 && seconds < 252_423_993_600
    }

    /// Powers of ten as Doubles, exact up to 10^22.
    static let powersOfTen: [Double] = (0...18).map { n in (0..<n).reduce(1.0) { r, _ in r * 10 } }

    /// A position in the text with the two steps the parser repeats. A value
    /// type, so its steps need no run-time exclusivity checks (a nested
    /// function capturing a local `var` would box it and check every access).
    struct Cursor {
        let s: UnsafeBufferPointer<UInt8>
        var i = 0

        @inline(__always) mutating func digits(_ n: Int) -> Int? {
            guard i + n <= s.count else { return nil }
            var v = 0
            for k in 0..<n {
                let d = s[i + k] &- 48
                guard d < 10 else { return nil }
                v = v * 10 + Int(d)
            }
            i += n
            return v
        }

        @inline(__always) mutating func expect(_ c: UInt8) -> Bool {
            guard i < s.count, s[i] == c else { return false }
            i += 1
            return true
        }
    }

    /// Parses a date-only (midnight UTC) or date-time with `Z` or an offset.
    public static func parse(_ text: String) -> Double? {
        var text = text
        return text.withUTF8 { parse(bytes: $0) }
    }

    package static func parse(bytes s: UnsafeBufferPointer<UInt8>) -> Double? {
        parts(bytes: s).map { value(whole: $0.whole, fraction: $0.fraction, places: $0.places) }
    }

    /// The text's moment as whole seconds since the reference date and the
    /// fraction's digits (digits past 18 are dropped).
    static func parts(bytes s: UnsafeBufferPointer<UInt8>) -> (whole: Int, fraction: Int64, places: Int)? {
        var c = Cursor(s: s)
        guard let year = c.digits(4), c.expect(UInt8(ascii: "-")), let month = c.digits(2),
              c.expect(UInt8(ascii: "-")), let day = c.digits(2) else { return nil }
        guard month >= 1 && month <= 12 && day >= 1 && day <= daysIn(month: month, year: year) else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        if c.i == s.count { return (days * 86400 - referenceOffset, 0, 0) }
        guard c.expect(UInt8(ascii: "T")) || c.expect(UInt8(ascii: "t")) || c.expect(UInt8(ascii: " ")) else { return nil }
        guard let hour = c.digits(2), c.expect(UInt8(ascii: ":")), let minute = c.digits(2) else { return nil }
        var second = 0
        // The fraction as an integer of `places` digits (digits past 18 are dropped).
        var fractionDigits: Int64 = 0
        var places = 0
        if c.expect(UInt8(ascii: ":")) {
            guard let sec = c.digits(2) else { return nil }
            second = sec
            if c.expect(UInt8(ascii: ".")) {
                var any = false
                while c.i < s.count, s[c.i] &- 48 < 10 {
                    if places < 18 {
                        fractionDigits = fractionDigits * 10 + Int64(s[c.i] - 48)
                        places += 1
                    }
                    c.i += 1
                    any = true
                }
                guard any else { return nil }
            }
        }
        guard hour <= 23 && minute <= 59 && second <= 60 else { return nil }
        var offset = 0
        if c.expect(UInt8(ascii: "Z")) || c.expect(UInt8(ascii: "z")) {
        } else if c.i < s.count, s[c.i] == UInt8(ascii: "+") || s[c.i] == UInt8(ascii: "-") {
            let sign = s[c.i] == UInt8(ascii: "-") ? -1 : 1
            c.i += 1
            guard let oh = c.digits(2) else { return nil }
            _ = c.expect(UInt8(ascii: ":"))
            guard let om = c.digits(2), oh <= 23, om <= 59 else { return nil }
            offset = sign * (oh * 3600 + om * 60)
        } else {
            return nil
        }
        guard c.i == s.count else { return nil }
        return (days * 86400 + hour * 3600 + minute * 60 + second - offset - referenceOffset, fractionDigits, places)
    }

    /// The stored value of whole seconds and a decimal fraction: the one
    /// arithmetic that both reading and writing use, so text written for a
    /// value reads back as exactly that value.
    @inline(__always) static func value(whole: Int, fraction: Int64, places: Int) -> Double {
        places == 0 ? Double(whole) : Double(whole) + Double(fraction) / powersOfTen[places]
    }

    /// `2026-03-02T09:30:00Z`; with `.250` when there are milliseconds, and
    /// more digits only where the value needs them to read back equal.
    public static func format(_ seconds: Double) -> String {
        var bytes: [UInt8] = []
        append(seconds, to: &bytes)
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func append(_ seconds: Double, to out: inout [UInt8]) {
        // Formatted on the stack and appended once: a snapshot writes millions.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: maxLength) { text in
            let n = write(seconds, to: text.baseAddress!)
            out.append(contentsOf: UnsafeBufferPointer(rebasing: text[0..<n]))
        }
    }

    /// The most bytes `write` writes: 19 for the seconds, 19 for a fraction, the `Z`.
    package static let maxLength = 39
    private static let unwritable = Array("0001-01-01T00:00:00Z".utf8)

    /// What a date's text says, as whole seconds and the fraction's digits:
    /// the fewest digits, from milliseconds on, that read back as `seconds`
    /// (a writable one; see `isWritable`).
    static func textParts(_ seconds: Double) -> (whole: Int, fraction: Int64, places: Int) {
        var whole = Int(seconds.rounded(.down))
        var fraction: Int64 = 0
        var places = 0
        if Double(whole) != seconds {
            let rest = seconds - Double(whole)
            for n in stride(from: 3, through: 18, by: 1) {
                var m = Int64((rest * powersOfTen[n]).rounded())
                var w = whole
                if Double(m) >= powersOfTen[n] {
                    m -= Int64(powersOfTen[n])
                    w += 1
                }
                if value(whole: w, fraction: m, places: n) == seconds || n == 18 {
                    (whole, fraction, places) = (w, m, n)
                    break
                }
            }
            // Trailing zeros beyond the milliseconds say nothing.
            while places > 3 && fraction % 10 == 0 {
                fraction /= 10
                places -= 1
            }
        }
        return (whole, fraction, places)
    }

    /// Writes the date's text (no quotes) at `text`, which has room for
    /// `maxLength` bytes; returns how many it wrote.
    package static func write(_ seconds: Double, to text: UnsafeMutablePointer<UInt8>) -> Int {
        guard isWritable(seconds) else {
            text.update(from: unwritable, count: unwritable.count)
            return unwritable.count
        }
        let (whole, fraction, places) = textParts(seconds)
        let unix = whole + referenceOffset
        var days = unix / 86_400
        var rem = unix % 86_400
        if rem < 0 {
            rem += 86_400
            days -= 1
        }
        let (y, m, d) = civilFromDays(days)
        var n = 0
        func put(_ v: Int64, _ width: Int) {
            var v = v
            for k in stride(from: width - 1, through: 0, by: -1) {
                text[n + k] = UInt8(48 + v % 10)
                v /= 10
            }
            n += width
        }
        func put(_ c: Unicode.Scalar) {
            text[n] = UInt8(ascii: c)
            n += 1
        }
        put(Int64(y), 4); put("-"); put(Int64(m), 2); put("-"); put(Int64(d), 2); put("T")
        put(Int64(rem / 3600), 2); put(":"); put(Int64(rem / 60 % 60), 2); put(":"); put(Int64(rem % 60), 2)
        if places > 0 && fraction != 0 {
            put(".")
            put(fraction, places)
        }
        put("Z")
        return n
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    // Howard Hinnant's days-from-civil algorithms.
    /// Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
    public static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let mp = (month + 9) % 12
        let doy = (153 * mp + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146097 + doe - 719468
    }

    static func civilFromDays(_ z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719468
        let era = (z >= 0 ? z : z - 146096) / 146097
        let doe = z - era * 146097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }
}
