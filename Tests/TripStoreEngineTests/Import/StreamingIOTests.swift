import Foundation
import Testing
@testable import TripStoreCore
@testable import TripStoreFormat
@testable import TripStoreJSON
@testable import TripStoreSystem

/// The bulk import's input read a window at a time, and the snapshot's
/// output written past the page cache: the same bytes as the whole-buffer
/// paths, wherever the windows and buffers fall (fixed seeds).
struct StreamingIOTests {
    private struct Random {
        var state: UInt64
        mutating func next(_ n: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(n))
        }
    }

    /// An input of envelopes as a user might write it: an array or JSON
    /// Lines, blanks anywhere, strings full of brackets and escapes, and now
    /// and then something that is not one array (trailing commas, text after
    /// the array, a cut end).
    private static func input(_ rng: inout Random) -> [UInt8] {
        let pieces = ["a", "bc", "é", "\\\"", "\\\\", "\\n", "}", "]", ",", "{", "[", "\\u0022", "0123456789abcdef", "\n"]
        func string() -> String { "\"" + (0..<rng.next(30)).map { _ in pieces[rng.next(pieces.count)] }.joined() + "\"" }
        func blank() -> String { [" ", "", "\n", "\t ", "", "\r\n", String(repeating: " ", count: 70)][rng.next(7)] }
        func element() -> String {
            rng.next(3) == 0 ? string() : "{\"type\":\"T\",\"id\":\(string()),\"data\":{\"n\":[1,{\"x\":\(string())}]}}"
        }
        let count = rng.next(12)
        var text = rng.next(8) == 0 ? "\u{FEFF}" : ""
        if rng.next(3) == 0 {
            // JSON Lines: one element per line (strings hold no raw newline there).
            for _ in 0..<count { text += element().replacingOccurrences(of: "\n", with: "") + [" \n", "\n", "\r\n", "\n\n"][rng.next(4)] }
            if rng.next(4) == 0 { text += element().replacingOccurrences(of: "\n", with: "") }
        } else {
            text += blank() + "["
            for k in 0..<count {
                if k > 0 { text += "," }
                text += blank() + element() + blank()
            }
            switch rng.next(12) {
            case 0: text += ",]"
            case 1: text += "] x"
            case 2: break
            case 3: text += "]]"
            default: text += "]" + blank()
            }
        }
        var bytes = Array(text.utf8)
        if rng.next(10) == 0 && !bytes.isEmpty { bytes.removeLast(rng.next(bytes.count)) }
        return bytes
    }

    /// What each envelope holds, white space around it aside.
    private static func contents(_ buf: UnsafeBufferPointer<UInt8>, _ ranges: [Range<Int>]) -> [String] {
        ranges.map { String(decoding: UnsafeBufferPointer(rebasing: buf[$0]), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    @Test func envelopeWindowsFindWhatTheWholeBufferSplitFinds() throws {
        var rng = Random(state: 7)
        var refused = 0, found = 0
        for _ in 0..<600 {
            let bytes = Self.input(&rng)
            let whole = bytes.withUnsafeBufferPointer { b in BulkImporter.envelopeRanges(b).map { Self.contents(b, $0) } }
            // The last one starts small and doubles: windows of 7, 14, 28… bytes.
            for (window, first) in [(64, 64), (97, 97), (1000, 1000), (1000, 7)] {
                var at = 0
                var seen: [String] = []
                var readRNG = rng
                let ok = try EnvelopeWindows.forEach(window: window, firstWindow: first, read: { out in
                    // Short reads, as a pipe or a signal gives them.
                    let n = min(out.count, bytes.count - at, 1 + readRNG.next(40))
                    bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
                    at += n
                    return n
                }) { buf, ranges in
                    seen += Self.contents(buf, ranges)
                    return true
                }
                #expect((ok ? seen : nil) == whole, "window \(window) from \(first): \(String(decoding: bytes, as: UTF8.self))")
            }
            if whole == nil { refused += 1 } else { found += whole?.count ?? 0 }
        }
        // The inputs did exercise both outcomes.
        #expect(refused > 30 && found > 1000)
    }

    /// Whether `range` holds exactly one JSON value with blanks around it,
    /// as the import decoder checks every range it is given.
    private static func isOneValue(_ buf: UnsafeBufferPointer<UInt8>, _ range: Range<Int>) -> Bool {
        var r = JSONReader(buffer: buf, start: range.lowerBound)
        guard (try? r.skipValue()) != nil, r.index <= range.upperBound else { return false }
        return ArrayElements.isBlank(buf, r.index..<range.upperBound)
    }

    /// Reads `bytes` a window at a time, cutting arrays at newlines where
    /// they look one element to a line; the body checks each range as the
    /// decoder does. Nil where it gave up or the input is not an array.
    private static func guessedElements(_ bytes: [UInt8], window: Int, first: Int) throws -> [String]? {
        var at = 0
        var seen: [String] = []
        let ok = try EnvelopeWindows.forEach(window: window, firstWindow: first, guessLines: true, read: { out in
            let n = min(out.count, bytes.count - at)
            bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
            at += n
            return n
        }) { buf, ranges in
            guard ranges.allSatisfy({ isOneValue(buf, $0) }) else { return false }
            seen += Self.contents(buf, ranges)
            return true
        }
        return ok ? seen : nil
    }

    /// An array cut at its newlines must give exactly the elements that
    /// following its brackets gives, or nothing (the import then reads it
    /// the slow way): never other ranges that happen to read.
    @Test func envelopeWindowsCutAtNewlinesOnlyWhatTheBracketsCut() throws {
        var rng = Random(state: 11)
        var agreed = 0
        for _ in 0..<600 {
            let bytes = Self.input(&rng)
            let whole = bytes.withUnsafeBufferPointer { b in BulkImporter.envelopeRanges(b).map { Self.contents(b, $0) } }
            for (window, first) in [(64, 64), (1000, 7), (4096, 4096)] {
                let guessed = try Self.guessedElements(bytes, window: window, first: first)
                if let guessed {
                    #expect(guessed == whole, "window \(window): \(String(decoding: bytes, as: UTF8.self))")
                    agreed += 1
                }
            }
        }
        #expect(agreed > 600)
    }

    /// The shape every exporter writes, one element to a line, is read in
    /// full; a trailing comma or a missing one between lines is refused.
    @Test func envelopeWindowsReadAnArrayWrittenOneElementToALine() throws {
        var rng = Random(state: 5)
        for round in 0..<300 {
            let count = 1 + rng.next(40)
            let elements = (0..<count).map { k in #"{"type":"T","id":"e\#(k)","data":{"n":[1,{"x":"}],\n"}],"s":"\#(String(repeating: "é", count: rng.next(9)))"}}"# }
            let ends = ["\n", "\r\n", " \n", "\n\n"]
            var text = rng.next(2) == 0 ? "[\n" : "["
            for (k, e) in elements.enumerated() { text += e + (k + 1 < count ? "," : "") + ends[rng.next(ends.count)] }
            text += rng.next(2) == 0 ? "]\n" : "]"
            let window = 64 + rng.next(400)
            #expect(try Self.guessedElements(Array(text.utf8), window: window, first: 16) == elements, "round \(round)")
            // Cut at its newlines alone, not by following its brackets.
            var ranges: [Range<Int>] = []
            let end = Array(text.utf8).withUnsafeBufferPointer { b in
                let end = ArrayElements.scanLines(b, from: 1, atEnd: true, hadElements: false, into: &ranges)
                #expect(Self.contents(b, ranges) == elements)
                return end
            }
            #expect(end == .closed(after: text.utf8.count - (text.hasSuffix("\n") ? 1 : 0)))
        }
        // Lines that hold more than one element: the guess is wrong, the window cut again.
        let elements = (0..<40).map { #"{"e":\#($0)}"# }
        for perLine in [2, 3, 40] {
            let lines = stride(from: 0, to: elements.count, by: perLine).map { elements[$0..<min(elements.count, $0 + perLine)].joined(separator: ",") }
            for window in [32, 100, 4096] {
                #expect(try Self.guessedElements(Array(("[" + lines.joined(separator: ",\n") + "]").utf8), window: window, first: 16) == elements,
                        "\(perLine) a line, window \(window)")
            }
        }
        let good = "[\n{\"a\":1},\n{\"b\":2}\n]\n"
        #expect(try Self.guessedElements(Array(good.utf8), window: 64, first: 8) == [#"{"a":1}"#, #"{"b":2}"#])
        #expect(try Self.guessedElements(Array("[\n{\"a\":1},\n{\"b\":2}]".utf8), window: 64, first: 8) == [#"{"a":1}"#, #"{"b":2}"#])
        for bad in ["[\n{\"a\":1},\n{\"b\":2},\n]\n", "[\n{\"a\":1}\n{\"b\":2}\n]\n", "[\n{\"a\":1},\n{\"b\":2}\n", "[\n{\"a\":1},\n{\"b\":2}\n]\n]"] {
            for window in [64, 7] {
                #expect(try Self.guessedElements(Array(bad.utf8), window: window, first: window) == nil, "\(bad)")
            }
        }
    }

    /// Windows over a mapped file are the windows reading it gives, whatever
    /// their sizes, cut at newlines or not; letting go of the pages behind
    /// the windows changes no byte still to be read.
    @Test func envelopeWindowsOverAMappedFileFindWhatReadingFinds() throws {
        MappedInput.allowMapping(onFault: "error: test input changed\n", exitCode: 1)
        var rng = Random(state: 23)
        let path = TestFolders.runRoot + "mapped-\(UUID().uuidString).json"
        defer { unlink(path) }
        var mappedInputs = 0
        for round in 0..<200 {
            var bytes = Self.input(&rng)
            // Every tenth input is many pages long, so that pages are let go behind the windows.
            if round % 10 == 0 {
                bytes = Array(("[" + (0..<3000).map { "{\"id\":\"\($0)\",\"pad\":\"\(String(repeating: "x", count: rng.next(90)))\"}" }
                    .joined(separator: ",\n") + "]").utf8)
            }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let whole = bytes.withUnsafeBufferPointer { b in BulkImporter.envelopeRanges(b).map { Self.contents(b, $0) } }
            let fd = open(path, O_RDONLY)
            defer { close(fd) }
            for (window, first, guess) in [(64, 64, false), (1000, 7, false), (4096, 4096, true), (97, 16, true)] {
                // A file just written is in the page cache; an empty one is never mapped.
                guard let mapped = MappedInput.map(fd, size: bytes.count, path: path) else {
                    #expect(bytes.isEmpty)
                    continue
                }
                mappedInputs += 1
                var seen: [String] = []
                let ok = try EnvelopeWindows.forEach(mapped: mapped, window: window, firstWindow: first, guessLines: guess) { buf, ranges in
                    // As the import's decoder: a guessed range that is not one value gives up (the window is then cut exactly).
                    guard !guess || ranges.allSatisfy({ Self.isOneValue(buf, $0) }) else { return false }
                    seen += Self.contents(buf, ranges)
                    return true
                }
                if guess {
                    #expect(!ok || seen == whole, "window \(window), guessed: \(String(decoding: bytes, as: UTF8.self))")
                } else {
                    #expect((ok ? seen : nil) == whole, "window \(window) from \(first): \(String(decoding: bytes, as: UTF8.self))")
                }
            }
        }
        #expect(mappedInputs > 700)
    }

    /// A file mostly not in the page cache is read, not mapped: through the
    /// map its pages would be taken from the page cache one by one.
    @Test func aFileNotWhollyCachedIsNotMapped() throws {
        MappedInput.allowMapping(onFault: "error: test input changed\n", exitCode: 1)
        let path = TestFolders.runRoot + "uncached-\(UUID().uuidString).json"
        defer { unlink(path) }
        try Data(repeating: 0x20, count: 1 << 20).write(to: URL(fileURLWithPath: path))
        let fd = open(path, O_RDONLY)
        defer { close(fd) }
        #expect(MappedInput.map(fd, size: 1 << 20, path: path) != nil)
        // Written back, then dropped from the page cache (where the file
        // system keeps its pages, as tmpfs does, there is nothing to test).
        fsync(fd)
        _ = posix_fadvise(fd, 0, 0, Int32(POSIX_FADV_DONTNEED))
        let p = mmap(nil, 1 << 20, PROT_READ, MAP_SHARED, fd, 0)
        defer { if let p, p != MAP_FAILED { munmap(p, 1 << 20) } }
        var resident = [UInt8](repeating: 0, count: (1 << 20) / FileIO.pageSize)
        let dropped = p != MAP_FAILED && mincore(p, 1 << 20, &resident) == 0 && resident.contains { $0 & 1 == 0 }
        #expect(!dropped || MappedInput.map(fd, size: 1 << 20, path: path) == nil)
    }

    @Test func envelopeWindowsStopWhenTheBodyGivesUp() throws {
        let bytes = Array("[1,2,3]".utf8)
        var calls = 0
        var given = false
        let ok = try EnvelopeWindows.forEach(window: 64, read: { out in
            guard !given else { return 0 }
            given = true
            bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: bytes.count) }
            return bytes.count
        }) { _, _ in
            calls += 1
            return false
        }
        #expect(!ok && calls == 1)
    }

    /// The next window is read while `body` holds the last one: the bytes
    /// `body` was given must not change under it, however long it takes.
    @Test func envelopeWindowsAreNotOverwrittenWhileTheBodyHoldsThem() throws {
        var rng = Random(state: 19)
        for _ in 0..<40 {
            let bytes = Array(("[" + (0..<200).map { k in "{\"id\":\"\(k)-\(rng.next(1000))\",\"pad\":\"\(String(repeating: "x", count: rng.next(90)))\"}" }
                .joined(separator: ",") + "]").utf8)
            let whole = bytes.withUnsafeBufferPointer { b in BulkImporter.envelopeRanges(b).map { Self.contents(b, $0) } }
            var at = 0
            var seen: [String] = []
            let ok = try EnvelopeWindows.forEach(window: 128, read: { out in
                let n = min(out.count, bytes.count - at)
                bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
                at += n
                return n
            }) { buf, ranges in
                let before = Self.contents(buf, ranges)
                // Time for the reader to fill its next buffer meanwhile.
                usleep(200)
                #expect(Self.contents(buf, ranges) == before)
                seen += before
                return true
            }
            #expect(ok && seen == whole)
        }
    }

    /// An error from `read` or from `body` ends the walk and is what
    /// `forEach` throws; the reader is stopped either way.
    @Test func envelopeWindowsPassOnTheErrorOfEitherSide() throws {
        struct Failure: Error, Equatable { let side: String }
        let bytes = Array(("[" + (0..<400).map { "{\"id\":\"\($0)\"}" }.joined(separator: ",") + "]").utf8)
        for failAt in [0, 1, 5] {
            var at = 0, reads = 0
            #expect(throws: Failure(side: "read")) {
                _ = try EnvelopeWindows.forEach(window: 64, read: { out in
                    reads += 1
                    if reads > failAt { throw Failure(side: "read") }
                    let n = min(out.count, bytes.count - at)
                    bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
                    at += n
                    return n
                }) { _, _ in true }
            }
            at = 0
            reads = 0
            var calls = 0
            #expect(throws: Failure(side: "body")) {
                _ = try EnvelopeWindows.forEach(window: 64, read: { out in
                    reads += 1
                    let n = min(out.count, bytes.count - at)
                    bytes.withUnsafeBytes { out.baseAddress!.copyMemory(from: $0.baseAddress! + at, byteCount: n) }
                    at += n
                    return n
                }) { _, _ in
                    calls += 1
                    if calls > failAt { throw Failure(side: "body") }
                    return true
                }
            }
            // The reader stopped within a window or two of the failure, not at the end of the input.
            #expect(calls == failAt + 1 && reads <= failAt + 4)
        }
    }

    /// File sizes on either side of a page and of the 4 MB pieces the streaming reader and writer work in.
    static let sizesAroundPieces = [0, 1, 4095, 4096, 4097, (4 << 20) - 1, 4 << 20, (4 << 20) + 1, (9 << 20) + 123]

    /// Past the page cache, and through it (in pieces of `FileIO.mappedWritePiece`).
    @Test(arguments: [true, false])
    func streamingFileWriterWritesTheBytesGiven(pastThePageCache: Bool) throws {
        let folder = TestFolders.make("streaming-writer")
        var rng = Random(state: 11)
        for total in StreamingIOTests.sizesAroundPieces + [FileIO.mappedWritePiece - 1, FileIO.mappedWritePiece + 1] {
            let path = folder + "/file-\(total)"
            let bytes = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            let fd = try FileIO.open(path, O_RDWR | O_CREAT | O_TRUNC)
            let out = StreamingFileWriter(fd: fd, path: path, pastThePageCache: pastThePageCache)
            var at = 0
            while at < total {
                let n = min(total - at, 1 + rng.next(3 << 20))
                bytes[at..<(at + n)].withUnsafeBytes { out.write($0) }
                at += n
            }
            try out.finish()
            #expect(out.count == total)
            FileIO.close(fd)
            #expect(try FileIO.readFile(path) == bytes, "\(total) bytes")
        }
    }

    /// The import's reader gives the file's bytes, from the start or from
    /// any offset (a compaction reads a snapshot's history lines so),
    /// whichever way each 4 MB comes (from the page cache, or past it where
    /// some of it is not cached) and however much the caller asks for at a time.
    @Test func streamingFileReaderReadsTheBytesOfTheFile() throws {
        let folder = TestFolders.make("streaming-reader")
        var rng = Random(state: 23)
        for total in StreamingIOTests.sizesAroundPieces {
            let path = folder + "/file-\(total)"
            let bytes = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 29 &+ $0 >> 10) }
            let fd = try FileIO.open(path, O_RDWR | O_CREAT | O_TRUNC)
            try bytes.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: 0, path: path) }
            try FileIO.fsync(fd, path: path)
            FileIO.close(fd)
            for (evict, start) in [(false, 0), (true, 0), (false, rng.next(total + 1)), (true, rng.next(total + 1))] {
                let fd = try FileIO.openRegular(path)
                defer { FileIO.close(fd) }
                // Out of the page cache: every other 4 MB, and a page here and there.
                if evict {
                    for at in stride(from: 0, to: total, by: 8 << 20) { _ = posix_fadvise(fd, off_t(at), 4 << 20, POSIX_FADV_DONTNEED) }
                    for at in stride(from: 4096 * 3, to: total, by: 1 << 20) { _ = posix_fadvise(fd, off_t(at), 4096, POSIX_FADV_DONTNEED) }
                }
                let input = StreamingFileReader(fd: fd, path: path, from: start)
                var read: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 5 << 20)
                while true {
                    let want = 1 + rng.next(rng.next(2) == 0 ? 5000 : chunk.count)
                    let n = try chunk.withUnsafeMutableBytes { try input.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[0..<want])) }
                    read += chunk[0..<n]
                    if n < want { break }
                }
                #expect(read[...] == bytes[start...], "\(total) bytes from \(start), evicted: \(evict)")
                #expect(try chunk.withUnsafeMutableBytes { try input.read(into: $0) } == 0)
            }
        }
    }

    /// The image is written so: its first page through the page cache on one
    /// descriptor, the rest from a page boundary on through a streaming
    /// writer on another; the file holds both, byte for byte.
    @Test func streamingFileWriterWritesFromAPageOn() throws {
        let folder = TestFolders.make("streaming-writer-offset")
        for (start, total) in [(4096, 0), (4096, 1), (8192, 4096), (4096, (4 << 20) + 77), (12288, (9 << 20) + 5)] {
            let path = folder + "/file-\(start)-\(total)"
            let head = (0..<start).map { UInt8(truncatingIfNeeded: $0 &* 7) }
            let tail = (0..<total).map { UInt8(truncatingIfNeeded: $0 &* 13 &+ $0 >> 11) }
            let fd = try FileIO.open(path, O_RDWR | O_CREAT | O_TRUNC)
            let streamFD = try FileIO.open(path, O_WRONLY)
            let out = StreamingFileWriter(fd: streamFD, path: path, from: start)
            #expect(out.count == start)
            tail.withUnsafeBytes { out.write($0) }
            try out.finish()
            #expect(out.count == start + total)
            try head.withUnsafeBytes { try FileIO.writeAll(fd, $0, at: 0, path: path) }
            FileIO.close(streamFD)
            FileIO.close(fd)
            #expect(try FileIO.readFile(path) == head + tail, "\(total) bytes from \(start)")
        }
    }
}

/// The allocator hints a big import gives: only hints, memory stays usable.
struct MemoryTuningTests {
    @Test func preferringHugePagesForTheHeapLeavesMemoryUsable() {
        MemoryTuning.preferHugePagesForHeap(reserving: 48 << 20)
        MemoryTuning.preferHugePagesForHeap(reserving: 0)
        var bytes = [UInt8](repeating: 7, count: 40 << 20)
        bytes[bytes.count - 1] = 9
        let sum = bytes.reduce(0) { $0 &+ Int($1) }
        let expected = 7 * (40 << 20) + 2
        #expect(sum == expected)
    }
}
