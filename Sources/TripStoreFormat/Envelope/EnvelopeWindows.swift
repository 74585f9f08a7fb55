import TripStoreJSON
import TripStoreSystem
/// Splits an input of envelopes (a JSON array, or JSON Lines) into whole
/// envelopes a window of bytes at a time, so that an import holds one window
/// of its input, never all of it. Ranges are found as `ArrayElements.split`
/// and `JSONLines` find them in a whole buffer: the same envelopes, in order.
package enum EnvelopeWindows {
    /// Reads an input through `read` (which fills as much of the buffer it is
    /// given as it can and returns how many bytes it wrote, 0 at the end) and
    /// calls `body` with each window and the ranges, in that window, of the
    /// envelopes it holds whole. A window grows (doubling) only while one
    /// envelope does not fit in it.
    ///
    /// Returns false when the input is not one array or JSON Lines (the strict
    /// reader then says what is wrong), or as soon as `body` returns false.
    package static func forEach(window: Int, read: (UnsafeMutableRawBufferPointer) throws -> Int,
                                _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        try withoutActuallyEscaping(read) { read in
            var w = Window(capacity: max(window, 64), read: read)
            defer { w.buffer.deallocate() }
            return try split(&w, body)
        }
    }

    private static func split(_ w: inout Window, _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        try w.fill()
        var start = 0
        if w.filled >= 3 && w.bytes[0] == 0xEF && w.bytes[1] == 0xBB && w.bytes[2] == 0xBF { start = 3 }
        // The first byte that is not white space tells an array from JSON Lines.
        var first = start
        while true {
            while first < w.filled && ArrayElements.isBlank(w.bytes, first..<(first + 1)) { first += 1 }
            if first < w.filled { break }
            if w.atEnd { return false }
            (start, first) = (0, 0)
            try w.keep(from: w.filled)
        }
        if w.bytes[first] == UInt8(ascii: "[") {
            return try elements(&w, from: first + 1, body)
        }
        return try lines(&w, from: start, body)
    }

    private static func elements(_ w: inout Window, from: Int,
                                 _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        var next = from
        var hadElements = false
        while true {
            var ranges: [Range<Int>] = []
            guard let end = ArrayElements.scan(w.bytes, from: next, hadElements: hadElements, into: &ranges) else { return false }
            if !ranges.isEmpty {
                hadElements = true
                guard try body(w.bytes, ranges) else { return false }
            }
            switch end {
            case .closed(let after):
                // Only white space may follow the array, to the end of the input.
                var k = after
                while true {
                    guard ArrayElements.isBlank(w.bytes, k..<w.filled) else { return false }
                    if w.atEnd { return true }
                    k = 0
                    try w.keep(from: w.filled)
                }
            case .open(let resumeAt):
                if w.atEnd { return false }
                try w.keep(from: resumeAt)
                next = 0
            }
        }
    }

    private static func lines(_ w: inout Window, from: Int,
                              _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        var start = from
        while true {
            // Whole lines end at the window's last newline; at the end of the input, the last line too.
            var cut = w.filled
            if !w.atEnd {
                cut = start
                var k = w.filled
                while k > start {
                    k -= 1
                    if w.bytes[k] == 0x0A {
                        cut = k + 1
                        break
                    }
                }
            }
            var ranges: [Range<Int>] = []
            JSONLines.forEachLine(in: UnsafeBufferPointer(rebasing: w.bytes[start..<cut])) { _, range, _ in
                ranges.append((range.lowerBound + start)..<(range.upperBound + start))
            }
            if !ranges.isEmpty {
                guard try body(w.bytes, ranges) else { return false }
            }
            if w.atEnd { return true }
            try w.keep(from: cut)
            start = 0
        }
    }

    /// The buffer and how much of it holds input.
    private struct Window {
        var buffer: UnsafeMutableRawBufferPointer
        var filled = 0
        var atEnd = false
        let read: (UnsafeMutableRawBufferPointer) throws -> Int

        init(capacity: Int, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
            buffer = .allocate(byteCount: capacity, alignment: 64)
            self.read = read
        }

        var bytes: UnsafeBufferPointer<UInt8> {
            UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: filled)
        }

        /// Reads until the buffer is full or the input ends.
        mutating func fill() throws {
            while !atEnd && filled < buffer.count {
                let n = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[filled...]))
                if n == 0 { atEnd = true }
                filled += n
            }
        }

        /// Moves the bytes from `start` on to the front, growing the buffer
        /// when they fill it, and reads more after them.
        mutating func keep(from start: Int) throws {
            let kept = filled - start
            if kept == buffer.count {
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 64)
                bigger.copyMemory(from: UnsafeRawBufferPointer(buffer))
                buffer.deallocate()
                buffer = bigger
            } else if kept > 0 {
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: kept)
            }
            filled = kept
            try fill()
        }
    }
}
