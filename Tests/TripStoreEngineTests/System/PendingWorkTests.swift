import Foundation
import Testing
import TripStoreSystem
#if canImport(Glibc)
import Glibc
#endif

/// A writer asks whether its background snapshot is done after every
/// commit, so asking must never put the writer's thread to sleep.
@Suite struct PendingWorkTests {
    @Test func askingWhetherWorkIsDoneNeverWaits() {
        let release = DispatchSemaphore(value: 0)
        let pending = Parallel.start { () -> Int in
            release.wait()
            return 42
        }
        let before = voluntarySwitchesOfThisThread()
        var answers = 0
        for _ in 0..<2_000 where !pending.isDone { answers += 1 }
        let slept = voluntarySwitchesOfThisThread() - before
        #expect(answers == 2_000)
        #if os(Linux)
        // Each question that slept is a voluntary switch of this thread.
        #expect(slept < 20, "isDone slept \(slept) times in 2,000 questions")
        #endif
        release.signal()
        #expect(pending.wait() == 42)
        #expect(pending.isDone)
        #expect(pending.wait() == 42)
    }

    /// Voluntary context switches of the calling thread (Linux keeps them
    /// per thread), 0 where the system does not say.
    private func voluntarySwitchesOfThisThread() -> Int {
        #if os(Linux)
        var usage = rusage()
        // RUSAGE_THREAD, which Glibc's module leaves out.
        guard getrusage(__rusage_who_t(1), &usage) == 0 else { return 0 }
        return usage.ru_nvcsw
        #else
        return 0
        #endif
    }
}
