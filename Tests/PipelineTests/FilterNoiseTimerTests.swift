import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// `filterNoise` runs on the same `TimedSink` as the timed operators: disposal from inside a
/// frame its timer delivered, and a frame sent re-entrantly from inside one (1 tick = 1 ms).
@Suite("filterNoise: timer-driven frames", .ownLiveResources)
struct FilterNoiseTimerTests {
    /// KEY_A with a 25 ms chatter window: `1@0 0@10` delivers the release at 25, from the timer.
    let window = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))

    @Test("disposal from inside the frame the timer delivered: nothing is delivered afterwards")
    func disposeInsideTimerFrame() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var lines: [String] = []
        var subscription: Disposable?
        subscription = subject.filterNoise(window, scheduler: scheduler).subscribe(onNext: { f in
            lines.append(describe(f))
            if describe(f) == "@25 KEY_A 0" { subscription?.dispose() }
        })
        subject.onNext(frame(0, EventType.key, C.KEY_A, 1))
        scheduler.advanceTo(10)
        subject.onNext(frame(10, EventType.key, C.KEY_A, 0))
        scheduler.advanceTo(40)
        subject.onNext(frame(40, EventType.key, C.KEY_A, 1))
        scheduler.advanceTo(100)
        #expect(lines == ["@0 KEY_A 1", "@25 KEY_A 0"])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("a frame sent from inside the frame the timer delivered is filtered after it, not nested")
    func reentrantFromTimerFrame() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<InputFrame>()
        var lines: [String] = []
        var depth = 0
        var nested = false
        let subscription = subject.filterNoise(window, scheduler: scheduler).subscribe(onNext: { f in
            depth += 1
            defer { depth -= 1 }
            if depth > 1 { nested = true }
            lines.append(describe(f))
            if describe(f) == "@25 KEY_A 0" { subject.onNext(frame(25, EventType.rel, C.REL_X, 5)) }
        })
        subject.onNext(frame(0, EventType.key, C.KEY_A, 1))
        scheduler.advanceTo(10)
        subject.onNext(frame(10, EventType.key, C.KEY_A, 0))
        scheduler.advanceTo(100)
        #expect(lines == ["@0 KEY_A 1", "@25 KEY_A 0", "@25 REL_X 5"])
        #expect(!nested)
        subscription.dispose()
    }
}
