import Reactive
import ReactiveTesting
import Testing

/// just, from, of, empty, never, error, deferred, timer, interval.
@Suite("sources", .ownLiveResources)
struct SourcesTests {
    @Test("just: one element then completion, synchronously")
    func just() {
        let scheduler = TestScheduler()
        let observer = scheduler.start { Observable.just(7) }
        #expect(observer.events == [.next(200, 7), .completed(200)])
        #expect(Marbles.render(observer.events, start: 200) == "(7|)")
    }

    @Test("from and of: the elements in order, then completion")
    func fromAndOf() {
        let scheduler = TestScheduler()
        let a = scheduler.start { Observable.from([1, 2, 3]) }
        #expect(a.events == [.next(200, 1), .next(200, 2), .next(200, 3), .completed(200)])
        #expect(Marbles.render(a.events, start: 200) == "(123|)")
        let b = TestScheduler().start { Observable.of(4, 5) }
        #expect(b.elements == [4, 5])
        #expect(b.events.last?.value == .completed)
        let c = TestScheduler().start { Observable.from(Array<Int>()) }
        #expect(c.events == [.completed(200)])
    }

    @Test("empty, never, error")
    func emptyNeverError() {
        #expect(TestScheduler().start { Observable<Int>.empty() }.events == [.completed(200)])
        #expect(TestScheduler().start { Observable<Int>.never() }.events.isEmpty)
        let e = TestScheduler().start { Observable<Int>.error(TestError(5)) }
        #expect(e.events == [.error(200, TestError(5))])
        #expect(Marbles.render(e.events, start: 200) == "#")
    }

    @Test("deferred calls the factory per subscription; a thrown error becomes the sequence's error")
    func deferred() {
        var calls = 0
        let source = Observable<Int>.deferred {
            calls += 1
            return .just(calls)
        }
        var values: [Int] = []
        _ = source.subscribe(onNext: { values.append($0) })
        _ = source.subscribe(onNext: { values.append($0) })
        #expect(values == [1, 2])
        #expect(calls == 2)

        var failure: (any Error)?
        _ = Observable<Int>.deferred { throw TestError(9) }.subscribe(onError: { failure = $0 })
        #expect(failure as? TestError == TestError(9))
    }

    @Test("timer without period: 0 after the due time, then completion")
    func timerOnce() {
        let scheduler = TestScheduler()
        let observer = scheduler.start { Observable<Int>.timer(.milliseconds(30), scheduler: scheduler) }
        #expect(observer.events == [.next(230, 0), .completed(230)])
        #expect(Marbles.render(observer.events, start: 200) == "---(0|)")
    }

    @Test("timer with period: 0 after the due time, then one element per period at a fixed rate")
    func timerPeriodic() {
        let scheduler = TestScheduler()
        let observer = scheduler.start(disposed: 265) {
            Observable<Int>.timer(.milliseconds(20), period: .milliseconds(10), scheduler: scheduler)
        }
        #expect(observer.events == [.next(220, 0), .next(230, 1), .next(240, 2), .next(250, 3), .next(260, 4)])
        #expect(Marbles.render(observer.events, start: 200) == "--01234")
    }

    @Test("interval: first element after one period; disposal stops it")
    func interval() {
        let scheduler = TestScheduler()
        let observer = scheduler.start(disposed: 245) {
            Observable<Int>.interval(.milliseconds(10), scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 0), .next(220, 1), .next(230, 2), .next(240, 3)])
    }

    @Test("timer disposed from inside onNext does not fire again")
    func timerDisposeInsideOnNext() {
        let scheduler = TestScheduler()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = Observable<Int>.interval(.milliseconds(10), scheduler: scheduler).subscribe(onNext: {
            received.append($0)
            if $0 == 2 { subscription?.dispose() }
        })
        scheduler.advance(to: 100_000_000)
        #expect(received == [0, 1, 2])
        subscription = nil
    }
}
