import Reactive
import ReactiveTesting
import Testing

/// merge (instance, maxConcurrent, static) and flatMap in virtual time; one tick = 1 ms.
@Suite("merge / flatMap", .ownLiveResources)
struct MergeTests {
    @Test("static merge: elements as they arrive; completes when all sources completed")
    func staticMerge() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, "a"), .next(240, "c"), .completed(270)])
        let ys = scheduler.createHotObservable([.next(220, "b"), .next(250, "d"), .completed(290)])
        let observer = scheduler.start { Observable.merge(xs.asObservable(), ys.asObservable()) }
        #expect(observer.events == [.next(210, "a"), .next(220, "b"), .next(240, "c"), .next(250, "d"),
                                    .completed(290)])
        #expect(Marbles.render(observer.events, start: 200) == "-ab-cd---|")
        #expect(xs.subscriptions == [Subscription(200, 270)])
        #expect(ys.subscriptions == [Subscription(200, 290)])
    }

    @Test("static merge of an empty array completes at once")
    func emptyMerge() {
        let scheduler = TestScheduler()
        let observer = scheduler.start { Observable<Int>.merge([]) }
        #expect(observer.events == [.completed(200)])
    }

    @Test("inner error while another inner is active: error at once, the other is unsubscribed")
    func innerError() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, "a"), .error(230, TestError(1), String.self)])
        let ys = scheduler.createHotObservable([.next(220, "b"), .next(240, "c"), .completed(250)])
        let observer = scheduler.start { Observable.merge([xs.asObservable(), ys.asObservable()]) }
        #expect(observer.events == [.next(210, "a"), .next(220, "b"), .error(230, TestError(1))])
        #expect(Marbles.render(observer.events, start: 200) == "-ab#")
        #expect(xs.subscriptions == [Subscription(200, 230)])
        #expect(ys.subscriptions == [Subscription(200, 230)])
    }

    @Test("outer completes before its inners: completion waits for the last inner")
    func outerCompletesFirst() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(50, String.self)])
        let ys = scheduler.createColdObservable([.next(20, "b"), .next(40, "c"), .completed(60, String.self)])
        let outer = scheduler.createHotObservable([
            .next(210, xs.asObservable()), .next(220, ys.asObservable()), .completed(230),
        ])
        let observer = scheduler.start { outer.merge() }
        #expect(observer.events == [.next(220, "a"), .next(240, "b"), .next(260, "c"), .completed(280)])
        #expect(Marbles.render(observer.events, start: 200) == "--a-b-c-|")
        #expect(outer.subscriptions == [Subscription(200, 230)])
        #expect(xs.subscriptions == [Subscription(210, 260)])
        #expect(ys.subscriptions == [Subscription(220, 280)])
    }

    @Test("outer error ends everything, inners included")
    func outerError() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(100, String.self)])
        let outer = scheduler.createHotObservable([
            .next(210, xs.asObservable()), .error(240, TestError(2), Observable<String>.self),
        ])
        let observer = scheduler.start { outer.merge() }
        #expect(observer.events == [.next(220, "a"), .error(240, TestError(2))])
        #expect(xs.subscriptions == [Subscription(210, 240)])
    }

    @Test("maxConcurrent: 1 subscribes the next inner when the running one completes")
    func maxConcurrentOne() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .completed(50, String.self)])
        let ys = scheduler.createColdObservable([.next(20, "b"), .next(40, "c"), .completed(60, String.self)])
        let outer = scheduler.createHotObservable([
            .next(210, xs.asObservable()), .next(220, ys.asObservable()), .completed(230),
        ])
        let observer = scheduler.start { outer.merge(maxConcurrent: 1) }
        #expect(observer.events == [.next(220, "a"), .next(280, "b"), .next(300, "c"), .completed(320)])
        #expect(Marbles.render(observer.events, start: 200) == "--a-----b-c-|")
        #expect(xs.subscriptions == [Subscription(210, 260)])
        #expect(ys.subscriptions == [Subscription(260, 320)])
    }

    @Test("disposal while inners are active unsubscribes outer and inners")
    func disposeWhileActive() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .next(100, "z"), .completed(200, String.self)])
        let outer = scheduler.createHotObservable([.next(210, xs.asObservable())])
        let observer = scheduler.start(disposed: 250) { outer.merge() }
        #expect(observer.events == [.next(220, "a")])
        #expect(outer.subscriptions == [Subscription(200, 250)])
        #expect(xs.subscriptions == [Subscription(210, 250)])
    }

    @Test("flatMap: merge of the projections; each inner's subscription interval")
    func flatMap() {
        let scheduler = TestScheduler()
        let inners = [
            1: scheduler.createColdObservable([.next(10, "a"), .next(20, "b"), .completed(30, String.self)]),
            2: scheduler.createColdObservable([.next(5, "c"), .completed(40, String.self)]),
        ]
        let xs = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .completed(230)])
        let observer = scheduler.start { xs.flatMap { inners[$0]! } }
        #expect(observer.events == [.next(220, "a"), .next(225, "c"), .next(230, "b"), .completed(260)])
        #expect(Marbles.render(observer.events, start: 200) == "--(ac)b--|")
        #expect(inners[1]!.subscriptions == [Subscription(210, 240)])
        #expect(inners[2]!.subscriptions == [Subscription(220, 260)])
        #expect(xs.subscriptions == [Subscription(200, 230)])
    }

    @Test("flatMap: a throwing selector errors and disposes everything")
    func flatMapThrows() {
        let scheduler = TestScheduler()
        let inner = scheduler.createColdObservable([.next(10, "a"), .completed(100, String.self)])
        let xs = scheduler.createHotObservable([.next(210, 1), .next(230, 2)])
        let observer = scheduler.start {
            xs.flatMap { n -> TestableObservable<String> in
                if n == 2 { throw TestError(7) }
                return inner
            }
        }
        #expect(observer.events == [.next(220, "a"), .error(230, TestError(7))])
        #expect(inner.subscriptions == [Subscription(210, 230)])
        #expect(xs.subscriptions == [Subscription(200, 230)])
    }

    @Test("synchronous inners are delivered in order and complete the merge")
    func synchronousInners() {
        var received: [Int] = []
        var completed = false
        _ = Observable.from([1, 2, 3]).flatMap { Observable.of($0, $0 * 10) }
            .subscribe(onNext: { received.append($0) }, onCompleted: { completed = true })
        #expect(received == [1, 10, 2, 20, 3, 30])
        #expect(completed)
    }

    @Test("re-entrant emission from inside onNext into a merged subject: queued, not nested")
    func reentrant() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        var log: [String] = []
        let subscription = Observable.merge(a.asObservable(), b.asObservable()).subscribe(onNext: { value in
            log.append("begin \(value)")
            if value == 1 { b.onNext(100); a.onNext(2) }
            log.append("end \(value)")
        })
        a.onNext(1)
        #expect(log == ["begin 1", "end 1", "begin 100", "end 100", "begin 2", "end 2"])
        subscription.dispose()
    }

    @Test("dispose from inside onNext stops delivery at once")
    func disposeInsideOnNext() {
        let a = PublishSubject<Int>()
        let b = PublishSubject<Int>()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = Observable.merge(a.asObservable(), b.asObservable()).subscribe(onNext: { value in
            received.append(value)
            if value == 1 { b.onNext(2); subscription?.dispose() }
        })
        a.onNext(1)
        b.onNext(3)
        #expect(received == [1])
        #expect(!a.hasObservers && !b.hasObservers)
        subscription = nil   // the closure captures this variable: break the test's own cycle
    }

    @Test("several threads feeding one merge: serial delivery, per-thread order, nothing lost")
    func threads() {
        let threads = 4, perThread = 2_000
        let subjects = (0..<threads).map { _ in PublishSubject<Int>() }
        let probe = DeliveryProbe<Int>()
        let completed = AtomicFlag()
        let subscription = Observable.merge(subjects.map { $0.asObservable() })
            .subscribe(onNext: { probe.receive($0) }, onCompleted: { completed.set() })
        runConcurrently(threads: threads) { t in
            for i in 0..<perThread { subjects[t].onNext(t * 1_000_000 + i) }
            subjects[t].onCompleted()
        }
        #expect(probe.overlaps == 0)
        #expect(probe.values.count == threads * perThread)
        #expect(perProducerComplete(probe.values, producers: threads, perProducer: perThread))
        #expect(completed.isSet)
        subscription.dispose()
    }

    @Test("several threads feeding one subject through flatMap to inner subjects")
    func threadsFlatMap() {
        let threads = 4, perThread = 1_000
        let outer = PublishSubject<Int>()
        let probe = DeliveryProbe<Int>()
        let subscription = outer.flatMap { Observable.just($0) }.subscribe(onNext: { probe.receive($0) })
        runConcurrently(threads: threads) { t in
            for i in 0..<perThread { outer.onNext(t * 1_000_000 + i) }
        }
        #expect(probe.overlaps == 0)
        #expect(perProducerComplete(probe.values, producers: threads, perProducer: perThread))
        subscription.dispose()
    }
}
