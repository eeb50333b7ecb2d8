import Dispatch
import Reactive
import ReactiveTesting
import Testing

/// sample(_:defaultValue:) with RxSwift 6 semantics.
@Suite("sample", .ownLiveResources)
struct SampleTests {
    @Test("emits the latest element at each tick, only if a new one arrived since the last sample")
    func latestOnce() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(250, 3), .next(280, 4), .completed(400),
        ])
        let sampler = scheduler.createHotObservable([
            .next(230, ()), .next(240, ()), .next(260, ()), .next(270, ()), .next(300, ()),
        ])
        let observer = scheduler.start { source.sample(sampler) }
        #expect(observer.events == [.next(230, 2), .next(260, 3), .next(300, 4)])
        #expect(Marbles.render(observer.events, start: 200) == "---2--3---4")
        #expect(source.subscriptions == [Subscription(200, 400)])
        #expect(sampler.subscriptions == [Subscription(200, 1000)])
    }

    @Test("defaultValue is emitted at a tick with nothing new")
    func defaultValue() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(215, 1)])
        let sampler = scheduler.createHotObservable([.next(210, ()), .next(220, ()), .next(230, ())])
        let observer = scheduler.start { source.sample(sampler, defaultValue: 0) }
        #expect(observer.events == [.next(210, 0), .next(220, 1), .next(230, 0)])
        #expect(Marbles.render(observer.events, start: 200) == "-010")
    }

    @Test("source completion: the result completes at the next tick, after that tick's sample")
    func sourceCompletes() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .completed(220)])
        let sampler = scheduler.createHotObservable([.next(240, ()), .next(250, ())])
        let observer = scheduler.start { source.sample(sampler) }
        #expect(observer.events == [.next(240, 1), .completed(240)])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(sampler.subscriptions == [Subscription(200, 240)])
        #expect(Marbles.render(observer.events, start: 200) == "----(1|)")
    }

    @Test("sampler completion takes a last sample and completes")
    func samplerCompletes() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(300, 2)])
        let sampler = scheduler.createHotObservable([.completed(220)] as [Recorded<Event<Int>>])
        let observer = scheduler.start { source.sample(sampler) }
        #expect(observer.events == [.next(220, 1), .completed(220)])
        #expect(source.subscriptions == [Subscription(200, 220)])
        #expect(sampler.subscriptions == [Subscription(200, 220)])
    }

    @Test("an error from either side is passed on at once, dropping an unsampled element")
    func errors() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(1))])
        let sampler = scheduler.createHotObservable([.next(230, ())])
        let o1 = scheduler.start { source.sample(sampler) }
        #expect(o1.events == [.error(220, TestError(1))])
        #expect(sampler.subscriptions == [Subscription(200, 220)])

        let s2 = TestScheduler()
        let source2 = s2.createHotObservable([.next(210, 1)])
        let sampler2 = s2.createHotObservable([.error(220, TestError(2))] as [Recorded<Event<Int>>])
        let o2 = s2.start { source2.sample(sampler2) }
        #expect(o2.events == [.error(220, TestError(2))])
        #expect(source2.subscriptions == [Subscription(200, 220)])
    }

    @Test("a source that fails during its subscribe: the sampler is never subscribed")
    func sourceFailsSynchronously() {
        let scheduler = TestScheduler()
        let sampler = scheduler.createHotObservable([.next(210, ())])
        let observer = scheduler.start { Observable<Int>.error(TestError(3)).sample(sampler) }
        #expect(observer.events == [.error(200, TestError(3))])
        #expect(sampler.subscriptions.isEmpty)
    }

    @Test("disposal disposes both")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1)])
        let sampler = scheduler.createHotObservable([.next(260, ())])
        let observer = scheduler.start(disposed: 250) { source.sample(sampler) }
        #expect(observer.events.isEmpty)
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(sampler.subscriptions == [Subscription(200, 250)])
    }

    @Test("re-entrant tick from inside onNext samples only what is new; disposal inside onNext stops")
    func reentrant() {
        let source = PublishSubject<Int>()
        let tick = PublishSubject<Void>()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = source.sample(tick).subscribe(onNext: { value in
            received.append(value)
            if value == 1 { tick.onNext(()) }         // nothing new: no emission
            if value == 2 { subscription?.dispose() }
        })
        source.onNext(1)
        tick.onNext(())
        source.onNext(2)
        tick.onNext(())
        source.onNext(3)
        tick.onNext(())
        #expect(received == [1, 2])
        subscription = nil
    }

    @Test("several threads feeding source and sampler: serial delivery, each element at most once")
    func threads() {
        let source = PublishSubject<Int>()
        let tick = PublishSubject<Void>()
        let received = SharedList<Int>()
        let inside = SharedCounter()
        let overlaps = SharedCounter()
        let subscription = source.sample(tick).subscribe(onNext: { value in
            if inside.add(1) != 1 { overlaps.add(1) }
            received.append(value)
            inside.add(-1)
        })
        DispatchQueue.concurrentPerform(iterations: 4) { thread in
            for i in 0..<500 {
                if thread == 0 { tick.onNext(()) } else { source.onNext(thread * 10_000 + i) }
            }
        }
        let values = received.values
        #expect(overlaps.value == 0)
        #expect(Set(values).count == values.count)
        // Per producer, sampled values appear in the order they were produced.
        for p in 1...3 {
            let mine = values.filter { $0 / 10_000 == p }
            #expect(mine == mine.sorted())
        }
        subscription.dispose()
    }
}
