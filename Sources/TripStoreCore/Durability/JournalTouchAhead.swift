import Foundation
import TripStoreSystem

/// Takes the page faults of a long journal's replay on the other core,
/// ahead of it.
///
/// Why: replaying a line that changes an object finds its row by id in the
/// image and checks the group and record it reads, and at a million objects
/// most of that time is page faults on pages no line read before. A thread
/// that reads the same journal, picks out each id and maps the pages that
/// finding it will touch (`MappedImage.touchRow`) leaves the replay the
/// checks alone. It changes nothing anyone reads, so the replay's results
/// do not depend on how far ahead it got.
final class JournalTouchAhead: @unchecked Sendable {
    private let lock = NSLock()
    private var stopped = false
    private var pending: Parallel.Pending<UInt64>?

    /// Starts the thread over `journal`'s bytes; `stop()` ends it.
    static func start(_ journal: [UInt8], image: MappedImage) -> JournalTouchAhead {
        let ahead = JournalTouchAhead()
        let reader = ImageForThread(image)
        ahead.pending = Parallel.start { ahead.run(journal, image: reader.image) }
        return ahead
    }

    /// Stops the thread (where it got to does not matter) and waits for it.
    func stop() {
        lock.withLock { stopped = true }
        _ = pending?.wait()
    }

    private var isStopped: Bool { lock.withLock { stopped } }

    /// Each `"id":"…"` of the journal, in order: a change's object, or an
    /// object a value refers to, whose pages cost a few faults to no use.
    private func run(_ journal: [UInt8], image: MappedImage) -> UInt64 {
        let marker = Array(#""id":""#.utf8)
        var sum: UInt64 = 0
        journal.withUnsafeBufferPointer { bytes in
            guard let base = bytes.baseAddress, bytes.count > marker.count else { return }
            var at = 0, found = 0
            while at + marker.count < bytes.count {
                guard let hit = memchr(base + at, Int32(marker[0]), bytes.count - marker.count - at) else { return }
                let quote = UnsafePointer<UInt8>(hit.assumingMemoryBound(to: UInt8.self)) - base
                guard memcmp(base + quote, marker, marker.count) == 0 else {
                    at = quote + 1
                    continue
                }
                let start = quote + marker.count
                var end = start
                while end < bytes.count && end - start < 64 && bytes[end] != UInt8(ascii: "\"") { end += 1 }
                sum &+= image.touchRow(prefix: ObjectTable.prefix(UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: bytes[start..<end]))))
                at = end
                found += 1
                if found % 8 == 0 && isStopped { return }
            }
        }
        return sum
    }
}

/// The image handed to the thread, which reads only what no one writes and
/// maps the rest without reading it (see `MappedImage.touchRow`).
private struct ImageForThread: @unchecked Sendable {
    let image: MappedImage
    init(_ image: MappedImage) { self.image = image }
}
