import Reactive
import ReactiveTesting
import Testing

/// share(replay:scope: .whileConnected) in virtual time; one tick = 1 ms.
@Suite("share", .ownLiveResources)
struct ShareTests {
    /// Subscribes `observers.count` observers to `shared` at the given ticks and disposes
    /// them at the given ticks.
    private func run(_ scheduler: TestScheduler, _ shared: Observable<String>,
                     _ windows: [(TestTime, TestTime)]) -> [TestableObserver<String>] {
        windows.map { window in
            let observer = scheduler.createObserver(String.self)
            var subscription: Disposable?
            scheduler.scheduleAt(window.0) { subscription = shared.subscribe(observer) }
            scheduler.scheduleAt(window.1) { subscription?.dispose(); subscription = nil }
            return observer
        }
    }

    @Test("one source subscription for all subscribers; a late subscriber sees only later elements")
    func sharesOneSubscription() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(20, "b"), .next(30, "c"),
                                                  .completed(40, String.self)])
        let observers = run(scheduler, xs.share(), [(200, 1000), (215, 1000)])
        scheduler.start()
        #expect(observers[0].events == [.next(210, "a"), .next(220, "b"), .next(230, "c"), .completed(240)])
        #expect(observers[1].events == [.next(220, "b"), .next(230, "c"), .completed(240)])
        #expect(Marbles.render(observers[1].events, start: 200) == "--bc|")
        #expect(xs.subscriptions == [Subscription(200, 240)])
    }

    @Test("share(replay: 1): a late subscriber first receives the latest element")
    func replayOne() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(20, "b"), .next(30, "c"),
                                                  .completed(40, String.self)])
        let observers = run(scheduler, xs.share(replay: 1), [(200, 1000), (225, 1000)])
        scheduler.start()
        #expect(observers[1].events == [.next(225, "b"), .next(230, "c"), .completed(240)])
        #expect(Marbles.render(observers[1].events, start: 200) == "--bc|")
        #expect(xs.subscriptions == [Subscription(200, 240)])
    }

    @Test("the last disposal disconnects; the next subscriber reconnects with an empty buffer")
    func refCount() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(20, "b"), .next(100, "z")])
        let observers = run(scheduler, xs.share(replay: 1), [(200, 230), (205, 240), (300, 315)])
        scheduler.start()
        #expect(observers[0].events == [.next(210, "a"), .next(220, "b")])
        #expect(observers[1].events == [.next(210, "a"), .next(220, "b")])
        #expect(observers[2].events == [.next(310, "a")])   // nothing replayed from the old connection
        #expect(xs.subscriptions == [Subscription(200, 240), Subscription(300, 315)])
    }

    @Test("after the source completes, the next subscriber resubscribes (.whileConnected)")
    func reconnectAfterCompletion() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(20, String.self)])
        let observers = run(scheduler, xs.share(replay: 1), [(200, 1000), (300, 1000)])
        scheduler.start()
        #expect(observers[0].events == [.next(210, "a"), .completed(220)])
        #expect(observers[1].events == [.next(310, "a"), .completed(320)])
        #expect(xs.subscriptions == [Subscription(200, 220), Subscription(300, 320)])
    }

    @Test("an error reaches every subscriber")
    func error() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let observers = run(scheduler, xs.share(), [(200, 1000), (205, 1000)])
        scheduler.start()
        #expect(observers[0].events == [.next(210, "a"), .error(220, TestError(1))])
        #expect(observers[1].events == [.next(210, "a"), .error(220, TestError(1))])
        #expect(xs.subscriptions == [Subscription(200, 220)])
    }

    @Test("a synchronous source reaches the first subscriber")
    func synchronousSource() {
        var received: [Int] = []
        _ = Observable.of(1, 2, 3).share().subscribe(onNext: { received.append($0) })
        #expect(received == [1, 2, 3])
    }

    @Test("subscribers joining and leaving on several threads while the source emits")
    func threads() {
        let subject = PublishSubject<Int>()
        let shared = subject.share(replay: 1)
        let probe = DeliveryProbe<Int>()
        let keeper = shared.subscribe(onNext: { probe.receive($0) })
        runConcurrently(threads: 4) { t in
            for i in 0..<1_000 {
                if t == 0 {
                    subject.onNext(i)
                } else {
                    shared.subscribe(onNext: { _ in }).dispose()
                }
            }
        }
        #expect(probe.overlaps == 0)
        #expect(probe.values == Array(0..<1_000))
        keeper.dispose()
        #expect(!subject.hasObservers)
    }
}
