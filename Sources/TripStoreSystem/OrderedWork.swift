import Foundation

/// Jobs `0..<count` done on every core ahead of one consumer that takes
/// their results in order: each thread takes the next job as soon as it has
/// finished its last (no thread waits for a slower one, nor for the
/// consumer to start it), and at most `ahead` results are made and not yet
/// taken, so that they cost bounded memory. The consumer must call
/// `finish()` before anything the jobs read goes, also when it stops early.
package final class OrderedWork<T: Sendable>: @unchecked Sendable {
    private let state = NSCondition()
    private var results: [Int: T] = [:]
    private var claimed = 0
    private var taken = 0
    private var stopped = false
    private let count: Int
    private let ahead: Int
    private var threads: [Parallel.Pending<Bool>] = []

    /// Starts one thread per core (up to `count`); each makes its own worker
    /// from `makeWorker` (state no other thread shares) and runs it on every
    /// job it takes.
    package init(count: Int, ahead: Int, makeWorker: @escaping @Sendable () -> (Int) -> T) {
        self.count = count
        self.ahead = max(1, ahead)
        for _ in 0..<min(count, max(1, min(8, FileIO.cores))) {
            threads.append(Parallel.start { [self] in
                let work = makeWorker()
                while let k = claim() {
                    let result = work(k)
                    state.lock()
                    results[k] = result
                    state.broadcast()
                    state.unlock()
                }
                return true
            })
        }
    }

    private func claim() -> Int? {
        state.lock()
        defer { state.unlock() }
        while !stopped && claimed < count && claimed >= taken + ahead { state.wait() }
        guard !stopped && claimed < count else { return nil }
        claimed += 1
        return claimed - 1
    }

    /// The next job's result, in job order, once it is done; nil after the last.
    package func next() -> T? {
        state.lock()
        defer { state.unlock() }
        guard taken < count, !stopped else { return nil }
        while results[taken] == nil { state.wait() }
        let result = results.removeValue(forKey: taken)
        taken += 1
        state.broadcast()
        return result
    }

    /// Stops handing out jobs and waits for the threads: after it, no job runs.
    package func finish() {
        state.lock()
        stopped = true
        state.broadcast()
        state.unlock()
        for t in threads { _ = t.wait() }
    }
}
