import Foundation
import Testing
import TripStoreSystem

/// The snapshot's lines are encoded on every core ahead of the writer: the
/// writer must get every block in order, never more than a few ahead, and
/// no job may run once the writer has stopped (the jobs read the table).
@Suite struct OrderedWorkTests {
    /// Counts shared by the jobs and the test.
    final class Log: @unchecked Sendable {
        let lock = NSLock()
        var made = 0
        var taken = 0
        var mostAhead = 0

        func job() {
            lock.lock()
            made += 1
            mostAhead = max(mostAhead, made - taken)
            lock.unlock()
        }

        func take() {
            lock.lock()
            taken += 1
            lock.unlock()
        }
    }

    /// A bulk import's work ahead is waited for by the image's thread and by
    /// the snapshot's writer, at once: every waiter gets the one result (a
    /// waiter never let through would hang; the time limit makes it a failure).
    @Test(.timeLimit(.minutes(1))) func aPendingResultIsWaitedForByManyThreadsAtOnce() {
        let pending = Parallel.start { () -> Int in
            usleep(30_000)
            return 7
        }
        let seen = Parallel.map(4) { _ in pending.wait() }
        #expect(seen == [7, 7, 7, 7])
        #expect(pending.wait() == 7)
    }

    @Test func resultsComeInJobOrderAndFewAhead() {
        for count in [0, 1, 5, 200] {
            let log = Log()
            let work = OrderedWork<Int>(count: count, ahead: 3) {
                var random = UInt64(count) &* 0x9E37_79B9_7F4A_7C15
                return { k in
                    // Jobs of uneven length, so that they finish out of order.
                    random = random &* 6_364_136_223_846_793_005 &+ 1
                    usleep(UInt32(random >> 60) * 50)
                    log.job()
                    return k
                }
            }
            var seen: [Int] = []
            while let k = work.next() {
                seen.append(k)
                log.take()
            }
            work.finish()
            #expect(seen == Array(0..<count))
            // Made but not yet taken: `ahead`, and one the consumer has not counted yet.
            #expect(log.mostAhead <= 4)
        }
    }

    @Test func noJobRunsOnceTheConsumerHasFinished() {
        let log = Log()
        let work = OrderedWork<Int>(count: 1000, ahead: 2) {
            { k in
                usleep(100)
                log.job()
                return k
            }
        }
        for _ in 0..<3 { _ = work.next() }
        work.finish()
        let made = log.made
        usleep(20_000)
        #expect(log.made == made && made <= 6)
        #expect(work.next() == nil)
    }
}
