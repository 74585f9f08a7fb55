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
            var end = start
            while end < n && buffer[end] != 0x0A { end += 1 }
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
}
