import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// A scheduler whose timers fire only when the test says so, so that a tick can be handed
/// over "in flight" — after the timer was invalidated or the subscription disposed.
private final class ManualScheduler: SchedulerType, @unchecked Sendable {
    final class Timer: SchedulerTimer, @unchecked Sendable {
        var handler: ((UInt64) -> Void)?
        var armed: (deadline: Int64, token: UInt64)?
        var invalidated = false
        init(_ handler: @escaping (UInt64) -> Void) { self.handler = handler }
        func arm(at deadline: Int64, token: UInt64) { armed = (deadline, token) }
        func disarm() { armed = nil }
        func invalidate() {
            invalidated = true
            armed = nil
            handler = nil
        }
    }

    var now: Int64 = 0
    var timers: [Timer] = []

    func schedule(_ action: @escaping () -> Void) -> Disposable {
        action()
        return Disposables.create()
    }

    func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable {
        fatalError("not used by TimedSink")
    }

    func makeTimer(_ handler: @escaping (UInt64) -> Void) -> SchedulerTimer {
        let timer = Timer(handler)
        timers.append(timer)
        return timer
    }
}

/// What a `Probe` machine saw, in order.
private final class ProbeLog: @unchecked Sendable {
    var entries: [String] = []
}

/// A `TimedMachine` that logs what reaches it and does what its inputs say.
private struct Probe: TimedMachine {
    enum Input {
        case note(Int)
        case arm(at: Int64)
        case sendFromInside(Int)
        case dispose
    }

    let log: ProbeLog
    var disposeOnTick = false

    mutating func on(_ input: Input, _ sink: TimedSink<Probe>) {
        switch input {
        case .note(let n):
            log.entries.append("note \(n)")
        case .arm(let deadline):
            sink.arm(at: deadline)
            log.entries.append("armed \(deadline)")
        case .sendFromInside(let n):
            sink.send(.note(n))
            log.entries.append("sent \(n)")
        case .dispose:
            sink.dispose()
            sink.send(.note(99))
            log.entries.append("disposed")
        }
    }

    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Probe>) {
        log.entries.append("tick \(token) current \(sink.isCurrent(token))")
        if disposeOnTick {
            sink.dispose()
            sink.send(.note(98))
        }
    }
}

/// The shared skeleton of the timed operators and the noise-filter stage on its own:
/// gate, timer slot with generation tokens, disposal.
@Suite("TimedSink", .ownLiveResources)
struct TimedSinkTests {
    @Test("a send from inside the machine is handled after the current input, not nested")
    func reentrantSendIsQueued() {
        let log = ProbeLog()
        let sink = TimedSink(Probe(log: log), scheduler: ManualScheduler())
        sink.send(.sendFromInside(1))
        sink.send(.note(2))
        #expect(log.entries == ["sent 1", "note 1", "note 2"])
        sink.dispose()
    }

    @Test("re-arming reuses one timer slot; a tick with an older token is stale")
    func oneSlotAndTokens() {
        let scheduler = ManualScheduler()
        let log = ProbeLog()
        let sink = TimedSink(Probe(log: log), scheduler: scheduler)
        sink.send(.arm(at: 5))
        sink.send(.arm(at: 7))
        sink.send(.arm(at: 9))
        #expect(scheduler.timers.count == 1)
        let timer = scheduler.timers[0]
        #expect(timer.armed?.deadline == 9)
        #expect(timer.armed?.token == 3)
        timer.handler?(2)   // a fire of the second arm that was already under way
        timer.handler?(3)
        #expect(log.entries.suffix(2) == ["tick 2 current false", "tick 3 current true"])
        sink.dispose()
    }

    @Test("dispose invalidates the timer; a tick in flight afterwards reaches nothing")
    func tickInFlightAfterDispose() {
        let scheduler = ManualScheduler()
        let log = ProbeLog()
        let sink = TimedSink(Probe(log: log), scheduler: scheduler)
        sink.send(.arm(at: 5))
        let timer = scheduler.timers[0]
        let inFlight = timer.handler!
        sink.dispose()
        #expect(timer.invalidated)
        #expect(timer.handler == nil)
        inFlight(1)
        sink.send(.note(1))
        sink.dispose()   // idempotent
        #expect(log.entries == ["armed 5"])
    }

    @Test("dispose from inside a tick: nothing reaches the machine afterwards, the timer is released")
    func disposeInsideTick() {
        let scheduler = ManualScheduler()
        let log = ProbeLog()
        let sink = TimedSink(Probe(log: log, disposeOnTick: true), scheduler: scheduler)
        sink.send(.arm(at: 5))
        let timer = scheduler.timers[0]
        timer.handler?(1)
        #expect(timer.invalidated)
        sink.send(.note(1))
        #expect(log.entries == ["armed 5", "tick 1 current true"])
    }

    @Test("dispose from inside an input: the input sent after it in the same turn is dropped")
    func disposeInsideInput() {
        let log = ProbeLog()
        let sink = TimedSink(Probe(log: log), scheduler: ManualScheduler())
        sink.send(.arm(at: 5))
        sink.send(.dispose)
        #expect(sink.isDisposed)
        #expect(log.entries == ["armed 5", "disposed"])
    }
}

/// Per operator built on `TimedSink`: disposal from inside an emission that a timer made, and
/// an element sent re-entrantly from inside such an emission (virtual time, 1 tick = 1 ms).
@Suite("timed operators: timer-driven emissions", .ownLiveResources)
struct TimerDrivenEmissionTests {
    @Test("throttle: disposal from inside the window's-end emission")
    func throttleDisposeInsideTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var received: [(Int, TestTime)] = []
        var subscription: Disposable?
        subscription = subject.throttle(.milliseconds(10), latest: true, scheduler: scheduler)
            .subscribe(onNext: { value in
                received.append((value, scheduler.clockTicks))
                if value == 2 { subscription?.dispose() }
            })
        subject.onNext(1)
        scheduler.advanceTo(3)
        subject.onNext(2)   // kept for 10
        scheduler.advanceTo(12)
        subject.onNext(3)
        scheduler.advanceTo(50)
        #expect(received.map(\.0) == [1, 2])
        #expect(received.map(\.1) == [0, 10])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("throttle: an element sent from inside the window's-end emission is kept for the next window")
    func throttleReentrantFromTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var received: [(Int, TestTime)] = []
        let subscription = subject.throttle(.milliseconds(10), latest: true, scheduler: scheduler)
            .subscribe(onNext: { value in
                received.append((value, scheduler.clockTicks))
                if value == 2 { subject.onNext(4) }   // inside the window the tick opened
            })
        subject.onNext(1)
        scheduler.advanceTo(3)
        subject.onNext(2)
        scheduler.advanceTo(50)
        #expect(received.map(\.0) == [1, 2, 4])
        #expect(received.map(\.1) == [0, 10, 20])
        subscription.dispose()
    }

    @Test("buffer: disposal from inside a timer-emitted array")
    func bufferDisposeInsideTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var arrays: [([Int], TestTime)] = []
        var subscription: Disposable?
        subscription = subject.buffer(timeSpan: .milliseconds(10), count: 5, scheduler: scheduler)
            .subscribe(onNext: { array in
                arrays.append((array, scheduler.clockTicks))
                subscription?.dispose()
            })
        subject.onNext(1)
        scheduler.advanceTo(15)
        subject.onNext(2)
        scheduler.advanceTo(100)
        #expect(arrays.map(\.0) == [[1]])
        #expect(arrays.map(\.1) == [10])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("buffer: an element sent from inside a timer-emitted array goes into the next one")
    func bufferReentrantFromTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var arrays: [([Int], TestTime)] = []
        let subscription = subject.buffer(timeSpan: .milliseconds(10), count: 5, scheduler: scheduler)
            .subscribe(onNext: { array in
                arrays.append((array, scheduler.clockTicks))
                if array == [1] { subject.onNext(2) }
            })
        subject.onNext(1)
        scheduler.advanceTo(30)
        #expect(arrays.map(\.0) == [[1], [2], []])
        #expect(arrays.map(\.1) == [10, 20, 30])
        subscription.dispose()
    }

    @Test("take(for:): disposal from inside the completion the timer delivers is idempotent")
    func takeForDisposeInsideTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        var subscription: Disposable?
        subscription = subject.take(for: .milliseconds(10), scheduler: scheduler)
            .subscribe(AnyObserver { event in
                events.append(event)
                if event.isStopEvent { subscription?.dispose() }
            })
        subject.onNext(1)
        scheduler.advanceTo(10)
        #expect(events == [.next(1), .completed])
        #expect(!subject.hasObservers)
        subject.onNext(2)
        subscription?.dispose()
        #expect(events == [.next(1), .completed])
        subscription = nil
    }

    @Test("take(for:): an element sent from inside the timer's completion is not delivered")
    func takeForReentrantFromTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        let subscription = subject.take(for: .milliseconds(10), scheduler: scheduler)
            .subscribe(AnyObserver { event in
                events.append(event)
                if event.isStopEvent { subject.onNext(2) }
            })
        subject.onNext(1)
        scheduler.advanceTo(50)
        #expect(events == [.next(1), .completed])
        #expect(!subject.hasObservers)
        subscription.dispose()
    }

    @Test("timeout: disposal from inside the timeout error the timer delivers")
    func timeoutDisposeInsideTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [(Event<Int>, TestTime)] = []
        var subscription: Disposable?
        subscription = subject.timeout(.milliseconds(10), scheduler: scheduler)
            .subscribe(AnyObserver { event in
                events.append((event, scheduler.clockTicks))
                if event.isStopEvent { subscription?.dispose() }
            })
        subject.onNext(1)
        scheduler.advanceTo(50)
        #expect(events.map(\.0) == [.next(1), .error(RxError.timeout)])
        #expect(events.map(\.1) == [0, 10])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("timeout with other: disposal from inside other's first element, sent during the switch")
    func timeoutOtherDisposeInsideTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        var subscription: Disposable?
        subscription = subject.timeout(.milliseconds(10), other: Observable.of(7, 8), scheduler: scheduler)
            .subscribe(AnyObserver { event in
                events.append(event)
                subscription?.dispose()
            })
        scheduler.advanceTo(50)
        #expect(events == [.next(7)])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("timeout with other: a source element sent from inside other's element is dropped")
    func timeoutReentrantFromTick() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        let subscription = subject.timeout(.milliseconds(10), other: Observable.of(7, 8), scheduler: scheduler)
            .subscribe(AnyObserver { event in
                events.append(event)
                if case .next(7) = event { subject.onNext(3) }
            })
        scheduler.advanceTo(50)
        #expect(events == [.next(7), .next(8), .completed])
        #expect(!subject.hasObservers)
        subscription.dispose()
    }
}

/// `ThrottleState.discardKept()`, the one operation the `throttle` operator does not use (the
/// noise filter's hysteresis calls it): the kept value is dropped, the window still ends at
/// its time without an emission, and the next value after it is emitted at once.
@Suite("ThrottleState.discardKept", .ownLiveResources)
struct ThrottleDiscardKeptTests {
    @Test("the kept value is dropped; the tick closes the window without emitting")
    func discardKept() {
        var state = ThrottleState<Int>(dueTime: 10, latest: true)
        guard case .emit(1) = state.onNext(1, now: 0) else { Issue.record("1 not emitted"); return }
        guard case .arm(let deadline, let token) = state.onNext(2, now: 3) else { Issue.record("no arm"); return }
        #expect(deadline == 10)
        #expect(state.discardKept() == 2)
        #expect(state.kept == nil)
        #expect(state.discardKept() == nil)
        guard case .none = state.onTick(token, now: 10) else { Issue.record("the tick emitted"); return }
        #expect(state.windowEnd == nil)
        guard case .emit(3) = state.onNext(3, now: 11) else { Issue.record("3 not emitted at once"); return }
        #expect(state.windowEnd == 21)
    }
}
