import Dispatch
import Reactive
import ReactiveTesting
import Testing

/// SerialDispatchQueueScheduler timers in real time. Tolerances are generous (the machine is
/// shared and tests may run under ThreadSanitizer); durations are short. "Nothing fired" is
/// checked after a marker timer on the same queue, due later, has run (`passed`), never
/// after a fixed sleep, which under load can end before the queue has even reached the time.
@Suite("SerialDispatchQueueScheduler timers", .ownLiveResources)
struct DispatchSchedulerTests {
    /// Waits until a marker timer due at `time` has run on `scheduler`'s queue: every timer
    /// due before it has had its turn on that serial queue by then (zero leeway, handlers
    /// queued in deadline order). Returns whether it ran within five seconds.
    private func passed(_ scheduler: SerialDispatchQueueScheduler, _ time: Int64) -> Bool {
        let ran = DispatchSemaphore(value: 0)
        let marker = scheduler.makeTimer { _ in ran.signal() }
        marker.arm(at: time, token: 1)   // (token 0 means disarmed)
        defer { marker.invalidate() }
        return ran.wait(timeout: .now() + 5) == .success
    }

    @Test("a timer fires once, not before its deadline, with its token, on the queue")
    func firesOnce() {
        let scheduler = SerialDispatchQueueScheduler(label: "timer-test")
        let fired = SharedList<(UInt64, Int64)>()
        let done = DispatchSemaphore(value: 0)
        let timer = scheduler.makeTimer { token in
            dispatchPrecondition(condition: .onQueue(scheduler.queue))
            fired.append((token, monotonicNow()))
            done.signal()
        }
        let deadline = scheduler.now + 20_000_000
        timer.arm(at: deadline, token: 7)
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(passed(scheduler, deadline + 50_000_000))   // a second fire would have come first
        let values = fired.values
        #expect(values.count == 1)
        #expect(values.first?.0 == 7)
        #expect((values.first?.1 ?? 0) >= deadline)
        timer.invalidate()
    }

    @Test("re-arming replaces the deadline; disarm cancels; invalidate stops for good")
    func rearmDisarmInvalidate() {
        let scheduler = SerialDispatchQueueScheduler(label: "timer-test-2")
        let fired = SharedList<UInt64>()
        let firedAt = SharedList<Int64>()
        let firstFire = DispatchSemaphore(value: 0)
        let timer = scheduler.makeTimer {
            fired.append($0)
            firedAt.append(monotonicNow())
            firstFire.signal()
        }
        timer.arm(at: scheduler.now + 10_000_000, token: 1)
        let replaced = scheduler.now + 60_000_000
        timer.arm(at: replaced, token: 2)
        // Timing-independent under load: the only fire carries the new token and does not
        // come before the new deadline (the 10 ms deadline was replaced, not added).
        #expect(firstFire.wait(timeout: .now() + 5) == .success)
        #expect(passed(scheduler, replaced + 20_000_000))
        #expect(fired.values == [2])
        #expect((firedAt.values.first ?? 0) >= replaced)

        timer.arm(at: scheduler.now + 10_000_000, token: 3)
        timer.disarm()
        #expect(passed(scheduler, scheduler.now + 40_000_000))
        #expect(fired.values == [2])

        timer.arm(at: scheduler.now + 10_000_000, token: 4)
        timer.invalidate()
        timer.arm(at: scheduler.now + 10_000_000, token: 5)
        #expect(passed(scheduler, scheduler.now + 40_000_000))
        #expect(fired.values == [2])
    }

    @Test("schedule(after:) runs after the delay; disposing first cancels it")
    func scheduleAfter() {
        let scheduler = SerialDispatchQueueScheduler(label: "timer-test-3")
        let ran = SharedList<Int64>()
        let start = monotonicNow()
        let done = DispatchSemaphore(value: 0)
        scheduler.schedule(after: .milliseconds(20)) { ran.append(monotonicNow()); done.signal() }
        let cancelled = scheduler.schedule(after: .milliseconds(10)) { ran.append(-1) }
        cancelled.dispose()
        // The job due at 20 ms is the marker: the cancelled one, due at 10 ms on the same serial
        // queue, would have run before it.
        #expect(done.wait(timeout: .now() + 5) == .success)
        #expect(ran.values.count == 1)
        #expect((ran.values.first ?? 0) - start >= 20_000_000)
    }

    @Test("interval on a serial queue delivers in order at roughly the period")
    func intervalRealTime() {
        let scheduler = SerialDispatchQueueScheduler(label: "timer-test-4")
        let values = SharedList<Int>()
        let done = DispatchSemaphore(value: 0)
        let start = monotonicNow()
        let subscription = Observable<Int>.interval(.milliseconds(10), scheduler: scheduler)
            .subscribe(onNext: { v in
                values.append(v)
                if v == 4 { done.signal() }
            })
        #expect(done.wait(timeout: .now() + 5) == .success)
        let elapsed = monotonicNow() - start
        subscription.dispose()
        #expect(Array(values.values.prefix(5)) == [0, 1, 2, 3, 4])
        #expect(elapsed >= 50_000_000)   // fixed rate: the 5th element is due at 50 ms
        // A tick already running when dispose was called finishes before the first marker; after
        // it, no tick is due again before the second, three periods later.
        #expect(passed(scheduler, scheduler.now))
        let count = values.values.count
        #expect(passed(scheduler, scheduler.now + 30_000_000))
        #expect(values.values.count == count)   // stopped
    }
}
