@testable import Reactive
import ReactiveTesting
import Testing

/// ConfinedSubject: PublishSubject's semantics for an owner on one thread at a time (the
/// replay's player) — the same cases as SubjectTests' PublishSubject ones.
@Suite("ConfinedSubject", .ownLiveResources)
struct ConfinedSubjectTests {
    @Test("only events after subscribing; after completion only the completion")
    func publish() {
        let scheduler = TestScheduler()
        let subject = ConfinedSubject<String>()
        let events: [Recorded<Event<String>>] = [.next(210, "a"), .next(220, "b"), .next(230, "c"), .completed(240)]
        for record in events { scheduler.scheduleAt(record.time) { subject.on(record.value) } }
        let observers = [200, 215, 300].map { time -> TestableObserver<String> in
            let observer = scheduler.createObserver(String.self)
            var subscription: Disposable?
            scheduler.scheduleAt(time) { subscription = subject.asObservable().subscribe(observer) }
            scheduler.scheduleAt(1000) { subscription?.dispose() }
            return observer
        }
        scheduler.start()
        #expect(observers[0].events == [.next(210, "a"), .next(220, "b"), .next(230, "c"), .completed(240)])
        #expect(Marbles.render(observers[1].events, start: 200) == "--bc|")
        #expect(observers[2].events == [.completed(300)])
        #expect(!subject.hasObservers)
    }

    @Test("a late subscriber after an error gets only the error; nothing is sent after a stop")
    func error() {
        let subject = ConfinedSubject<Int>()
        var early: [String] = [], late: [String] = []
        let a = subject.subscribe(AnyObserver { early.append("\($0)") })
        subject.onNext(1)
        subject.onError(RxError.timeout)
        subject.onNext(2)
        subject.onCompleted()
        let b = subject.subscribe(AnyObserver { late.append("\($0)") })
        #expect(early == ["next(1)", "error(\(RxError.timeout))"])
        #expect(late == ["error(\(RxError.timeout))"])
        a.dispose()
        b.dispose()
    }

    @Test("dispose from inside onNext stops delivery at once, to its own and to later subscriptions")
    func disposeInsideOnNext() {
        let subject = ConfinedSubject<Int>()
        var first: [Int] = [], second: [Int] = []
        var firstSubscription: Disposable?, secondSubscription: Disposable?
        firstSubscription = subject.subscribe(AnyObserver { event in
            guard case .next(let value) = event else { return }
            first.append(value)
            if value == 1 {
                subject.onNext(2)               // queued behind the current element
                secondSubscription?.dispose()   // the second must not see 1 any more
                firstSubscription?.dispose()    // nor must this one see 2
            }
        })
        secondSubscription = subject.subscribe(AnyObserver { if case .next(let v) = $0 { second.append(v) } })
        subject.onNext(1)
        #expect(first == [1])
        #expect(second == [])
        #expect(!subject.hasObservers)
        firstSubscription = nil    // the closure holds its own subscription: break the cycle
        secondSubscription = nil
    }

    @Test("subscribe from inside onNext takes effect from the next element")
    func subscribeInsideOnNext() {
        let subject = ConfinedSubject<Int>()
        var late: [Int] = []
        var lateSubscription: Disposable?
        let subscription = subject.subscribe(AnyObserver { event in
            if case .next(1) = event {
                lateSubscription = subject.subscribe(AnyObserver { if case .next(let v) = $0 { late.append(v) } })
            }
        })
        subject.onNext(1)
        subject.onNext(2)
        #expect(late == [2])
        subscription.dispose()
        lateSubscription?.dispose()
    }

    @Test("re-entrant sends, a completion among them, are queued behind the current event, not nested")
    func reentrantSend() {
        let subject = ConfinedSubject<Int>()
        var log: [String] = []
        let subscription = subject.subscribe(AnyObserver { event in
            switch event {
            case .next(let value):
                log.append("begin \(value)")
                if value < 3 { subject.onNext(value + 1) } else { subject.onCompleted() }
                log.append("end \(value)")
            case .completed: log.append("completed")
            case .error: log.append("error")
            }
        })
        subject.onNext(1)
        #expect(log == ["begin 1", "end 1", "begin 2", "end 2", "begin 3", "end 3", "completed"])
        subscription.dispose()
    }

    @Test("a subject released with subscriptions nobody disposed leaves nothing alive (no cycle), and they receive nothing")
    func releasedWithLiveSubscriptions() {
        var received = 0
        var subscription: Disposable?
        do {
            let subject = ConfinedSubject<Int>()
            subscription = subject.asObservable().subscribe(AnyObserver { _ in received += 1 })
            subject.onNext(1)
        }
        #expect(received == 1)
        subscription?.dispose()   // after the subject went: nothing to do, no trap
        subscription = nil
    }
}
