import Reactive
import ReactiveTesting
import Testing

/// debounce in virtual time (1 tick = 1 ms).
@Suite("debounce", .ownLiveResources)
struct DebounceTests {
    @Test("emits a value once it has been stable for the window")
    func stableForWindow() {
        let scheduler = TestScheduler()
        // 1 is replaced by 2 within 20 ms; 2 is stable from 220 to 240; 3 at 300 is stable.
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(300, 3), .next(350, 4), .completed(400),
        ])
        let observer = scheduler.start {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        #expect(observer.events == [.next(240, 2), .next(320, 3), .next(370, 4), .completed(400)])
        #expect(source.subscriptions == [Subscription(200, 400)])
        #expect(Marbles.render(observer.events, start: 200) == "----2-------3----4--|")
    }

    @Test("completion flushes the pending value at once")
    func flushOnCompletion() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .completed(230)])
        let observer = scheduler.start {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        #expect(observer.events == [.next(230, 2), .completed(230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "---(2|)")
    }

    @Test("an error drops the pending value")
    func errorDropsPending() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(1))])
        let observer = scheduler.start {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        #expect(observer.events == [.error(220, TestError(1))])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(Marbles.render(observer.events, start: 200) == "--#")
    }

    @Test("disposal while the timer is pending: nothing fires afterwards")
    func disposeWhilePending() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2)])
        let observer = scheduler.start(disposed: 230) {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        #expect(observer.events.isEmpty)
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(!scheduler.hasPendingWork)
    }

    @Test("a stale timer (re-armed by a newer element) does nothing")
    func staleTimer() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(229, 2), .next(248, 3)])
        let observer = scheduler.start(disposed: 300) {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        // The arms for 230 and 249 are superseded; only 268 fires.
        #expect(observer.events == [.next(268, 3)])
    }

    @Test("an element exactly at the deadline re-arms rather than emitting twice")
    func elementAtDeadline() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(230, 2)])
        let observer = scheduler.start(disposed: 300) {
            source.asObservable().debounce(.milliseconds(20), scheduler: scheduler)
        }
        // The hot event at 230 was scheduled before the timer entry for 230, so it runs first.
        #expect(observer.events == [.next(250, 2)])
    }

    @Test("disposal from inside onNext")
    func disposeInsideOnNext() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = subject.debounce(.milliseconds(5), scheduler: scheduler).subscribe(onNext: {
            received.append($0)
            subscription?.dispose()
        })
        subject.onNext(1)
        scheduler.advance(by: .milliseconds(5))
        subject.onNext(2)
        scheduler.advance(by: .milliseconds(5))
        #expect(received == [1])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("re-entrant emission from inside onNext starts a new window")
    func reentrant() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var received: [(Int, Int64)] = []
        let subscription = subject.debounce(.milliseconds(5), scheduler: scheduler).subscribe(onNext: {
            received.append(($0, scheduler.now / 1_000_000))
            if $0 == 1 { subject.onNext(2) }
        })
        subject.onNext(1)
        scheduler.advance(by: .milliseconds(20))
        #expect(received.map(\.0) == [1, 2])
        #expect(received.map(\.1) == [5, 10])
        subscription.dispose()
    }

    @Test("several threads feeding a subject: every burst settles to its last value")
    func threads() {
        let scheduler = SerialDispatchQueueScheduler(label: "debounce-test")
        let subject = PublishSubject<Int>()
        let received = SharedList<Int>()
        let done = DispatchSemaphore(value: 0)
        let subscription = subject.debounce(.milliseconds(500), scheduler: scheduler)
            .subscribe(onNext: { received.append($0) }, onCompleted: { done.signal() })
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<200 { subject.onNext(thread * 1000 + i) }
        }
        subject.onNext(-1)
        subject.onCompleted()
        #expect(done.wait(timeout: .now() + 5) == .success)
        // Completion flushes the last value at once; nothing else could be stable for 500 ms.
        #expect(received.values == [-1])
        subscription.dispose()
    }
}

import Dispatch
