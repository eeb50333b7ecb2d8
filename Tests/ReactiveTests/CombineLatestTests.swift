import Reactive
import ReactiveTesting
import Testing

/// combineLatest (2, 3 and array forms) and withLatestFrom in virtual time; 1 tick = 1 ms.
@Suite("combineLatest / withLatestFrom", .ownLiveResources)
struct CombineLatestTests {
    @Test("two sources: emits once both have emitted; completes when both completed")
    func twoSources() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(205, "0"), .next(210, "1"), .next(230, "2"),
                                                 .completed(260)])
        let ys = scheduler.createHotObservable([.next(220, "a"), .next(240, "b"), .completed(270)])
        let observer = scheduler.start { Observable.combineLatest(xs, ys) { $0 + $1 } }
        #expect(observer.events == [.next(220, "1a"), .next(230, "2a"), .next(240, "2b"), .completed(270)])
        #expect(Marbles.render(observer.events, start: 200) { $0 == "1a" ? "x" : $0 == "2a" ? "y" : "z" }
                == "--xyz--|")
        #expect(xs.subscriptions == [Subscription(200, 260)])
        #expect(ys.subscriptions == [Subscription(200, 270)])
    }

    @Test("a source that completes without ever emitting completes the result at once")
    func completesEmpty() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.completed(230, Int.self)])
        let ys = scheduler.createHotObservable([.next(220, 1), .next(240, 2), .completed(300)])
        let observer = scheduler.start { Observable.combineLatest(xs, ys) { $0 + $1 } }
        #expect(observer.events == [.completed(230, Int.self)])
        #expect(Marbles.render(observer.events, start: 200) == "---|")
        #expect(xs.subscriptions == [Subscription(200, 230)])
        #expect(ys.subscriptions == [Subscription(200, 230)])
    }

    @Test("a source that completes after emitting keeps its last value")
    func completedKeepsValue() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .completed(215)])
        let ys = scheduler.createHotObservable([.next(220, 10), .next(240, 20), .completed(250)])
        let observer = scheduler.start { Observable.combineLatest(xs, ys) { $0 + $1 } }
        #expect(observer.events == [.next(220, 11), .next(240, 21), .completed(250)])
    }

    @Test("an error ends it and unsubscribes the other source")
    func error() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .next(260, 2)])
        let ys = scheduler.createHotObservable([.next(220, 10), .error(230, TestError(5), Int.self)])
        let observer = scheduler.start { Observable.combineLatest(xs, ys) { $0 + $1 } }
        #expect(observer.events == [.next(220, 11), .error(230, TestError(5))])
        #expect(xs.subscriptions == [Subscription(200, 230)])
        #expect(ys.subscriptions == [Subscription(200, 230)])
    }

    @Test("a throwing selector errors")
    func selectorThrows() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .next(230, 2)])
        let ys = scheduler.createHotObservable([.next(220, 10)])
        let observer = scheduler.start {
            Observable.combineLatest(xs, ys) { a, b -> Int in
                if a == 2 { throw TestError(6) }
                return a + b
            }
        }
        #expect(observer.events == [.next(220, 11), .error(230, TestError(6))])
        #expect(xs.subscriptions == [Subscription(200, 230)])
    }

    @Test("three sources")
    func threeSources() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .completed(300)])
        let ys = scheduler.createHotObservable([.next(220, 10), .next(240, 20), .completed(310)])
        let zs = scheduler.createHotObservable([.next(230, 100), .completed(320)])
        let observer = scheduler.start { Observable.combineLatest(xs, ys, zs) { $0 + $1 + $2 } }
        #expect(observer.events == [.next(230, 111), .next(240, 121), .completed(320)])
        #expect(zs.subscriptions == [Subscription(200, 320)])
    }

    @Test("array form: arrays in source order; an empty array completes at once")
    func arrayForm() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .next(230, 2), .completed(250)])
        let ys = scheduler.createHotObservable([.next(220, 10), .completed(260)])
        let observer = scheduler.start {
            Observable.combineLatest([xs.asObservable(), ys.asObservable()])
        }
        #expect(observer.events == [.next(220, [1, 10]), .next(230, [2, 10]), .completed(260)])
        #expect(xs.subscriptions == [Subscription(200, 250)])
        #expect(ys.subscriptions == [Subscription(200, 260)])
        let empty = scheduler.start(created: 1100, subscribed: 1200, disposed: 1300) {
            Observable<[Int]>.combineLatest([Observable<Int>]())
        }
        #expect(empty.events == [.completed(1200, [Int].self)])
    }

    @Test("several threads feeding one combineLatest: serial, and no element after readiness lost")
    func threads() {
        let threads = 4, perThread = 2_000
        let subjects = (0..<threads).map { _ in PublishSubject<Int>() }
        let probe = DeliveryProbe<[Int]>()
        let subscription = Observable.combineLatest(subjects.map { $0.asObservable() })
            .subscribe(onNext: { probe.receive($0) })
        // Every source has a value before the threads start, so every later element counts.
        for s in subjects { s.onNext(-1) }
        runConcurrently(threads: threads) { t in
            for i in 0..<perThread { subjects[t].onNext(i) }
        }
        #expect(probe.overlaps == 0)
        let values = probe.values
        #expect(values.count == 1 + threads * perThread)
        // Each emission after the first changes exactly one source, by exactly one step.
        var consistent = true
        for k in 1..<values.count {
            let changed = (0..<threads).filter { values[k][$0] != values[k - 1][$0] }
            if changed.count != 1 || values[k][changed[0]] != values[k - 1][changed[0]] + 1 { consistent = false }
        }
        #expect(consistent)
        #expect(values.last == Array(repeating: perThread - 1, count: threads))
        subscription.dispose()
    }

    // MARK: withLatestFrom

    @Test("withLatestFrom: the source drives; elements before the second's first are dropped")
    func withLatestFrom() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, 1), .next(230, 2), .next(250, 3), .completed(290)])
        let ys = scheduler.createHotObservable([.next(220, "a"), .next(240, "b"), .completed(245)])
        let observer = scheduler.start { xs.withLatestFrom(ys) }
        #expect(observer.events == [.next(230, "a"), .next(250, "b"), .completed(290)])
        #expect(Marbles.render(observer.events, start: 200) == "---a-b---|")
        #expect(xs.subscriptions == [Subscription(200, 290)])
        #expect(ys.subscriptions == [Subscription(200, 245)])   // its completion does not complete
    }

    @Test("withLatestFrom with a result selector; the second's error ends it")
    func withLatestFromSelectorAndError() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(230, 2), .next(250, 3)])
        let ys = scheduler.createHotObservable([.next(220, 10), .error(240, TestError(8), Int.self)])
        let observer = scheduler.start { xs.withLatestFrom(ys) { $0 + $1 } }
        #expect(observer.events == [.next(230, 12), .error(240, TestError(8))])
        #expect(xs.subscriptions == [Subscription(200, 240)])
        #expect(ys.subscriptions == [Subscription(200, 240)])
    }

    @Test("withLatestFrom: a second that has a value at subscribe time is used at once")
    func withLatestFromBehavior() {
        let second = BehaviorSubject(value: "x")
        let source = PublishSubject<Int>()
        var received: [String] = []
        let subscription = source.withLatestFrom(second) { "\($0)\($1)" }.subscribe(onNext: { received.append($0) })
        source.onNext(1)
        second.onNext("y")
        source.onNext(2)
        #expect(received == ["1x", "2y"])
        subscription.dispose()
    }

    @Test("withLatestFrom: several threads feeding both sides: serial delivery")
    func withLatestFromThreads() {
        let source = PublishSubject<Int>()
        let second = PublishSubject<Int>()
        let probe = DeliveryProbe<Int>()
        let subscription = source.withLatestFrom(second) { a, _ in a }.subscribe(onNext: { probe.receive($0) })
        second.onNext(0)
        runConcurrently(threads: 4) { t in
            for i in 0..<1_000 {
                if t < 2 { source.onNext(t * 1_000_000 + i) } else { second.onNext(i) }
            }
        }
        #expect(probe.overlaps == 0)
        #expect(perProducerComplete(probe.values, producers: 2, perProducer: 1_000))
        subscription.dispose()
    }
}
