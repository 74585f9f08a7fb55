import Foundation
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
    /// envelopes it holds whole. The first window is `firstWindow` (small, so
    /// that decoding starts at once) and each next one twice as big up to `window`; past
    /// that a window grows (doubling) only while one envelope does not fit.
    ///
    /// The next window is read and split on a thread of its own while `body`
    /// takes the last one, so that the cores `body` keeps busy never wait for
    /// the disk or the split: two windows are held at a time. `read` is
    /// called on that thread, one call after another.
    ///
    /// With `guessLines`, an array written one element to a line is cut at
    /// its newlines alone (`ArrayElements.scanLines`), far faster than
    /// following its strings and brackets: `body` must then read each range
    /// as exactly one whole element, and otherwise return false having kept
    /// nothing. Where a guess was wrong (a line held two elements), the
    /// window is cut exactly and given to `body` again, and windows read
    /// after that are no longer guessed (the one already read ahead may
    /// be, and is cut again the same way if it has to).
    ///
    /// Returns false when the input is not one array or JSON Lines (the strict
    /// reader then says what is wrong), or as soon as `body` returns false.
    package static func forEach(window: Int, firstWindow: Int = 1 << 20, guessLines: Bool = false,
                                read: (UnsafeMutableRawBufferPointer) throws -> Int,
                                _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        try withoutActuallyEscaping(read) { read in
            try run(Window(capacity: max(window, 64), first: firstWindow, read: read), guessLines: guessLines, mapped: nil, body)
        }
    }

    /// `forEach` over a mapped input: each window is a view into the
    /// mapping (nothing is copied), set up ahead on the reading thread, and
    /// the pages before a window's last envelope are let go once `body` is
    /// done with it, so that the process holds about two windows of the
    /// input at a time, as when it reads them.
    package static func forEach(mapped input: MappedInput, window: Int, firstWindow: Int = 1 << 20, guessLines: Bool = false,
                                _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        try run(Window(mapped: input, capacity: max(window, 64), first: firstWindow), guessLines: guessLines, mapped: input, body)
    }

    private static func run(_ window: Window, guessLines: Bool, mapped: MappedInput?,
                            _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
        let ahead = ReadAhead(window, guessing: guessLines)
        let reader = Parallel.start { ahead.produce() }
        // The reader must be done before `read` and the buffers go, whatever `body` does.
        defer {
            _ = reader.wait()
            ahead.deallocate()
        }
        var failure: (any Error)?
        var going = true
        while let (bytes, ranges) = ahead.next() {
            if going {
                do {
                    going = try body(bytes, ranges)
                    if !going && guessLines, let exact = ArrayElements.recut(bytes, ranges), exact != ranges {
                        ahead.stopGuessing()
                        going = try body(bytes, exact)
                    }
                } catch {
                    failure = error
                    going = false
                }
                if !going { ahead.stop() }
            }
            // Every later window starts at or after this one's last envelope.
            if let mapped, let base = bytes.baseAddress, let last = ranges.last {
                mapped.discard(before: UnsafeRawPointer(base) - mapped.bytes.baseAddress! + last.upperBound)
            }
            ahead.release()
        }
        if let failure { throw failure }
        return try reader.wait().get() && going
    }

    /// The window between the thread that reads and splits and the one that
    /// decodes: one window handed over at a time, and the reader refills a
    /// buffer only once the decoder has released it.
    fileprivate final class ReadAhead: @unchecked Sendable {
        private let state = NSCondition()
        private var window: Window
        private var waiting: (UnsafeBufferPointer<UInt8>, [Range<Int>])?
        private var done = false
        private var stopped = false
        /// Buffers the reader may fill besides the one it holds.
        private var free = 1
        /// Whether arrays may still be cut at newlines (see `forEach`).
        private var guessing: Bool

        init(_ window: Window, guessing: Bool) {
            self.window = window
            self.guessing = guessing
        }

        /// Cuts every window after this one by following its brackets.
        func stopGuessing() {
            state.lock()
            guessing = false
            state.unlock()
        }

        /// The reader's thread: splits the whole input, handing each window over.
        func produce() -> Result<Bool, any Error> {
            window.takeBuffer = { [unowned self] in
                state.lock()
                while free == 0 { state.wait() }
                free -= 1
                state.unlock()
            }
            window.mayGuess = { [unowned self] in
                state.lock()
                defer { state.unlock() }
                return guessing
            }
            let result = Result { try EnvelopeWindows.split(&window) { bytes, ranges in self.handOver(bytes, ranges) } }
            state.lock()
            done = true
            state.broadcast()
            state.unlock()
            return result
        }

        private func handOver(_ bytes: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> Bool {
            state.lock()
            defer { state.unlock() }
            while waiting != nil && !stopped { state.wait() }
            guard !stopped else { return false }
            waiting = (bytes, ranges)
            state.broadcast()
            return true
        }

        /// The next window, once read; nil when the reader is done.
        func next() -> (UnsafeBufferPointer<UInt8>, [Range<Int>])? {
            state.lock()
            defer { state.unlock() }
            while waiting == nil && !done { state.wait() }
            let item = waiting
            waiting = nil
            state.broadcast()
            return item
        }

        /// The decoder is done with the window `next` gave it.
        func release() {
            state.lock()
            free += 1
            state.broadcast()
            state.unlock()
        }

        /// No more windows are wanted.
        func stop() {
            state.lock()
            stopped = true
            state.broadcast()
            state.unlock()
        }

        /// Frees the buffers and lets go of `read`, which must not outlive
        /// `forEach` (whatever still holds this object).
        func deallocate() {
            window.deallocate()
            window.read = { _ in 0 }
        }
    }

    fileprivate static func split(_ w: inout Window, _ body: (UnsafeBufferPointer<UInt8>, [Range<Int>]) throws -> Bool) throws -> Bool {
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
            let guessed = w.mayGuess() ? ArrayElements.scanLines(w.bytes, from: next, atEnd: w.atEnd, hadElements: hadElements, into: &ranges) : nil
            guard let end = guessed ?? ArrayElements.scan(w.bytes, from: next, hadElements: hadElements, into: &ranges) else { return false }
            if !ranges.isEmpty {
                hadElements = true
                guard try body(w.bytes, ranges) else { return false }
                w.handedOver = true
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
                w.handedOver = true
            }
            if w.atEnd { return true }
            try w.keep(from: cut)
            start = 0
        }
    }

    /// The buffer and how much of it holds input, and a second buffer to read
    /// into while the first one is still being decoded.
    fileprivate struct Window {
        /// The input, where it is mapped: `buffer` is then unused, and the
        /// window is `filled` bytes of the mapping from `origin`.
        private var mapped: MappedInput?
        private var origin = 0
        var buffer: UnsafeMutableRawBufferPointer
        var spare: UnsafeMutableRawBufferPointer?
        var filled = 0
        var atEnd = false
        /// Whether `buffer` went to the decoder: it is then read, never written, until released.
        var handedOver = false
        /// Waits until the decoder has released the spare buffer.
        var takeBuffer: () -> Void = {}
        var read: (UnsafeMutableRawBufferPointer) throws -> Int
        /// How much of the buffer a fill reads: the first window is small,
        /// so that the cores start decoding while the next one is read, and
        /// each one after it twice as big up to the buffer's size.
        private var limit: Int
        private let size: Int

        /// Whether arrays may be cut at newlines (see `forEach`).
        var mayGuess: () -> Bool = { false }

        init(capacity: Int, first: Int, read: @escaping (UnsafeMutableRawBufferPointer) throws -> Int) {
            buffer = .allocate(byteCount: capacity, alignment: 64)
            size = capacity
            limit = min(capacity, max(1, first))
            self.read = read
        }

        init(mapped: MappedInput, capacity: Int, first: Int) {
            buffer = .allocate(byteCount: 0, alignment: 64)
            size = capacity
            limit = min(capacity, max(1, first))
            read = { _ in 0 }
            self.mapped = mapped
        }

        var bytes: UnsafeBufferPointer<UInt8> {
            if let mapped {
                return UnsafeBufferPointer(start: mapped.bytes.baseAddress!.assumingMemoryBound(to: UInt8.self) + origin, count: filled)
            }
            return UnsafeBufferPointer(start: buffer.baseAddress!.assumingMemoryBound(to: UInt8.self), count: filled)
        }

        /// Reads until the buffer is full or the input ends.
        mutating func fill() throws {
            if let mapped {
                let end = min(mapped.bytes.count, origin + limit)
                mapped.prepare((origin + filled)..<end)
                filled = end - origin
                atEnd = end == mapped.bytes.count
                return
            }
            while !atEnd && filled < limit {
                let n = try read(UnsafeMutableRawBufferPointer(rebasing: buffer[filled..<limit]))
                if n == 0 { atEnd = true }
                filled += n
            }
        }

        /// Moves the bytes from `start` on to the front of a buffer the
        /// decoder does not hold, growing it when they would fill it, and
        /// reads more after them.
        mutating func keep(from start: Int) throws {
            let kept = filled - start
            // Past the buffer's size, a window grows only while one envelope does not fit.
            limit = kept == limit ? limit * 2 : min(limit * 2, max(limit, self.size))
            if mapped != nil {
                // The decoder may hold one window besides this one, as with buffers.
                if handedOver {
                    takeBuffer()
                    handedOver = false
                }
                origin += start
                filled = kept
                try fill()
                return
            }
            let size = max(buffer.count, limit)
            if handedOver {
                takeBuffer()
                var target = spare ?? .allocate(byteCount: size, alignment: 64)
                if target.count < size {
                    target.deallocate()
                    target = .allocate(byteCount: size, alignment: 64)
                }
                if kept > 0 { target.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: kept) }
                spare = buffer
                buffer = target
                handedOver = false
            } else if size > buffer.count {
                let bigger = UnsafeMutableRawBufferPointer.allocate(byteCount: size, alignment: 64)
                if kept > 0 { bigger.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: kept) }
                buffer.deallocate()
                buffer = bigger
            } else if kept > 0 {
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: kept)
            }
            filled = kept
            try fill()
        }

        func deallocate() {
            buffer.deallocate()
            spare?.deallocate()
        }
    }
}
