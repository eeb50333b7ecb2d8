import Dispatch
import Reactive
import ReactiveTesting
import Testing

/// buffer(timeSpan:count:scheduler:).
@Suite("buffer", .ownLiveResources)
struct BufferTests {
    private func symbol(_ array: [Int]) -> String { array.isEmpty ? "e" : "\(array.count)" }

    @Test("emits every timeSpan (empty arrays too) or when count is reached; a count emission restarts the timer")
    func timeAndCount() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(230, 3),          // count 3 reached at 230
            .next(280, 4),                                        // timer restarted at 230: tick at 260 (empty), 290
            .completed(335),
        ])
        let observer = scheduler.start {
            source.buffer(timeSpan: .milliseconds(30), count: 3, scheduler: scheduler)
        }
        #expect(observer.events == [
            .next(230, [1, 2, 3]), .next(260, []), .next(290, [4]), .next(320, []),
            .next(335, []), .completed(335),
        ])
        #expect(source.subscriptions == [Subscription(200, 335)])
        #expect(Marbles.render(observer.events, start: 200, symbol: symbol) == "---3--e--1--e(e|)")
    }

    @Test("completion flushes the current array, then completes")
    func flushOnCompletion() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .completed(225)])
        let observer = scheduler.start {
            source.buffer(timeSpan: .milliseconds(100), count: 10, scheduler: scheduler)
        }
        #expect(observer.events == [.next(225, [1, 2]), .completed(225)])
        #expect(source.subscriptions == [Subscription(200, 225)])
        #expect(Marbles.render(observer.events, start: 200, symbol: symbol) == "--(2|)")
    }

    @Test("an error drops the collected elements")
    func errorDrops() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(1))])
        let observer = scheduler.start {
            source.buffer(timeSpan: .milliseconds(100), count: 10, scheduler: scheduler)
        }
        #expect(observer.events == [.error(220, TestError(1))])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("disposal while the timer is pending: nothing is emitted afterwards")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(240, 2)])
        let observer = scheduler.start(disposed: 250) {
            source.buffer(timeSpan: .milliseconds(30), count: 10, scheduler: scheduler)
        }
        #expect(observer.events == [.next(230, [1])])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }

    @Test("count below 1 fails with argumentOutOfRange")
    func badCount() {
        let scheduler = TestScheduler()
        let observer = scheduler.start {
            Observable.of(1).buffer(timeSpan: .milliseconds(10), count: 0, scheduler: scheduler)
        }
        #expect(observer.events == [.error(200, RxError.argumentOutOfRange)])
    }

    @Test("a synchronous source fills several arrays by count, then flushes")
    func synchronous() {
        let scheduler = TestScheduler()
        var arrays: [[Int]] = []
        _ = Observable.from(1...7).buffer(timeSpan: .seconds(1), count: 3, scheduler: scheduler)
            .subscribe(onNext: { arrays.append($0) })
        #expect(arrays == [[1, 2, 3], [4, 5, 6], [7]])
    }

    @Test("disposal from inside onNext and re-entrant elements")
    func reentrantAndDisposeInside() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var arrays: [[Int]] = []
        var subscription: Disposable?
        subscription = subject.buffer(timeSpan: .milliseconds(10), count: 2, scheduler: scheduler)
            .subscribe(onNext: { array in
                arrays.append(array)
                if array == [1, 2] { subject.onNext(3); subject.onNext(4) }   // the next array
                if array == [3, 4] { subscription?.dispose() }
            })
        subject.onNext(1)
        subject.onNext(2)
        scheduler.advance(by: .milliseconds(100))
        #expect(arrays == [[1, 2], [3, 4]])
        subscription = nil
    }

    @Test("several producer threads: every element in exactly one array, arrays never above count")
    func threads() {
        let scheduler = SerialDispatchQueueScheduler(label: "buffer-test")
        let subject = PublishSubject<Int>()
        let arrays = SharedList<[Int]>()
        let done = DispatchSemaphore(value: 0)
        let subscription = subject.buffer(timeSpan: .milliseconds(5), count: 16, scheduler: scheduler)
            .subscribe(onNext: { arrays.append($0) }, onCompleted: { done.signal() })
        DispatchQueue.concurrentPerform(iterations: 4) { p in
            for i in 0..<1_000 { subject.onNext(p * 10_000 + i) }
        }
        subject.onCompleted()
        #expect(done.wait(timeout: .now() + 5) == .success)
        let all = arrays.values.flatMap { $0 }
        #expect(all.count == 4_000)
        #expect(Set(all).count == 4_000)
        #expect(arrays.values.allSatisfy { $0.count <= 16 })
        for p in 0..<4 {
            let mine = all.filter { $0 / 10_000 == p }
            #expect(mine == (0..<1_000).map { p * 10_000 + $0 })
        }
        subscription.dispose()
    }
}

#if canImport(Glibc)
import Glibc
#endif
