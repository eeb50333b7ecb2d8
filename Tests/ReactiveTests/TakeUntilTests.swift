import Dispatch
import Reactive
import ReactiveTesting
import Testing

/// takeUntil / take(until:) with RxSwift 6 semantics.
@Suite("takeUntil", .ownLiveResources)
struct TakeUntilTests {
    @Test("other's first element completes the result and disposes both")
    func otherNext() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .next(240, 3), .completed(300)])
        let other = scheduler.createHotObservable([.next(230, "x"), .next(250, "y")])
        let observer = scheduler.start { source.takeUntil(other) }
        #expect(observer.events == [.next(210, 1), .next(220, 2), .completed(230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(other.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "-12|")
    }

    @Test("other's completion does nothing but release other; the source continues")
    func otherCompletes() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(240, 2), .completed(250)])
        let other = scheduler.createHotObservable([.completed(220)] as [Recorded<Event<Int>>])
        let observer = scheduler.start { source.take(until: other) }
        #expect(observer.events == [.next(210, 1), .next(240, 2), .completed(250)])
        #expect(other.subscriptions == [Subscription(200, 220)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "-1--2|")
    }

    @Test("other's error ends the result with that error")
    func otherError() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(240, 2)])
        let other = scheduler.createHotObservable([.error(220, TestError(5))] as [Recorded<Event<Int>>])
        let observer = scheduler.start { source.takeUntil(other) }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(5))])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(other.subscriptions == [Subscription(200, 220)])
        #expect(Marbles.render(observer.events, start: 200) == "-1#")
    }

    @Test("the source's completion and error are passed on and other is released")
    func sourceStops() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(230, TestError(1))])
        let other = scheduler.createHotObservable([.next(300, 0)])
        let observer = scheduler.start { source.takeUntil(other) }
        #expect(observer.events == [.next(210, 1), .error(230, TestError(1))])
        #expect(other.subscriptions == [Subscription(200, 230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
    }

    @Test("other emitting during subscribe: the result completes at once and the source is never subscribed")
    func otherSynchronous() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1)])
        let observer = scheduler.start { source.takeUntil(Observable.just(0)) }
        #expect(observer.events == [.completed(200)])
        #expect(source.subscriptions.isEmpty)
    }

    @Test("disposal disposes both")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(260, 2)])
        let other = scheduler.createHotObservable([.next(270, 0)])
        let observer = scheduler.start(disposed: 250) { source.takeUntil(other) }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(other.subscriptions == [Subscription(200, 250)])
    }

    @Test("other ticking from inside the source's onNext completes right after that element")
    func reentrantOther() {
        let source = PublishSubject<Int>()
        let stop = PublishSubject<Void>()
        var events: [Event<Int>] = []
        let subscription = source.takeUntil(stop).subscribe(AnyObserver { event in
            events.append(event)
            if case .next(1) = event { stop.onNext(()); source.onNext(2) }
        })
        source.onNext(1)
        source.onNext(3)
        #expect(events == [.next(1), .completed])
        subscription.dispose()
    }

    @Test("several threads: source elements and a stop racing; serial delivery, nothing after completion")
    func threads() {
        for _ in 0..<20 {
            let source = PublishSubject<Int>()
            let stop = PublishSubject<Int>()
            let events = SharedList<Event<Int>>()
            let inside = SharedCounter()
            let overlaps = SharedCounter()
            let subscription = source.takeUntil(stop).subscribe(AnyObserver { event in
                if inside.add(1) != 1 { overlaps.add(1) }
                events.append(event)
                inside.add(-1)
            })
            DispatchQueue.concurrentPerform(iterations: 4) { thread in
                if thread == 3 {
                    stop.onNext(0)
                } else {
                    for i in 0..<200 { source.onNext(thread * 1000 + i) }
                }
            }
            let all = events.values
            #expect(overlaps.value == 0)
            #expect(all.last == .completed)
            #expect(all.filter { $0.isStopEvent }.count == 1)
            subscription.dispose()
        }
    }
}
