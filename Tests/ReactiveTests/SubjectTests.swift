import Dispatch
@testable import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// PublishSubject, BehaviorSubject and ReplaySubject: semantics in virtual time, re-entrancy,
/// disposal, and several threads sending at once.
@Suite("subjects", .ownLiveResources)
struct SubjectTests {
    /// Feeds `events` into `subject` at their ticks and subscribes one observer per tick in
    /// `subscribeAt` (disposed at 1000).
    private func drive<S: ObservableType & ObserverType>(
        _ scheduler: TestScheduler, _ subject: S, _ events: [Recorded<Event<String>>], subscribeAt: [TestTime]
    ) -> [TestableObserver<String>] where S.Element == String {
        for record in events { scheduler.scheduleAt(record.time) { subject.on(record.value) } }
        let observers = subscribeAt.map { time -> TestableObserver<String> in
            let observer = scheduler.createObserver(String.self)
            var subscription: Disposable?
            scheduler.scheduleAt(time) { subscription = subject.subscribe(observer) }
            scheduler.scheduleAt(1000) { subscription?.dispose() }
            return observer
        }
        scheduler.start()
        return observers
    }

    private let events: [Recorded<Event<String>>] = [.next(210, "a"), .next(220, "b"), .next(230, "c"),
                                                     .completed(240)]

    @Test("PublishSubject: only events after subscribing; after completion only the completion")
    func publish() {
        let scheduler = TestScheduler()
        let observers = drive(scheduler, PublishSubject<String>(), events, subscribeAt: [200, 215, 300])
        #expect(observers[0].events == [.next(210, "a"), .next(220, "b"), .next(230, "c"), .completed(240)])
        #expect(Marbles.render(observers[1].events, start: 200) == "--bc|")
        #expect(observers[2].events == [.completed(300)])
    }

    @Test("PublishSubject: a late subscriber after an error gets only the error")
    func publishError() {
        let scheduler = TestScheduler()
        let observers = drive(scheduler, PublishSubject<String>(), [.next(210, "a"), .error(220, TestError(1))],
                              subscribeAt: [200, 300])
        #expect(observers[0].events == [.next(210, "a"), .error(220, TestError(1))])
        #expect(observers[1].events == [.error(300, TestError(1))])
    }

    @Test("BehaviorSubject: the current value first; value() follows; after completion only the stop")
    func behavior() throws {
        let scheduler = TestScheduler()
        let subject = BehaviorSubject(value: "z")
        #expect(try subject.value() == "z")
        let observers = drive(scheduler, subject, events, subscribeAt: [200, 215, 300])
        #expect(observers[0].events == [.next(200, "z"), .next(210, "a"), .next(220, "b"), .next(230, "c"),
                                        .completed(240)])
        #expect(Marbles.render(observers[1].events, start: 200) == "-abc|")
        #expect(observers[1].events.first == .next(215, "a"))
        #expect(observers[2].events == [.completed(300)])
        #expect(try subject.value() == "c")
    }

    @Test("BehaviorSubject: value() throws the error it ended with; late subscribers get the error")
    func behaviorError() {
        let scheduler = TestScheduler()
        let subject = BehaviorSubject(value: "z")
        let observers = drive(scheduler, subject, [.next(210, "a"), .error(220, TestError(2))], subscribeAt: [300])
        #expect(observers[0].events == [.error(300, TestError(2))])
        #expect(throws: TestError(2)) { try subject.value() }
    }

    @Test("BehaviorSubject: value() re-entrantly from inside its own onNext returns the element")
    func behaviorValueReentrant() {
        let subject = BehaviorSubject(value: 0)
        var seen: [(Int, Int)] = []
        let subscription = subject.subscribe(onNext: { element in
            seen.append((element, (try? subject.value()) ?? -1))
        })
        subject.onNext(1)
        subject.onNext(2)
        #expect(seen.map(\.0) == [0, 1, 2])
        #expect(seen.map(\.1) == [0, 1, 2])
        subscription.dispose()
    }

    /// It used to sleep 50 ms inside the delivery and hope the reader was blocked by then;
    /// when the reader came later, the test passed without testing anything (its own comment
    /// said so). Now the delivery does not end until the reader's request is queued in the
    /// subject's gate (`wip` counts it) or the reader has returned: no timing, and a `value()`
    /// that did not wait for the delivery fails it (`after` false) instead of hanging it.
    @Test("BehaviorSubject: value() from another thread while delivering waits for the delivery")
    func behaviorValueOtherThread() throws {
        let subject = BehaviorSubject(value: 0)
        let inside = DispatchSemaphore(value: 0)
        let deliveryDone = Atomic<Bool>(false)
        let readerReturned = Atomic<Bool>(false)
        let readerQueued = Atomic<Bool>(false)
        let subscription = subject.subscribe(onNext: { element in
            guard element == 1 else { return }
            inside.signal()
            // The deliverer is the gate's one unit of work in progress; the reader's request,
            // handed over to it, is the second.
            while subject.core.gate.wip.load(ordering: .acquiring) < 2, !readerReturned.load(ordering: .acquiring) {
                sched_yield()
            }
            readerQueued.store(!readerReturned.load(ordering: .acquiring), ordering: .relaxed)
            deliveryDone.store(true, ordering: .releasing)
        })
        let result = Mutex<(Int, Bool)?>(nil)
        runConcurrently(threads: 2) { t in
            if t == 0 {
                subject.onNext(1)
            } else {
                inside.wait()
                let value = (try? subject.value()) ?? -1
                let after = deliveryDone.load(ordering: .acquiring)
                readerReturned.store(true, ordering: .releasing)
                result.withLock { $0 = (value, after) }
            }
        }
        let (value, after) = try #require(result.withLock { $0 })
        let queued = readerQueued.load(ordering: .relaxed)
        #expect(queued)   // the reader was waiting on the delivery
        #expect(value == 1)
        #expect(after)   // it did not tear into the delivery
        subscription.dispose()
    }

    @Test("ReplaySubject(bufferSize: 2): late subscribers get the last two, then the stop event")
    func replay() {
        let scheduler = TestScheduler()
        let observers = drive(scheduler, ReplaySubject<String>(bufferSize: 2), events,
                              subscribeAt: [200, 235, 300])
        #expect(observers[0].events == [.next(210, "a"), .next(220, "b"), .next(230, "c"), .completed(240)])
        #expect(observers[1].events == [.next(235, "b"), .next(235, "c"), .completed(240)])
        #expect(observers[2].events == [.next(300, "b"), .next(300, "c"), .completed(300)])
        #expect(Marbles.render(observers[2].events, start: 300) == "(bc|)")
    }

    @Test("ReplaySubject: buffered elements then the error for a late subscriber")
    func replayError() {
        let scheduler = TestScheduler()
        let observers = drive(scheduler, ReplaySubject<String>(bufferSize: 5),
                              [.next(210, "a"), .error(220, TestError(3))], subscribeAt: [300])
        #expect(observers[0].events == [.next(300, "a"), .error(300, TestError(3))])
    }

    @Test("dispose from inside onNext stops delivery immediately (own and other subscriptions)")
    func disposeInsideOnNext() {
        let subject = PublishSubject<Int>()
        var first: [Int] = []
        var second: [Int] = []
        var secondSubscription: Disposable?
        var firstSubscription: Disposable?
        firstSubscription = subject.subscribe(onNext: { value in
            first.append(value)
            if value == 1 {
                subject.onNext(2)               // queued behind the current element
                secondSubscription?.dispose()   // the second must not see 1 any more
                firstSubscription?.dispose()    // nor must this one see 2
            }
        })
        secondSubscription = subject.subscribe(onNext: { second.append($0) })
        subject.onNext(1)
        #expect(first == [1])
        #expect(second == [])
        #expect(!subject.hasObservers)
        firstSubscription = nil
        secondSubscription = nil
    }

    @Test("subscribe from inside onNext takes effect after the current element")
    func subscribeInsideOnNext() {
        let subject = PublishSubject<Int>()
        var late: [Int] = []
        var lateSubscription: Disposable?
        let subscription = subject.subscribe(onNext: { value in
            if value == 1 { lateSubscription = subject.subscribe(onNext: { late.append($0) }) }
        })
        subject.onNext(1)
        subject.onNext(2)
        #expect(late == [2])
        subscription.dispose()
        lateSubscription?.dispose()
    }

    @Test("re-entrant sends are queued, not nested")
    func reentrantSend() {
        let subject = ReplaySubject<Int>(bufferSize: 1)
        var log: [String] = []
        let subscription = subject.subscribe(onNext: { value in
            log.append("begin \(value)")
            if value < 3 { subject.onNext(value + 1) }
            log.append("end \(value)")
        })
        subject.onNext(1)
        #expect(log == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3"])
        subscription.dispose()
    }

    @Test("several threads feeding one subject: N×M events to every observer, serial, per-thread order",
          arguments: ["publish", "behavior", "replay"])
    func threads(kind: String) {
        let threads = 4, perThread = 2_000
        let subject: any ObservableType<Int> & ObserverType<Int> & Sendable = switch kind {
        case "publish": PublishSubject<Int>()
        case "behavior": BehaviorSubject(value: -1)
        default: ReplaySubject<Int>(bufferSize: 3)
        }
        let probes = [DeliveryProbe<Int>(), DeliveryProbe<Int>()]
        let subscriptions = probes.map { probe in
            subject.subscribe(onNext: { if $0 >= 0 { probe.receive($0) } })
        }
        runConcurrently(threads: threads) { t in
            for i in 0..<perThread { subject.on(.next(t * 1_000_000 + i)) }
        }
        for probe in probes {
            #expect(probe.overlaps == 0)
            #expect(probe.values.count == threads * perThread)
            #expect(perProducerComplete(probe.values, producers: threads, perProducer: perThread))
        }
        subscriptions.forEach { $0.dispose() }
    }

    @Test("an element nobody observes skips the gate, yet reaches a subscription its thread made before it (queued behind another thread)")
    func unobservedElementKeepsThreadOrder() {
        let subject = PublishSubject<Int>()
        let done = AtomicFlag()
        let missed = Atomic<Int>(0)
        // Up to 20,000 rounds (without the idle-gate check a release build missed 5 in
        // 20,000), but at most 3 s: sanitizer builds run fewer.
        let rounds = 20_000
        let stopAt = monotonicNow() + 3_000_000_000
        let ran = Atomic<Int>(0)
        runConcurrently(threads: 2) { t in
            if t == 1 {
                // Keeps entering the gate (subscribe, then unsubscribe: the count goes back
                // to 0 inside it), so the other thread's subscriptions are often queued.
                // It can queue faster than a thread inside drains, holding that thread
                // there: it stops 1 s after the rounds' time at the latest, so the test ends.
                while !done.isSet, monotonicNow() < stopAt + 1_000_000_000 {
                    subject.subscribe(onNext: { _ in }).dispose()
                }
                return
            }
            for round in 0..<rounds where monotonicNow() < stopAt {
                ran.wrappingAdd(1, ordering: .relaxed)
                let seen = AtomicFlag()
                let subscription = subject.subscribe(onNext: { if $0 == round { seen.set() } })
                subject.onNext(round)
                // Delivered now, or by the other thread before it leaves the gate.
                let deadline = monotonicNow() + 1_000_000_000
                while !seen.isSet, monotonicNow() < deadline { sched_yield() }
                if !seen.isSet { missed.wrappingAdd(1, ordering: .relaxed) }
                subscription.dispose()
            }
            done.set()
        }
        #expect(missed.load(ordering: .relaxed) == 0)
        #expect(ran.load(ordering: .relaxed) >= 100, "too few rounds to mean anything")
        #expect(!subject.hasObservers)
    }

    @Test("subscribe and dispose on several threads while another thread sends")
    func concurrentSubscribeDispose() {
        let subject = PublishSubject<Int>()
        let probe = DeliveryProbe<Int>()
        let keeper = subject.subscribe(onNext: { probe.receive($0) })
        let broken = Atomic<Int>(0)
        let count = 5_000
        runConcurrently(threads: 4) { t in
            if t == 0 {
                for i in 0..<count { subject.onNext(i) }
                return
            }
            for _ in 0..<500 {
                // A transient subscriber must see a gap-free increasing run.
                let last = Mutex<Int?>(nil)
                let subscription = subject.subscribe(onNext: { value in
                    last.withLock { previous in
                        if let p = previous, value != p + 1 { broken.wrappingAdd(1, ordering: .relaxed) }
                        previous = value
                    }
                })
                subscription.dispose()
            }
        }
        #expect(broken.load(ordering: .relaxed) == 0)
        #expect(probe.overlaps == 0)
        #expect(probe.values == Array(0..<count))
        keeper.dispose()
        #expect(!subject.hasObservers)
    }
}

#if canImport(Glibc)
import Glibc
#endif
