import Foundation

/// Runs `body(0..<count)` on that many threads (the caller's is one of them)
/// and returns when all are done: plain threads, started at once, rather than
/// a pool that may hand the work out late.
package enum Parallel {
    package static func forEach(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
        guard count > 1 else {
            if count == 1 { body(0) }
            return
        }
        let done = DispatchSemaphore(value: 0)
        for k in 1..<count {
            let t = Thread {
                body(k)
                done.signal()
            }
            t.stackSize = 8 << 20
            t.start()
        }
        body(0)
        for _ in 1..<count { done.wait() }
    }
}
