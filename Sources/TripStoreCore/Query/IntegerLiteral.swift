/// Where a number literal's exact value lies among the `Int` values, read
/// from its text: a `Double` would round `9007199254740992.5` to a whole
/// number and `-9223372036854775809` to `Int.min`, and an `Int` attribute
/// compares with the value written (the query language's exact values).
enum IntegerLiteral: Equatable {
    /// A whole number an `Int` holds.
    case exact(Int64)
    /// Strictly between `floor` and `floor + 1`.
    case between(floor: Int64)
    /// Above `Int.max` or below `Int.min`.
    case above, below

    /// The literal's place; nil for text that is not a decimal number
    /// (sign, digits, an optional fraction and exponent).
    init?(_ text: String) {
        var bytes = Array(text.utf8)[...]
        var negative = false
        if let s = bytes.first, s == UInt8(ascii: "-") || s == UInt8(ascii: "+") {
            negative = s == UInt8(ascii: "-")
            bytes = bytes.dropFirst()
        }
        func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        let whole = bytes.prefix(while: isDigit)
        bytes = bytes.dropFirst(whole.count)
        var fraction = bytes[bytes.startIndex..<bytes.startIndex]
        if bytes.first == UInt8(ascii: ".") {
            fraction = bytes.dropFirst().prefix(while: isDigit)
            bytes = bytes.dropFirst(1 + fraction.count)
        }
        guard !whole.isEmpty || !fraction.isEmpty else { return nil }
        // The exponent, held within ±100,000: past that every value with a
        // nonzero digit is out of range or strictly between 0 and ±1 either way.
        var exponent = 0
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var minus = false
            if let s = bytes.first, s == UInt8(ascii: "-") || s == UInt8(ascii: "+") {
                minus = s == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            let digits = bytes.prefix(while: isDigit)
            guard !digits.isEmpty else { return nil }
            for d in digits { exponent = min(100_000, exponent * 10 + Int(d - UInt8(ascii: "0"))) }
            if minus { exponent = -exponent }
            bytes = bytes.dropFirst(digits.count)
        }
        guard bytes.isEmpty else { return nil }
        // The digits without leading zeros, and how many of them stand before the point.
        let all = Array(whole) + Array(fraction)
        guard let firstNonzero = all.firstIndex(where: { $0 != UInt8(ascii: "0") }) else {
            self = .exact(0)
            return
        }
        let digits = all[firstNonzero...]
        let beforePoint = whole.count - firstNonzero + exponent
        // The whole part's magnitude (nil: more than an Int holds) and whether a nonzero digit follows it.
        var magnitude: UInt64? = 0
        if beforePoint > 19 {
            magnitude = nil
        } else if beforePoint > 0 {
            for k in 0..<beforePoint {
                let d = k < digits.count ? UInt64(digits[digits.startIndex + k] - UInt8(ascii: "0")) : 0
                magnitude = magnitude.flatMap { m in
                    let (times, o1) = m.multipliedReportingOverflow(by: 10)
                    let (sum, o2) = times.addingReportingOverflow(d)
                    return o1 || o2 ? nil : sum
                }
            }
        }
        let hasFraction = digits.dropFirst(max(0, beforePoint)).contains { $0 != UInt8(ascii: "0") }
        guard let magnitude else {
            self = negative ? .below : .above
            return
        }
        let limit: UInt64 = negative ? 1 << 63 : UInt64(Int64.max)
        if magnitude > limit || (negative && magnitude == limit && hasFraction) {
            self = negative ? .below : .above
        } else if negative {
            let value = magnitude == 1 << 63 ? Int64.min : -Int64(magnitude)
            self = hasFraction ? .between(floor: value - 1) : .exact(value)
        } else {
            self = hasFraction ? .between(floor: Int64(magnitude)) : .exact(Int64(magnitude))
        }
    }
}
