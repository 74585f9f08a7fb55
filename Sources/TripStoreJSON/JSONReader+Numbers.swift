#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONReader {
    private static let exactPowersOfTen: [Double] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11,
        1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
    ]

    /// Reads a number per RFC 8259's grammar: no leading zeros, no '+', no bare '.'.
    package mutating func parseNumber() throws(JSONSyntaxError) -> JSONValue {
        let start = index
        var negative = false
        if buffer[index] == UInt8(ascii: "-") {
            negative = true
            index += 1
        }
        guard index < buffer.count, isDigit(buffer[index]) else {
            throw error("expected a digit in number", at: index)
        }
        var mantissa: UInt64 = 0
        var digits = 0
        var decimalExponent = 0
        if buffer[index] == UInt8(ascii: "0") {
            index += 1
            if index < buffer.count, isDigit(buffer[index]) {
                throw error("leading zeros are not allowed in numbers", at: start)
            }
        } else {
            while index < buffer.count, isDigit(buffer[index]) {
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(buffer[index] - 48)
                    digits += 1
                } else {
                    decimalExponent += 1
                    digits += 1
                }
                index += 1
            }
        }
        var isInteger = true
        var fractionIsZero = true
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else {
                throw error("expected a digit after '.' in number")
            }
            while index < buffer.count, isDigit(buffer[index]) {
                if buffer[index] != UInt8(ascii: "0") { fractionIsZero = false }
                if digits < 19 {
                    mantissa = mantissa &* 10 &+ UInt64(buffer[index] - 48)
                    if mantissa != 0 || digits > 0 { digits += 1 }
                    decimalExponent -= 1
                } else {
                    digits += 1
                }
                index += 1
            }
        }
        var exponent = 0
        if index < buffer.count, buffer[index] | 0x20 == UInt8(ascii: "e") {
            isInteger = false
            index += 1
            var expNegative = false
            if index < buffer.count, buffer[index] == UInt8(ascii: "+") || buffer[index] == UInt8(ascii: "-") {
                expNegative = buffer[index] == UInt8(ascii: "-")
                index += 1
            }
            guard index < buffer.count, isDigit(buffer[index]) else {
                throw error("expected a digit in the exponent of number")
            }
            while index < buffer.count, isDigit(buffer[index]) {
                if exponent < 100_000 { exponent = exponent * 10 + Int(buffer[index] - 48) }
                index += 1
            }
            if expNegative { exponent = -exponent }
        }
        if isInteger && digits <= 18 {
            let v = Int64(mantissa)
            return .int(negative ? -v : v)
        }
        if isInteger && digits == 19 && decimalExponent == 0 {
            if negative, mantissa <= UInt64(Int64.max) + 1 {
                return .int(mantissa == UInt64(Int64.max) + 1 ? Int64.min : -Int64(mantissa))
            }
            if !negative, mantissa <= UInt64(Int64.max) { return .int(Int64(mantissa)) }
        }
        // A whole number written with a fraction or an exponent (`1.0`,
        // `12345678901234567.0`, `9.2233720368547758e18`) is that integer
        // exactly, where a Double would round it. A fraction with a digit
        // other than 0 and no positive exponent is never whole: most numbers
        // with a fraction skip the check.
        if !(fractionIsZero == false && exponent <= 0), let whole = wholeNumber(from: start, to: index) {
            return .int(whole)
        }
        // Clinger's fast path: exact when the mantissa and the power of ten are exact doubles.
        let e10 = decimalExponent + exponent
        if digits <= 15 && mantissa < (1 << 53) && e10 >= -22 && e10 <= 22 {
            var d = Double(mantissa)
            if e10 < 0 { d /= JSONReader.exactPowersOfTen[-e10] } else { d *= JSONReader.exactPowersOfTen[e10] }
            return .double(negative ? -d : d)
        }
        return .double(slowDouble(from: start, to: index))
    }

    @inline(__always) func isDigit(_ b: UInt8) -> Bool { b &- 48 < 10 }

    /// The integer a number's text (already checked against the grammar)
    /// names exactly, if it names one within `Int64`; nil for a fraction
    /// (however small: `1e-400` is not 0) and a number past `Int64`.
    func wholeNumber(from start: Int, to end: Int) -> Int64? {
        var i = start
        let negative = buffer[i] == UInt8(ascii: "-")
        if negative { i += 1 }
        // The significant digits, as (first, past the last) nonzero digit
        // positions in the text, and where the decimal point is.
        var digitsStart = -1, digitsEnd = -1, point = -1
        var j = i
        while j < end, isDigit(buffer[j]) || buffer[j] == UInt8(ascii: ".") {
            if buffer[j] == UInt8(ascii: ".") {
                point = j
            } else if buffer[j] != UInt8(ascii: "0") {
                if digitsStart < 0 { digitsStart = j }
                digitsEnd = j + 1
            }
            j += 1
        }
        let mantissaEnd = j
        if point < 0 { point = mantissaEnd }
        var exponent = 0
        if j < end {  // 'e' or 'E', a sign, digits
            j += 1
            var expNegative = false
            if buffer[j] == UInt8(ascii: "+") || buffer[j] == UInt8(ascii: "-") {
                expNegative = buffer[j] == UInt8(ascii: "-")
                j += 1
            }
            while j < end {
                if exponent < 100_000 { exponent = exponent * 10 + Int(buffer[j] - 48) }
                j += 1
            }
            if expNegative { exponent = -exponent }
        }
        guard digitsStart >= 0 else { return 0 }  // -0 too: a Double's -0.0 is written as 0
        // The value is digits[digitsStart..<digitsEnd] · 10^scale.
        let lastDigitPlace = digitsEnd <= point ? point - digitsEnd : -(digitsEnd - point - 1)
        let scale = lastDigitPlace + exponent
        guard scale >= 0 else { return nil }
        var magnitude: UInt64 = 0
        var count = 0
        for k in digitsStart..<digitsEnd where buffer[k] != UInt8(ascii: ".") {
            count += 1
            guard count <= 20 else { return nil }
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (a, o2) = m.addingReportingOverflow(UInt64(buffer[k] - 48))
            guard !o1, !o2 else { return nil }
            magnitude = a
        }
        guard count + scale <= 20 else { return nil }
        for _ in 0..<scale {
            let (m, o) = magnitude.multipliedReportingOverflow(by: 10)
            guard !o else { return nil }
            magnitude = m
        }
        if negative {
            guard magnitude <= UInt64(Int64.max) + 1 else { return nil }
            return magnitude == UInt64(Int64.max) + 1 ? Int64.min : -Int64(magnitude)
        }
        return magnitude <= UInt64(Int64.max) ? Int64(magnitude) : nil
    }

    /// Correctly rounded conversion of the number's text by the C library.
    func slowDouble(from start: Int, to end: Int) -> Double {
        var text = Array(UnsafeBufferPointer(rebasing: buffer[start..<end]))
        text.append(0)
        return text.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { strtod($0, nil) }
        }
    }
}
