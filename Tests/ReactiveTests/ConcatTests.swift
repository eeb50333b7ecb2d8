import Reactive
import ReactiveTesting
import Testing

/// concat.
@Suite("concat", .ownLiveResources)
struct ConcatTests {
    @Test("each source in turn: the next is subscribed when the one before completes")
    func inTurn() {
        let scheduler = TestScheduler()
        let a = scheduler.createColdObservable([.next(10, 1), .next(20, 2), .completed(30)])
        let b = scheduler.createColdObservable([.next(10, 3), .completed(20)])
        let observer = scheduler.start { a.asObservable().concat(b.asObservable()) }
        #expect(observer.events == [.next(210, 1), .next(220, 2), .next(240, 3), .completed(250)])
        #expect(a.subscriptions == [Subscription(200, 230)])
        #expect(b.subscriptions == [Subscription(230, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "-12-3|")
    }

    @Test("an error ends the sequence; later sources are never subscribed")
    func error() {
        let scheduler = TestScheduler()
        let a = scheduler.createColdObservable([.next(10, 1), .error(20, TestError(1))])
        let b = scheduler.createColdObservable([.next(10, 3), .completed(20)])
        let observer = scheduler.start { Observable.concat([a.asObservable(), b.asObservable()]) }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(1))])
        #expect(a.subscriptions == [Subscription(200, 220)])
        #expect(b.subscriptions.isEmpty)
    }

    @Test("disposal disposes the source subscribed now; later ones are never subscribed")
    func disposal() {
        let scheduler = TestScheduler()
        let a = scheduler.createColdObservable([.completed(10)] as [Recorded<Event<Int>>])
        let b = scheduler.createColdObservable([.next(10, 3), .next(100, 4), .completed(110)])
        let c = scheduler.createColdObservable([.next(10, 5), .completed(20)])
        let observer = scheduler.start(disposed: 250) {
            Observable.concat([a.asObservable(), b.asObservable(), c.asObservable()])
        }
        #expect(observer.events == [.next(220, 3)])
        #expect(a.subscriptions == [Subscription(200, 210)])
        #expect(b.subscriptions == [Subscription(210, 250)])
        #expect(c.subscriptions.isEmpty)
    }

    @Test("an empty list completes at once; empty sources are skipped")
    func empty() {
        var events: [String] = []
        _ = Observable<Int>.concat([]).subscribe(onNext: { events.append("\($0)") }, onCompleted: { events.append("|") })
        #expect(events == ["|"])
        events = []
        _ = Observable.concat([.empty(), .just(1), .empty(), .of(2, 3)])
            .subscribe(onNext: { events.append("\($0)") }, onCompleted: { events.append("|") })
        #expect(events == ["1", "2", "3", "|"])
    }

    @Test("100,000 sources that complete during subscribe are chained without growing the stack")
    func synchronousChain() {
        var sum = 0
        var completed = false
        let sources = (0..<100_000).map { Observable.just($0) }
        _ = Observable.concat(sources).subscribe(onNext: { sum += $0 }, onCompleted: { completed = true })
        #expect(sum == (0..<100_000).reduce(0, +))
        #expect(completed)
    }
}
