import Reactive
import ReactiveTesting
import Testing

/// flatMapLatest in virtual time; one tick = 1 ms.
@Suite("flatMapLatest", .ownLiveResources)
struct FlatMapLatestTests {
    @Test("switches to the newest inner; the previous inner is unsubscribed at the switch tick")
    func switches() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(20, "b"), .next(40, "c"),
                                                  .completed(50, String.self)])
        let ys = scheduler.createColdObservable([.next(10, "d"), .completed(30, String.self)])
        let inners = [1: xs, 2: ys]
        let outer = scheduler.createHotObservable([.next(210, 1), .next(240, 2), .completed(260)])
        let observer = scheduler.start { outer.flatMapLatest { inners[$0]! } }
        #expect(observer.events == [.next(220, "a"), .next(230, "b"), .next(250, "d"), .completed(270)])
        #expect(Marbles.render(observer.events, start: 200) == "--ab-d-|")
        #expect(xs.subscriptions == [Subscription(210, 240)])   // cut at the switch, before "c"
        #expect(ys.subscriptions == [Subscription(240, 270)])
        #expect(outer.subscriptions == [Subscription(200, 260)])
    }

    @Test("inner completes first, then the outer: completion at the outer's completion")
    func innerThenOuter() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(20, String.self)])
        let outer = scheduler.createHotObservable([.next(210, 1), .completed(250)])
        let observer = scheduler.start { outer.flatMapLatest { _ in xs } }
        #expect(observer.events == [.next(220, "a"), .completed(250)])
        #expect(xs.subscriptions == [Subscription(210, 230)])
    }

    @Test("outer completes without elements: completes at once")
    func emptyOuter() {
        let scheduler = TestScheduler()
        let outer = scheduler.createHotObservable([.completed(230, Int.self)])
        let observer = scheduler.start { outer.flatMapLatest { Observable.just($0) } }
        #expect(observer.events == [.completed(230, Int.self)])
    }

    @Test("inner error ends everything")
    func innerError() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(3), String.self)])
        let outer = scheduler.createHotObservable([.next(210, 1), .next(300, 2)])
        let observer = scheduler.start { outer.flatMapLatest { _ in xs } }
        #expect(observer.events == [.next(220, "a"), .error(230, TestError(3))])
        #expect(Marbles.render(observer.events, start: 200) == "--a#")
        #expect(xs.subscriptions == [Subscription(210, 230)])
        #expect(outer.subscriptions == [Subscription(200, 230)])
    }

    @Test("outer error disposes the current inner")
    func outerError() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(100, String.self)])
        let outer = scheduler.createHotObservable([.next(210, 1), .error(240, TestError(4), Int.self)])
        let observer = scheduler.start { outer.flatMapLatest { _ in xs } }
        #expect(observer.events == [.next(220, "a"), .error(240, TestError(4))])
        #expect(xs.subscriptions == [Subscription(210, 240)])
    }

    @Test("disposal while an inner is active")
    func disposal() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(60, "b"), .completed(100, String.self)])
        let outer = scheduler.createHotObservable([.next(210, 1)])
        let observer = scheduler.start(disposed: 250) { outer.flatMapLatest { _ in xs } }
        #expect(observer.events == [.next(220, "a")])
        #expect(xs.subscriptions == [Subscription(210, 250)])
        #expect(outer.subscriptions == [Subscription(200, 250)])
    }

    @Test("a switch from inside onNext: the old inner's queued element is dropped")
    func reentrantSwitch() {
        let outer = PublishSubject<Int>()
        let inners = [PublishSubject<String>(), PublishSubject<String>()]
        var received: [String] = []
        let subscription = outer.flatMapLatest { inners[$0] }.subscribe(onNext: { value in
            received.append(value)
            if value == "a" {
                inners[0].onNext("stale")   // queued behind the switch below
                outer.onNext(1)
            }
        })
        outer.onNext(0)
        inners[0].onNext("a")
        inners[1].onNext("b")
        inners[0].onNext("late")
        #expect(received == ["a", "b"])
        #expect(!inners[0].hasObservers)
        subscription.dispose()
    }

    @Test("several threads switching and feeding: serial delivery")
    func threads() {
        let outer = PublishSubject<Int>()
        let probe = DeliveryProbe<Int>()
        let subscription = outer.flatMapLatest { Observable.of($0, $0) }.subscribe(onNext: { probe.receive($0) })
        runConcurrently(threads: 4) { t in
            for i in 0..<1_000 { outer.onNext(t * 1_000_000 + i) }
        }
        #expect(probe.overlaps == 0)
        // An inner's queued elements may be dropped by a switch that another thread queued
        // before them, so only order is certain: per thread, never backwards.
        #expect(probe.values.count <= 8_000 && probe.values.count >= 2)
        #expect(perProducerOrdered(probe.values, producers: 4))
        subscription.dispose()
    }
}
