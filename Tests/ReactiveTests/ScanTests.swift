import Reactive
import ReactiveTesting
import Testing

/// scan(_:accumulator:) and scan(into:_:).
@Suite("scan", .ownLiveResources)
struct ScanTests {
    @Test("emits each running total; the seed is not emitted")
    func runningTotal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(150, 100), .next(210, 1), .next(220, 2), .next(240, 3), .completed(250),
        ])
        let observer = scheduler.start { source.asObservable().scan(0) { $0 + $1 } }
        #expect(observer.events == [.next(210, 1), .next(220, 3), .next(240, 6), .completed(250)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "-13-6|")
    }

    @Test("scan(into:) mutates in place and emits a copy")
    func into() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, "a"), .next(220, "b"), .completed(230)])
        let observer = scheduler.start {
            source.asObservable().scan(into: [String]()) { $0.append($1) }
        }
        #expect(observer.events == [.next(210, ["a"]), .next(220, ["a", "b"]), .completed(230)])
        #expect(Marbles.render(observer.events, start: 200) { "\($0.count)" } == "-12|")
    }

    @Test("each subscription starts from the seed")
    func perSubscription() {
        let sums = Observable.of(1, 2, 3).scan(10) { $0 + $1 }
        var a: [Int] = []
        var b: [Int] = []
        _ = sums.subscribe(onNext: { a.append($0) })
        _ = sums.subscribe(onNext: { b.append($0) })
        #expect(a == [11, 13, 16])
        #expect(b == [11, 13, 16])
    }

    @Test("an error is passed through")
    func error() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(1))])
        let observer = scheduler.start { source.asObservable().scan(0, accumulator: +) }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(1))])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(Marbles.render(observer.events, start: 200) == "-1#")
    }

    @Test("disposal stops delivery")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(260, 2)])
        let observer = scheduler.start(disposed: 250) { source.asObservable().scan(0, accumulator: +) }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }

    @Test("re-entrant emission from inside onNext accumulates after the current element")
    func reentrant() {
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        let subscription = subject.scan(0, accumulator: +).subscribe(onNext: { total in
            received.append(total)
            if total == 1 { subject.onNext(10) }
        })
        subject.onNext(1)
        subject.onNext(100)
        #expect(received == [1, 11, 111])
        subscription.dispose()
    }
}
