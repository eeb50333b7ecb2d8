import Reactive
import ReactiveTesting
import Testing

/// timeout(_:scheduler:) and timeout(_:other:scheduler:).
@Suite("timeout", .ownLiveResources)
struct TimeoutTests {
    @Test("each element restarts the period; a gap longer than dueTime fails with RxError.timeout")
    func timesOut() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(230, 2), .next(290, 3)])
        let observer = scheduler.start { source.timeout(.milliseconds(30), scheduler: scheduler) }
        #expect(observer.events == [.next(210, 1), .next(230, 2), .error(260, RxError.timeout)])
        #expect(source.subscriptions == [Subscription(200, 260)])
        #expect(Marbles.render(observer.events, start: 200) == "-1-2--#")
    }

    @Test("the first period starts at subscription")
    func firstPeriod() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(240, 1)])
        let observer = scheduler.start { source.timeout(.milliseconds(30), scheduler: scheduler) }
        #expect(observer.events == [.error(230, RxError.timeout)])
        #expect(source.subscriptions == [Subscription(200, 230)])
    }

    @Test("completion and error within the period are passed on; the timer is released")
    func stopsInTime() {
        let scheduler = TestScheduler()
        let a = scheduler.createHotObservable([.next(210, 1), .completed(230)])
        let oa = scheduler.start { a.timeout(.milliseconds(30), scheduler: scheduler) }
        #expect(oa.events == [.next(210, 1), .completed(230)])
        #expect(a.subscriptions == [Subscription(200, 230)])

        let s2 = TestScheduler()
        let b = s2.createHotObservable([.error(220, TestError(1))] as [Recorded<Event<Int>>])
        let ob = s2.start { b.timeout(.milliseconds(30), scheduler: s2) }
        #expect(ob.events == [.error(220, TestError(1))])
    }

    @Test("an element at exactly the deadline that runs before the tick restarts the period")
    func elementAtDeadline() {
        let scheduler = TestScheduler()
        // The hot events are scheduled when the observable is created (before the subscription
        // arms the timer), so at 230 the source's element runs first and restarts the period.
        let source = scheduler.createHotObservable([.next(230, 1)])
        let observer = scheduler.start { source.timeout(.milliseconds(30), scheduler: scheduler) }
        #expect(observer.events == [.next(230, 1), .error(260, RxError.timeout)])
    }

    @Test("timeout with other: switches to other and stops timing")
    func switchesToOther() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(250, 2), .completed(400)])
        let other = scheduler.createColdObservable([.next(10, 7), .next(100, 8), .completed(110)])
        let observer = scheduler.start {
            source.timeout(.milliseconds(20), other: other, scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 1), .next(240, 7), .next(330, 8), .completed(340)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(other.subscriptions == [Subscription(230, 340)])
        #expect(Marbles.render(observer.events, start: 200) == "-1--7--------8|")
    }

    @Test("disposal while the timer is pending: no timeout afterwards")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1)])
        let observer = scheduler.start(disposed: 220) { source.timeout(.milliseconds(30), scheduler: scheduler) }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("disposal after the switch disposes other")
    func disposalAfterSwitch() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([Recorded<Event<Int>>]())
        let other = scheduler.createHotObservable([.next(260, 5), .next(300, 6)])
        let observer = scheduler.start(disposed: 280) {
            source.timeout(.milliseconds(20), other: other, scheduler: scheduler)
        }
        #expect(observer.events == [.next(260, 5)])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(other.subscriptions == [Subscription(220, 280)])
    }

    @Test("disposal from inside onNext stops the timer")
    func disposeInsideOnNext() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        var subscription: Disposable?
        subscription = subject.timeout(.milliseconds(10), scheduler: scheduler).subscribe(AnyObserver { event in
            events.append(event)
            subscription?.dispose()
        })
        subject.onNext(1)
        scheduler.advance(by: .milliseconds(50))
        #expect(events == [.next(1)])
        subscription = nil
    }

    @Test("re-entrant emission from inside onNext is delivered after the current element")
    func reentrant() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        let subscription = subject.timeout(.milliseconds(10), scheduler: scheduler).subscribe(AnyObserver { event in
            events.append(event)
            if case .next(1) = event { subject.onNext(2) }
        })
        subject.onNext(1)
        #expect(events == [.next(1), .next(2)])
        scheduler.advance(by: .milliseconds(9))
        #expect(events.count == 2)
        scheduler.advance(by: .milliseconds(1))
        #expect(events == [.next(1), .next(2), .error(RxError.timeout)])
        subscription.dispose()
    }

    @Test("an element from a scheduled action restarts the period")
    func restartFromScheduledAction() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var events: [Recorded<Event<Int>>] = []
        let subscription = subject.timeout(.milliseconds(10), scheduler: scheduler).subscribe(AnyObserver { event in
            events.append(Recorded(time: scheduler.clockTicks, value: event))
        })
        scheduler.scheduleAt(8) { subject.onNext(2) }
        scheduler.start()
        #expect(events == [.next(8, 2), .error(18, RxError.timeout)])
        subscription.dispose()
    }
}
