import Reactive
import ReactiveTesting
import Testing

/// map, filter, compactMap: stateless pass-through operators without a sink.
@Suite("map / filter / compactMap", .ownLiveResources)
struct MapFilterTests {
    @Test("map transforms each element and passes completion")
    func mapElements() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(150, 0), .next(210, 1), .next(220, 2), .next(240, 3), .completed(250),
        ])
        // `source.map` directly, without `asObservable()` (whose `create` wrapper would
        // dispose after the stop event): map has no sink and does not dispose the source
        // by itself; the raw test observer never disposes, so the subscription lasts to 1000.
        let observer = scheduler.start { source.map { $0 * 10 } }
        #expect(observer.events == [.next(210, 10), .next(220, 20), .next(240, 30), .completed(250)])
        #expect(source.subscriptions == [Subscription(200, 1000)])
        #expect(Marbles.render(observer.events, start: 200) { "\($0 / 10)" } == "-12-3|")
    }

    @Test("map in a subscribe(onNext:) chain: the subscriber disposes the source at completion")
    func mapChainDisposedAtCompletion() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .completed(250)])
        let observer = MarbleRun.startTerminal(scheduler) { source.asObservable().map { $0 + 1 } }
        #expect(observer.events == [.next(210, 2), .completed(250)])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }

    @Test("map passes an error and the source is released by the subscriber")
    func mapError() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(230, TestError(3)), .next(240, 9)])
        let observer = MarbleRun.startTerminal(scheduler) { source.asObservable().map { $0 * 2 } }
        #expect(observer.events == [.next(210, 2), .error(230, TestError(3))])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "-2-#")
    }

    @Test("map: disposal stops delivery")
    func mapDisposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(260, 2), .completed(300)])
        let observer = scheduler.start(disposed: 250) { source.asObservable().map { $0 } }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }

    @Test("filter passes only matching elements")
    func filterElements() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(230, 3), .next(240, 4), .next(250, 5), .completed(260),
        ])
        let observer = MarbleRun.startTerminal(scheduler) { source.asObservable().filter { $0 % 2 == 1 } }
        #expect(observer.events == [.next(210, 1), .next(230, 3), .next(250, 5), .completed(260)])
        #expect(source.subscriptions == [Subscription(200, 260)])
        #expect(Marbles.render(observer.events, start: 200) == "-1-3-5|")
    }

    @Test("filter passes an error even when nothing matched")
    func filterError() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 2), .error(220, TestError(1))])
        let observer = scheduler.start { source.asObservable().filter { $0 > 100 } }
        #expect(observer.events == [.error(220, TestError(1))])
    }

    @Test("compactMap passes the non-nil results")
    func compactMapElements() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, "1"), .next(220, "x"), .next(230, "3"), .completed(240),
        ])
        let observer = MarbleRun.startTerminal(scheduler) { source.asObservable().compactMap { Int($0) } }
        #expect(observer.events == [.next(210, 1), .next(230, 3), .completed(240)])
        #expect(source.subscriptions == [Subscription(200, 240)])
        #expect(Marbles.render(observer.events, start: 200) == "-1-3|")
    }

    @Test("compactMap passes an error")
    func compactMapError() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, "a"), .error(220, TestError(2))])
        let observer = scheduler.start { source.asObservable().compactMap { Int($0) } }
        #expect(observer.events == [.error(220, TestError(2))])
    }

    @Test("disposal from inside onNext stops the chain at once")
    func disposeInsideOnNext() {
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = subject.map { $0 * 2 }.filter { $0 > 0 }.compactMap { $0 }
            .subscribe(onNext: { value in
                received.append(value)
                subscription?.dispose()
            })
        subject.onNext(1)
        subject.onNext(2)
        #expect(received == [2])
        #expect(!subject.hasObservers)
        subscription = nil
    }

    @Test("re-entrant emission from inside onNext is delivered after the current element")
    func reentrant() {
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        let subscription = subject.map { $0 + 100 }.subscribe(onNext: { value in
            received.append(value)
            if value == 101 { subject.onNext(2) }
            received.append(-value)
        })
        subject.onNext(1)
        #expect(received == [101, -101, 102, -102])
        subscription.dispose()
    }
}
