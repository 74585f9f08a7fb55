#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Splits a buffer into lines for JSON Lines input, numbering them from 1.
public enum JSONLines {
    /// Calls `body(lineNumber, range)` for every line that is not blank.
    /// `complete` is false for a last line that has no final newline.
    public static func forEachLine(
        in buffer: UnsafeBufferPointer<UInt8>,
        _ body: (_ lineNumber: Int, _ range: Range<Int>, _ complete: Bool) throws -> Void
    ) rethrows {
        var start = 0
        var line = 1
        let n = buffer.count
        while start < n {
            // memchr: a byte-at-a-time loop costs more than the rest of a search of the lines.
            let end = memchr(buffer.baseAddress! + start, 0x0A, n - start).map { UnsafeRawPointer($0) - UnsafeRawPointer(buffer.baseAddress!) } ?? n
            let complete = end < n
            var contentEnd = end
            if contentEnd > start && buffer[contentEnd - 1] == 0x0D { contentEnd -= 1 }
            var blank = true
            var k = start
            while k < contentEnd {
                let b = buffer[k]
                if b != 0x20 && b != 0x09 { blank = false; break }
                k += 1
            }
            if !blank { try body(line, start..<contentEnd, complete) }
            start = end + 1
            line += 1
        }
    }

    /// How many newlines `buffer` holds: the lines `forEachLine` numbers in it, less one where the last has no newline.
    public static func newlines(in buffer: UnsafeBufferPointer<UInt8>) -> Int {
        guard let base = buffer.baseAddress else { return 0 }
        var count = 0, at = 0
        while at < buffer.count, let hit = memchr(base + at, 0x0A, buffer.count - at) {
            count += 1
            at = UnsafeRawPointer(hit) - UnsafeRawPointer(base) + 1
        }
        return count
    }
}
