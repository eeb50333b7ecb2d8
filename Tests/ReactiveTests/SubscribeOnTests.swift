import Dispatch
import Reactive
import ReactiveTesting
import Testing

/// subscribeOn / subscribe(on:).
@Suite("subscribeOn", .ownLiveResources)
struct SubscribeOnTests {
    @Test("virtual time: subscription and disposal happen in jobs on the scheduler")
    func virtualTime() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(230, 2)])
        let observer = scheduler.start(disposed: 250) { source.subscribeOn(scheduler) }
        #expect(observer.events == [.next(210, 1), .next(230, 2)])
        #expect(source.subscriptions == [Subscription(200, 250)])
        #expect(Marbles.render(observer.events, start: 200) == "-1-2")
    }

    @Test("subscribe returns before the source is subscribed; the job does it")
    func deferredSubscription() {
        let scheduler = TestScheduler()
        var subscribed = 0
        let source = Observable<Int>.create { observer in
            subscribed += 1
            observer.onNext(1)
            return Disposables.create()
        }
        var received: [Int] = []
        let subscription = source.subscribe(on: scheduler).subscribe(onNext: { received.append($0) })
        #expect(subscribed == 0)
        scheduler.start()
        #expect(subscribed == 1)
        #expect(received == [1])
        subscription.dispose()
        scheduler.start()
    }

    @Test("disposing before the job runs: the source is never subscribed")
    func disposeBeforeJob() {
        let scheduler = TestScheduler()
        var subscribed = 0
        let source = Observable<Int>.create { _ in
            subscribed += 1
            return Disposables.create()
        }
        let subscription = source.subscribeOn(scheduler).subscribe()
        subscription.dispose()
        scheduler.start()
        #expect(subscribed == 0)
    }

    @Test("a stop event is passed on; the source is disposed on the scheduler afterwards")
    func stopEvent() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .completed(220)])
        // Directly on the test observable, so only subscribeOn disposes it.
        let observer = scheduler.start { source.subscribeOn(scheduler) }
        #expect(observer.events == [.next(210, 1), .completed(220)])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("dispatch queues: subscription and disposal both run on the scheduler's queue")
    func dispatchQueues() {
        let scheduler = SerialDispatchQueueScheduler(label: "subscribeOn-test")
        let key = DispatchSpecificKey<Int>()
        scheduler.queue.setSpecific(key: key, value: 42)
        let subscribedOnQueue = SharedList<Bool>()
        let disposedOnQueue = SharedList<Bool>()
        let subscribedSignal = DispatchSemaphore(value: 0)
        let disposedSignal = DispatchSemaphore(value: 0)
        let source = Observable<Int>.create { observer in
            subscribedOnQueue.append(DispatchQueue.getSpecific(key: key) == 42)
            subscribedSignal.signal()
            return Disposables.create {
                disposedOnQueue.append(DispatchQueue.getSpecific(key: key) == 42)
                disposedSignal.signal()
            }
        }
        let subscription = source.subscribeOn(scheduler).subscribe()
        #expect(subscribedSignal.wait(timeout: .now() + 5) == .success)
        subscription.dispose()   // on the test thread
        #expect(disposedSignal.wait(timeout: .now() + 5) == .success)
        #expect(subscribedOnQueue.values == [true])
        #expect(disposedOnQueue.values == [true])
    }

    @Test("disposal racing with the subscribe job on a concurrent queue always disposes the source")
    func raceOnConcurrentQueue() {
        let scheduler = ConcurrentDispatchQueueScheduler(qos: .default)
        let subscriptions = SharedCounter()
        let disposals = SharedCounter()
        let group = DispatchGroup()
        for _ in 0..<200 {
            let source = Observable<Int>.create { _ in
                subscriptions.add(1)
                return Disposables.create { disposals.add(1) }
            }
            let subscription = source.subscribeOn(scheduler).subscribe()
            group.enter()
            DispatchQueue.global().async {
                subscription.dispose()
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 5) == .success)
        let deadline = monotonicNow() + 2_000_000_000
        while disposals.value != subscriptions.value && monotonicNow() < deadline { usleep(1_000) }
        #expect(disposals.value == subscriptions.value)
    }
}


#if canImport(Glibc)
import Glibc
#endif
