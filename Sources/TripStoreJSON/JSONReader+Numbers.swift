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
        if index < buffer.count, buffer[index] == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard index < buffer.count, isDigit(buffer[index]) else {
                throw error("expected a digit after '.' in number")
            }
            while index < buffer.count, isDigit(buffer[index]) {
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

    /// Correctly rounded conversion of the number's text by the C library.
    func slowDouble(from start: Int, to end: Int) -> Double {
        var text = Array(UnsafeBufferPointer(rebasing: buffer[start..<end]))
        text.append(0)
        return text.withUnsafeBufferPointer { p in
            p.baseAddress!.withMemoryRebound(to: CChar.self, capacity: p.count) { strtod($0, nil) }
        }
    }
}
