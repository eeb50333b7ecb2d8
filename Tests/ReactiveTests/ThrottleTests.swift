import Reactive
import ReactiveTesting
import Testing

/// Throttle in virtual time; one tick = 1 ms. The first block pins the key filter's worked
/// examples (throttle-latest 25 ms + distinctUntilChanged; docs/operators/throttle.md, "Key filter").
@Suite("throttle", .ownLiveResources)
struct ThrottleTests {
    /// Runs the key filter over `input` (times relative to tick 300, after the subscription at
    /// 200) and returns the output with times relative to tick 300 too.
    private func keyFilter(_ input: [Recorded<Event<Int>>], dispose: TestTime = 800) -> [Recorded<Event<Int>>] {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable(input.map { Recorded(time: $0.time + 300, value: $0.value) })
        return scheduler.start(disposed: 300 + dispose) {
            source.throttle(.milliseconds(25), latest: true, scheduler: scheduler).distinctUntilChanged()
        }.events.map { Recorded(time: $0.time - 300, value: $0.value) }
    }

    @Test("bounce after the press is swallowed; the press is never delayed")
    func bounceAfterPress() {
        #expect(keyFilter([.next(0, 1), .next(3, 0), .next(6, 1), .next(120, 0)]) == [.next(0, 1), .next(120, 0)])
    }

    @Test("bounce after the release is swallowed; settled 0 equals the last output")
    func bounceAfterRelease() {
        #expect(keyFilter([.next(0, 1), .next(100, 0), .next(103, 1), .next(106, 0)])
                == [.next(0, 1), .next(100, 0)])
    }

    @Test("a real 40 ms tap is untouched")
    func realTap() {
        #expect(keyFilter([.next(0, 1), .next(40, 0)]) == [.next(0, 1), .next(40, 0)])
    }

    @Test("a release inside the window is delivered at the window's end")
    func releaseInsideWindow() {
        #expect(keyFilter([.next(0, 1), .next(10, 0)]) == [.next(0, 1), .next(25, 0)])
    }

    @Test("disposal while a value is kept: nothing fires after disposal")
    func disposeWhileKept() {
        #expect(keyFilter([.next(0, 1), .next(3, 0), .next(6, 1)], dispose: 10) == [.next(0, 1)])
    }

    @Test("latest: false drops everything inside the window")
    func latestFalse() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 2), .next(240, 3), .next(260, 4), .completed(300),
        ])
        let observer = scheduler.start {
            source.throttle(.milliseconds(30), latest: false, scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 1), .next(240, 3), .completed(300)])
        #expect(source.subscriptions == [Subscription(200, 300)])
    }

    @Test("completion waits for the kept element and follows it")
    func completionFlushesKept() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(215, 2), .completed(220)])
        let observer = scheduler.start {
            source.throttle(.milliseconds(30), latest: true, scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 1), .next(240, 2), .completed(240)])
        #expect(Marbles.render(observer.events, start: 200) == "-1--(2|)")
    }

    @Test("an error is passed on at once and the kept element is dropped")
    func errorDropsKept() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(215, 2), .error(220, TestError(1))])
        let observer = scheduler.start {
            source.throttle(.milliseconds(30), latest: true, scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(1))])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("an element at exactly the window's end opens a new window")
    func elementAtWindowEnd() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .next(240, 3), .next(245, 4)])
        let observer = scheduler.start {
            source.throttle(.milliseconds(30), latest: true, scheduler: scheduler)
        }
        // 2 is kept for 240; 3 arrives at 240 and supersedes it; 4 is kept until 270.
        #expect(observer.events.map(\.value.element) == [1, 3, 4])
        #expect(observer.events.map(\.time) == [210, 240, 270])
    }

    @Test("re-entrant emission from inside onNext is delivered after the current element")
    func reentrantEmission() {
        let scheduler = TestScheduler()
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        let subscription = subject.throttle(.milliseconds(5), latest: true, scheduler: scheduler)
            .subscribe(onNext: { value in
                received.append(value)
                if value == 1 { subject.onNext(2) }   // inside the window: kept
            })
        subject.onNext(1)
        #expect(received == [1])
        scheduler.advance(by: .milliseconds(5))
        #expect(received == [1, 2])
        subscription.dispose()
    }
}
