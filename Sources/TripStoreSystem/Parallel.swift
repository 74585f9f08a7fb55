import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The one place where work fans out over the cores: `map` runs one closure
/// per part on its own thread (the caller's is one of them) and returns the
/// results in order when all are done. Plain threads, started at once, rather
/// than a pool that may hand the work out late. Workers share nothing
/// writable: each returns a value, and what they read is `Sendable` (a value,
/// `SharedBytes`, or a read-only view such as `ObjectTable.ReadView`).
package enum Parallel {
    /// `0..<count` cut into `parts` contiguous ranges in order, as even as can
    /// be (the last ones may be shorter or empty).
    package static func ranges(_ count: Int, parts: Int) -> [Range<Int>] {
        let parts = max(1, parts)
        let per = (count + parts - 1) / parts
        return (0..<parts).map { k in min(count, k * per)..<min(count, (k + 1) * per) }
    }

    /// `body` over `0..<count` cut into one range per core (up to 8), or
    /// over the whole on the caller's thread when `count` is below
    /// `parallelFrom`; results in order.
    package static func mapRanges<T: Sendable>(_ count: Int, parallelFrom: Int,
                                              _ body: @escaping @Sendable (Range<Int>) -> T) -> [T] {
        let parts = count >= parallelFrom ? max(1, min(8, FileIO.cores)) : 1
        return map(parts) { k in body(ranges(count, parts: parts)[k]) }
    }

    /// `0..<count` cut into several pieces per core, which one thread per
    /// core takes in turn as it finishes the last (so that a thread slowed by
    /// other work on its core does not leave the others waiting), or the
    /// whole on the caller's thread when `count` is below `parallelFrom`;
    /// results in order. Each thread first makes its own worker from
    /// `makeWorker` (state it shares with no other thread), which then takes
    /// every piece that thread claims.
    package static func mapPieces<T: Sendable>(_ count: Int, parallelFrom: Int,
                                              makeWorker: @escaping @Sendable () -> (Range<Int>) -> T) -> [T] {
        let threads = count >= parallelFrom ? max(1, min(8, FileIO.cores)) : 1
        guard threads > 1 else { return [makeWorker()(0..<count)] }
        let pieces = ranges(count, parts: threads * 4)
        let results = Slots<T>(pieces.count), claims = Claims()
        _ = map(threads) { _ in
            let worker = makeWorker()
            while let k = claims.next(below: pieces.count) { results.put(k, worker(pieces[k])) }
            return true
        }
        return results.take()
    }

    /// The next piece to take, for `mapPieces`' threads.
    private final class Claims: @unchecked Sendable {
        private let lock = NSLock()
        private var taken = 0

        func next(below count: Int) -> Int? {
            lock.lock()
            defer { lock.unlock() }
            guard taken < count else { return nil }
            taken += 1
            return taken - 1
        }
    }

    /// `body(0)`, …, `body(parts - 1)`, each on its own thread.
    package static func map<T: Sendable>(_ parts: Int, _ body: @escaping @Sendable (Int) -> T) -> [T] {
        guard parts > 1 else { return parts == 1 ? [body(0)] : [] }
        let results = Slots<T>(parts)
        let done = DispatchSemaphore(value: 0)
        for k in 1..<parts {
            let t = Thread {
                results.put(k, body(k))
                done.signal()
            }
            t.stackSize = 8 << 20
            t.start()
        }
        results.put(0, body(0))
        for _ in 1..<parts { done.wait() }
        return results.take()
    }

    /// Runs the calling thread, and the threads it starts from now on, at
    /// the lowest priority: for work that must not slow the threads that
    /// wait for nothing but the disk (commits).
    package static func lowerThisThreadsPriority() {
        #if canImport(Glibc)
        // Linux keeps a nice value per thread (0 names the calling one),
        // which the threads it creates inherit.
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)
        #elseif canImport(Darwin)
        _ = setpriority(PRIO_DARWIN_THREAD, 0, PRIO_DARWIN_BG)
        #endif
    }

    /// Starts `body` on a thread of its own; `Pending.wait()` returns its result.
    /// For work that overlaps the caller's (the caller goes on meanwhile).
    package static func start<T: Sendable>(_ body: @escaping @Sendable () -> T) -> Pending<T> {
        let pending = Pending<T>()
        let t = Thread {
            pending.results.put(0, body())
            pending.finish()
        }
        t.stackSize = 8 << 20
        t.start()
        return pending
    }

    /// The result of `start`, once its thread is done. Any number of
    /// threads may wait for it, at once or one after another.
    package final class Pending<T>: @unchecked Sendable {
        fileprivate let results = Slots<T>(1)
        private let done = DispatchSemaphore(value: 0)
        private let lock = NSLock()
        private var taken: T?
        private var finished = false

        /// On the thread, once its result is in place.
        fileprivate func finish() {
            lock.withLock { finished = true }
            done.signal()
        }

        /// Whether the thread has returned. Never waits: a writer asks after
        /// every commit, and a semaphore's wait with a timeout of now can
        /// still put the thread to sleep for the timer's slack.
        package var isDone: Bool { lock.withLock { finished } }

        /// Waits for the thread and returns what it returned.
        package func wait() -> T {
            if let value = lock.withLock({ taken }) { return value }
            done.wait()
            return lock.withLock {
                let value = taken ?? results.take()[0]
                taken = value
                // The thread signals once: each waiter lets the next one through.
                done.signal()
                return value
            }
        }
    }

    /// One slot per worker. Safe to share: each slot is written by its own
    /// worker only, and read only after every worker has signalled, which
    /// orders the writes before the reads.
    fileprivate final class Slots<T>: @unchecked Sendable {
        private let slots: UnsafeMutablePointer<T?>
        private let count: Int

        init(_ count: Int) {
            self.count = count
            slots = .allocate(capacity: count)
            slots.initialize(repeating: nil, count: count)
        }

        func put(_ k: Int, _ value: T) { slots[k] = value }

        func take() -> [T] { (0..<count).compactMap { slots[$0] } }

        deinit {
            slots.deinitialize(count: count)
            slots.deallocate()
        }
    }
}

/// Bytes that parallel workers read while nobody writes or frees them (the
/// owner keeps them alive and unchanged until `Parallel.map` returns).
package struct SharedBytes: @unchecked Sendable {
    package let buffer: UnsafeBufferPointer<UInt8>

    package init(_ buffer: UnsafeBufferPointer<UInt8>) {
        self.buffer = buffer
    }

    package init(_ raw: UnsafeRawBufferPointer) {
        self.buffer = raw.bindMemory(to: UInt8.self)
    }
}
