#if canImport(Glibc)
import Glibc
#endif
@testable import DeviceIO
@testable import InputDevices
import Reactive
import ReactiveTesting
import Testing

/// The open-retry policy in virtual time (1 tick = 1 ms), with a fake opener.
@Suite("open retry", .ownLiveResources)
struct OpenRetryTests {
    /// Fails with `errno` the first `failures` times, then returns the attempt number; records
    /// the virtual time of every attempt.
    final class FakeOpener: @unchecked Sendable {
        let scheduler: TestScheduler
        let failures: Int
        let errno: Int32
        var attempts: [TestTime] = []

        init(scheduler: TestScheduler, failures: Int, errno: Int32 = EACCES) {
            self.scheduler = scheduler
            self.failures = failures
            self.errno = errno
        }

        func open() throws -> Int {
            attempts.append(scheduler.clockTicks)
            if attempts.count <= failures { throw SystemError(call: "open(/dev/input/event7)", errno: errno) }
            return attempts.count
        }
    }

    @Test("EACCES three times: retried after 50, 100, 200 ms, then the device is opened")
    func succeedsAfterBackoff() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: 3)
        let observer = scheduler.start {
            openWithRetry(policy: OpenRetryPolicy(), scheduler: scheduler, open: opener.open)
        }
        #expect(opener.attempts == [200, 250, 350, 550])
        #expect(observer.events == [.next(550, 4), .completed(550)])
    }

    @Test("EACCES forever: bounded — delays 50 ms ×2 capped at 1 s, given up ~9.55 s after the first failure")
    func givesUpWithinBudget() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: .max)
        var retries: [Int] = []
        let observer = scheduler.start(disposed: 30_000) {
            openWithRetry(policy: OpenRetryPolicy(), scheduler: scheduler,
                          onRetry: { n, _ in retries.append(n) }, open: opener.open)
        }
        let offsets = opener.attempts.map { $0 - 200 }
        #expect(offsets == [0, 50, 150, 350, 750, 1550, 2550, 3550, 4550, 5550, 6550, 7550, 8550, 9550])
        #expect(retries == Array(1...13))
        #expect(observer.events == [.error(9750, SystemError(call: "open(/dev/input/event7)", errno: EACCES))])
    }

    @Test("EPERM is retried like EACCES")
    func epermRetried() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: 1, errno: EPERM)
        let observer = scheduler.start {
            openWithRetry(policy: OpenRetryPolicy(), scheduler: scheduler, open: opener.open)
        }
        #expect(observer.events == [.next(250, 2), .completed(250)])
    }

    @Test("any other errno is final at once: one attempt")
    func otherErrnoIsFinal() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: 1, errno: ENOENT)
        let observer = scheduler.start {
            openWithRetry(policy: OpenRetryPolicy(), scheduler: scheduler, open: opener.open)
        }
        #expect(opener.attempts == [200])
        #expect(observer.events == [.error(200, SystemError(call: "open(/dev/input/event7)", errno: ENOENT))])
    }

    @Test("disposal while waiting cancels the retry: nothing is opened afterwards")
    func disposalDuringWait() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: .max)
        let observer = scheduler.start(disposed: 300) {
            openWithRetry(policy: OpenRetryPolicy(), scheduler: scheduler, open: opener.open)
        }
        scheduler.advanceTo(20_000)
        #expect(opener.attempts == [200, 250])   // next one was due at 350
        #expect(observer.events.isEmpty)
    }

    @Test("a custom policy: shorter budget, different factor")
    func customPolicy() {
        let scheduler = TestScheduler()
        let opener = FakeOpener(scheduler: scheduler, failures: .max)
        let policy = OpenRetryPolicy(initialDelay: .milliseconds(10), multiplier: 3, maxDelay: .milliseconds(100),
                                     giveUpAfter: .milliseconds(300))
        _ = scheduler.start(disposed: 5000) { openWithRetry(policy: policy, scheduler: scheduler, open: opener.open) }
        // 10, 30, 90, 100, 100: cumulative 10, 40, 130, 230; the next (330) is over budget.
        #expect(opener.attempts.map { $0 - 200 } == [0, 10, 40, 130, 230])
        #expect(policy.delay(beforeRetry: 5, elapsed: .milliseconds(230)) == nil)
        #expect(policy.delay(beforeRetry: 4, elapsed: .milliseconds(130)) == .milliseconds(100))
    }
}
