import Reactive
import ReactiveTesting
import Testing

/// take(_:), take(for:scheduler:), skip(_:).
@Suite("take / skip", .ownLiveResources)
struct TakeSkipTests {
    @Test("take(n) completes after n elements and disposes the source at once")
    func takeCount() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(230, 3), .next(240, 4), .completed(250),
        ])
        // Directly on the test observable (no `create` wrapper): take itself disposes.
        let observer = scheduler.start { source.take(2) }
        #expect(observer.events == [.next(210, 1), .next(220, 2), .completed(220)])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(Marbles.render(observer.events, start: 200) == "-1(2|)")
    }

    @Test("take(0) completes at once without subscribing")
    func takeZero() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1)])
        let observer = scheduler.start { source.take(0) }
        #expect(observer.events == [.completed(200)])
        #expect(source.subscriptions.isEmpty)
        #expect(Marbles.render(observer.events, start: 200) == "|")
    }

    @Test("take with a negative count fails with argumentOutOfRange")
    func takeNegative() {
        let observer = TestScheduler().start { Observable.of(1).take(-1) }
        #expect(observer.events == [.error(200, RxError.argumentOutOfRange)])
    }

    @Test("take: the source completing first is passed on; an error is passed on")
    func takeEarlyStop() {
        let scheduler = TestScheduler()
        let a = scheduler.createHotObservable([.next(210, 1), .completed(220)])
        let b = scheduler.createHotObservable([.next(210, 1), .error(230, TestError(1))])
        let oa = scheduler.createObserver(Int.self)
        let ob = scheduler.createObserver(Int.self)
        scheduler.scheduleAt(200) {
            _ = a.take(5).subscribe(oa)
            _ = b.take(5).subscribe(ob)
        }
        scheduler.start()
        #expect(oa.events == [.next(210, 1), .completed(220)])
        #expect(ob.events == [.next(210, 1), .error(230, TestError(1))])
        #expect(a.subscriptions == [Subscription(200, 220)])
        #expect(b.subscriptions == [Subscription(200, 230)])
    }

    @Test("take stops a synchronous source's extra elements")
    func takeSynchronous() {
        var events: [Event<Int>] = []
        _ = Observable.from(1...10).take(3).subscribe(AnyObserver { events.append($0) })
        #expect(events == [.next(1), .next(2), .next(3), .completed])
    }

    @Test("take: disposal from inside onNext sends no completion")
    func takeDisposeInsideOnNext() {
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        var subscription: Disposable?
        subscription = subject.take(1).subscribe(AnyObserver { event in
            events.append(event)
            subscription?.dispose()
        })
        subject.onNext(1)
        #expect(events == [.next(1)])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("take: re-entrant emission from inside onNext counts and completes in order")
    func takeReentrant() {
        let subject = PublishSubject<Int>()
        var events: [Event<Int>] = []
        let subscription = subject.take(2).subscribe(AnyObserver { event in
            events.append(event)
            if case .next(1) = event { subject.onNext(2); subject.onNext(3) }
        })
        subject.onNext(1)
        #expect(events == [.next(1), .next(2), .completed])
        subscription.dispose()
    }

    @Test("take(for:) passes elements for the duration, then completes and disposes the source")
    func takeFor() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(240, 3), .next(260, 4), .completed(300),
        ])
        let observer = scheduler.start { source.take(for: .milliseconds(50), scheduler: scheduler) }
        #expect(observer.events == [.next(210, 1), .next(220, 2), .next(240, 3), .completed(250)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "-12-3|")
    }

    @Test("take(for:): an earlier completion or error is passed on and the timer released")
    func takeForEarlyStop() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(3))])
        let observer = scheduler.start { source.take(for: .milliseconds(50), scheduler: scheduler) }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(3))])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("take(for:): disposal while the timer is pending")
    func takeForDisposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(230, 2)])
        let observer = scheduler.start(disposed: 220) { source.take(for: .milliseconds(50), scheduler: scheduler) }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("skip(n) drops the first n elements")
    func skipCount() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(230, 3), .next(240, 4), .completed(250),
        ])
        let observer = scheduler.start { source.asObservable().skip(2) }
        #expect(observer.events == [.next(230, 3), .next(240, 4), .completed(250)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "---34|")
    }

    @Test("skip: completion and error while still skipping; skip(0); negative count")
    func skipEdges() {
        let scheduler = TestScheduler()
        let a = scheduler.createHotObservable([.next(210, 1), .completed(220)])
        let oa = scheduler.start { a.asObservable().skip(5) }
        #expect(oa.events == [.completed(220)])

        let b = TestScheduler().start { Observable<Int>.error(TestError(1)).skip(5) }
        #expect(b.events == [.error(200, TestError(1))])

        var values: [Int] = []
        _ = Observable.of(1, 2).skip(0).subscribe(onNext: { values.append($0) })
        #expect(values == [1, 2])

        let c = TestScheduler().start { Observable.of(1).skip(-1) }
        #expect(c.events == [.error(200, RxError.argumentOutOfRange)])
    }

    @Test("skip: each subscription counts from zero")
    func skipPerSubscription() {
        let s = Observable.of(1, 2, 3).skip(1)
        var a: [Int] = []
        var b: [Int] = []
        _ = s.subscribe(onNext: { a.append($0) })
        _ = s.subscribe(onNext: { b.append($0) })
        #expect(a == [2, 3])
        #expect(b == [2, 3])
    }
}
