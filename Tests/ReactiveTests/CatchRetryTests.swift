import Reactive
import ReactiveTesting
import Testing

/// catch, catchAndReturn, retry, retry(_:), retry(when:), retry(backoff:) in virtual time.
@Suite("catch / retry", .ownLiveResources)
struct CatchRetryTests {
    @Test("catch: the handler's sequence replaces the failed source")
    func catchSwitches() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, "a"), .error(230, TestError(1), String.self)])
        let ys = scheduler.createColdObservable([.next(10, "b"), .completed(20, String.self)])
        var handled: [TestError] = []
        let observer = scheduler.start {
            xs.catch { error in
                handled.append(error as! TestError)
                return ys.asObservable()
            }
        }
        #expect(observer.events == [.next(210, "a"), .next(240, "b"), .completed(250)])
        #expect(Marbles.render(observer.events, start: 200) == "-a--b|")
        #expect(handled == [TestError(1)])
        #expect(xs.subscriptions == [Subscription(200, 230)])
        #expect(ys.subscriptions == [Subscription(230, 250)])
    }

    @Test("catch: completion passes through; the handler is not called")
    func catchCompletion() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, "a"), .completed(230, String.self)])
        let observer = scheduler.start { xs.catch { _ in Issue.record("handler called"); return .empty() } }
        #expect(observer.events == [.next(210, "a"), .completed(230)])
    }

    @Test("catch: a throwing handler and the handler sequence's error are passed on")
    func catchErrors() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.error(210, TestError(1), Int.self)])
        let thrown = scheduler.start { xs.catch { _ in throw TestError(2) } }
        #expect(thrown.events == [.error(210, TestError(2), Int.self)])
        let ys = scheduler.createHotObservable([.error(1210, TestError(1), Int.self)])
        let failing = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            ys.catch { _ in .error(TestError(3)) }
        }
        #expect(failing.events == [.error(1210, TestError(3), Int.self)])
    }

    @Test("catch: a source that fails during subscribe switches to the handler's")
    func catchSynchronous() {
        var received: [Int] = []
        var completed = false
        _ = Observable<Int>.error(TestError(1)).catch { _ in .of(1, 2) }
            .subscribe(onNext: { received.append($0) }, onCompleted: { completed = true })
        #expect(received == [1, 2] && completed)
    }

    @Test("catchAndReturn: the element, then completion, at the error")
    func catchAndReturn() {
        let scheduler = TestScheduler()
        let xs = scheduler.createHotObservable([.next(210, "a"), .error(230, TestError(1), String.self),
                                                 .next(240, "late")])
        let observer = scheduler.start { xs.catchAndReturn("x") }
        #expect(observer.events == [.next(210, "a"), .next(230, "x"), .completed(230)])
        #expect(Marbles.render(observer.events, start: 200) == "-a-(x|)")
        #expect(xs.subscriptions == [Subscription(200, 230)])
    }

    @Test("retry(3) resubscribes a cold source; each attempt's interval; the third error is passed on")
    func retryCount() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let observer = scheduler.start { xs.retry(3) }
        #expect(observer.events == [.next(210, "a"), .next(230, "a"), .next(250, "a"), .error(260, TestError(1))])
        #expect(Marbles.render(observer.events, start: 200) == "-a-a-a#")
        #expect(xs.subscriptions == [Subscription(200, 220), Subscription(220, 240), Subscription(240, 260)])
    }

    @Test("retry(1) never resubscribes")
    func retryOnce() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let observer = scheduler.start { xs.retry(1) }
        #expect(observer.events == [.next(210, "a"), .error(220, TestError(1))])
        #expect(xs.subscriptions == [Subscription(200, 220)])
    }

    @Test("retry() until an attempt completes; disposal during an attempt")
    func retryForever() {
        let scheduler = TestScheduler()
        var attempts = 0
        let source = Observable<Int>.deferred {
            attempts += 1
            return attempts < 3 ? .error(TestError(attempts)) : .of(attempts)
        }
        let observer = scheduler.start { source.retry() }
        #expect(observer.events == [.next(200, 3), .completed(200)])
        #expect(attempts == 3)
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let disposed = scheduler.start(created: 1100, subscribed: 1200, disposed: 1250) { xs.retry() }
        #expect(disposed.events.map(\.time) == [1210, 1230])   // the disposal at 1250 runs before the third "a"
        #expect(xs.subscriptions == [Subscription(1200, 1220), Subscription(1220, 1240), Subscription(1240, 1250)])
    }

    @Test("retry: a source that fails during subscribe loops instead of recursing")
    func retryTrampoline() {
        var attempts = 0
        var failure: (any Error)?
        _ = Observable<Int>.deferred { attempts += 1; return .error(TestError(9)) }
            .retry(20_000)
            .subscribe(onError: { failure = $0 })
        #expect(attempts == 20_000)
        #expect(failure as? TestError == TestError(9))
    }

    @Test("retry(when:) with a virtual-time exponential backoff: delays exact, then the error")
    func retryWhenBackoff() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let backoff = ExponentialBackoff(initial: .milliseconds(10), multiplier: 2,
                                         maxDelay: .milliseconds(35), maxAttempts: 5)
        let observer = scheduler.start { xs.retry(backoff: backoff, scheduler: scheduler) }
        // Failures at 220, 250, 290, 345, 400; waits 10, 20, 40→35, 80→35; the fifth is passed on.
        #expect(xs.subscriptions == [Subscription(200, 220), Subscription(230, 250), Subscription(270, 290),
                                     Subscription(325, 345), Subscription(380, 400)])
        #expect(observer.events == [.next(210, "a"), .next(240, "a"), .next(280, "a"), .next(335, "a"),
                                    .next(390, "a"), .error(400, TestError(1))])
    }

    @Test("retry(when:) resubscribes on each trigger element; completes when an attempt completes")
    func retryWhenSucceeds() {
        let scheduler = TestScheduler()
        var attempts = 0
        let source = Observable<String>.deferred {
            attempts += 1
            return attempts < 3 ? .error(TestError(attempts)) : .just("ok")
        }
        var seen: [Int] = []
        let observer = scheduler.start {
            source.retry(when: { errors in
                errors.flatMap { error -> Observable<Int> in
                    seen.append((error as! TestError).id)
                    return Observable<Int>.timer(.milliseconds(5), scheduler: scheduler)
                }
            })
        }
        #expect(observer.events == [.next(210, "ok"), .completed(210)])
        #expect(Marbles.render(observer.events, start: 200) { _ in "k" } == "-(k|)")
        #expect(seen == [1, 2])
    }

    @Test("retry(when:): the trigger's completion completes, its error errors")
    func retryWhenTriggerStops() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let completing = scheduler.createHotObservable([.completed(250, Int.self)])
        let completed = scheduler.start { xs.retry(when: { _ in completing }) }
        #expect(completed.events == [.next(210, "a"), .completed(250)])
        #expect(xs.subscriptions == [Subscription(200, 220)])
        #expect(completing.subscriptions == [Subscription(200, 250)])

        let ys = scheduler.createColdObservable([.next(10, "b"), .error(20, TestError(1), String.self)])
        let failing = scheduler.createHotObservable([.error(1250, TestError(4), Int.self)])
        let failed = scheduler.start(created: 1100, subscribed: 1200, disposed: 2000) {
            ys.retry(when: { _ in failing })
        }
        #expect(failed.events == [.next(1210, "b"), .error(1250, TestError(4))])
        #expect(failing.subscriptions == [Subscription(1200, 1250)])
    }

    @Test("retry(backoff:): disposal during a wait cancels the timer; nothing resubscribes")
    func backoffDisposedWhileWaiting() {
        let scheduler = TestScheduler()
        let xs = scheduler.createColdObservable([.next(10, "a"), .error(20, TestError(1), String.self)])
        let backoff = ExponentialBackoff(initial: .milliseconds(50), maxDelay: .seconds(1), maxAttempts: 10)
        let observer = scheduler.start(disposed: 240) { xs.retry(backoff: backoff, scheduler: scheduler) }
        #expect(observer.events == [.next(210, "a")])
        #expect(xs.subscriptions == [Subscription(200, 220)])
        #expect(!scheduler.hasPendingWork)
    }

    @Test("ExponentialBackoff delays: multiplied, capped")
    func backoffDelays() {
        let backoff = ExponentialBackoff(initial: .milliseconds(100), multiplier: 1.5,
                                         maxDelay: .milliseconds(300), maxAttempts: .max)
        #expect((1...5).map { backoff.delay(beforeRetry: $0) }
                == [.milliseconds(100), .milliseconds(150), .milliseconds(225), .milliseconds(300), .milliseconds(300)])
        #expect(backoff.delay(beforeRetry: 10_000) == .milliseconds(300))
    }
}
