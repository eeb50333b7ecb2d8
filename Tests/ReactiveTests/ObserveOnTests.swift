import Dispatch
@testable import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// observeOn: order, serial delivery, batching, disposal.
@Suite("observeOn", .ownLiveResources)
struct ObserveOnTests {
    @Test("virtual time: events are delivered by a job on the scheduler, in order")
    func virtualTime() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .completed(230)])
        let observer = scheduler.start { source.asObservable().observeOn(scheduler) }
        #expect(observer.events == [.next(210, 1), .next(220, 2), .completed(230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "-12|")
    }

    @Test("an error is delivered on the scheduler and the source is released")
    func error() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .error(220, TestError(4))])
        let observer = scheduler.start { source.asObservable().observeOn(scheduler) }
        #expect(observer.events == [.next(210, 1), .error(220, TestError(4))])
        #expect(source.subscriptions == [Subscription(200, 220)])
    }

    @Test("a synchronous burst is delivered later, by one job")
    func burstIsOneJob() {
        let scheduler = TestScheduler()
        let counting = JobCountingScheduler(scheduler)
        var received: [Int] = []
        let subscription = Observable.from(0..<100).observeOn(counting)
            .subscribe(onNext: { received.append($0) })
        #expect(received.isEmpty)   // nothing delivered on the subscribing thread
        scheduler.start()
        #expect(received == Array(0..<100))
        #expect(counting.scheduled == 1)
        subscription.dispose()
    }

    @Test("serial dispatch queue: order preserved; a burst while a drain job is pending costs one job")
    func serialQueue() {
        let counting = JobCountingScheduler(SerialDispatchQueueScheduler(label: "observeOn-serial"))
        let subject = PublishSubject<Int>()
        let received = SharedList<Int>()
        let done = DispatchSemaphore(value: 0)
        let subscription = subject.observeOn(counting)
            .subscribe(onNext: { received.append($0) }, onCompleted: { done.signal() })
        let n = 10_000
        // Phase 1: the first event schedules the drain job, which is held; the other
        // N-1 events join the queue without scheduling anything.
        counting.hold()
        for i in 0..<n { subject.onNext(i) }
        #expect(counting.scheduled == 1)
        counting.release()
        // Phase 2, free-running: order is all that can be asserted without timing.
        for i in n..<(2 * n) { subject.onNext(i) }
        subject.onCompleted()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.values == Array(0..<(2 * n)))
        subscription.dispose()
    }

    @Test("concurrent scheduler, several producer threads: serial delivery, per-producer order, one job per burst")
    func concurrentProducers() {
        let counting = JobCountingScheduler(ConcurrentDispatchQueueScheduler(qos: .default))
        let received = SharedList<Int>()
        let inside = Atomic<Int>(0)
        let overlaps = SharedCounter()
        // Several producer threads feed one observeOn sink directly (no subject in front
        // to serialise them): `create` hands out its observer to every thread.
        var feed: AnyObserver<Int>?
        let source = Observable<Int>.create { observer in
            feed = observer
            return Disposables.create()
        }
        let subscription = source.observeOn(counting).subscribe(onNext: { value in
            if inside.wrappingAdd(1, ordering: .acquiringAndReleasing).newValue != 1 { overlaps.add(1) }
            received.append(value)
            inside.wrappingSubtract(1, ordering: .acquiringAndReleasing)
        })
        let observer = feed!
        let producers = 4
        let perProducer = 2_000
        counting.hold()
        DispatchQueue.concurrentPerform(iterations: producers) { p in
            for i in 0..<perProducer { observer.onNext(p * 1_000_000 + i) }
        }
        #expect(counting.scheduled == 1)
        counting.release()
        // Free-running from several threads again: delivery must stay serial.
        DispatchQueue.concurrentPerform(iterations: producers) { p in
            for i in perProducer..<(2 * perProducer) { observer.onNext(p * 1_000_000 + i) }
        }
        let total = producers * perProducer * 2
        let deadline = monotonicNow() + 10_000_000_000
        while received.values.count < total && monotonicNow() < deadline {
            usleep(1_000)
        }
        let values = received.values
        #expect(values.count == total)
        #expect(overlaps.value == 0)
        for p in 0..<producers {
            let mine = values.filter { $0 / 1_000_000 == p }
            #expect(mine == (0..<(2 * perProducer)).map { p * 1_000_000 + $0 })
        }
        subscription.dispose()
        feed = nil
    }

    @Test("disposal mid-stream stops delivery")
    func disposalMidStream() {
        let scheduler = TestScheduler()
        var received: [Int] = []
        var subscription: Disposable?
        subscription = Observable.from(0..<100).observeOn(scheduler).subscribe(onNext: { value in
            received.append(value)
            if value == 9 { subscription?.dispose() }
        })
        scheduler.start()
        #expect(received == Array(0..<10))
        subscription = nil
    }

    @Test("disposal before the drain job runs drops everything queued")
    func disposalBeforeDrain() {
        let scheduler = TestScheduler()
        var received: [Int] = []
        let subscription = Observable.from(0..<5).observeOn(scheduler).subscribe(onNext: { received.append($0) })
        subscription.dispose()
        scheduler.start()
        #expect(received.isEmpty)
    }

    @Test("virtual time, ring of 2: a burst at one instant overflows the ring and keeps its order")
    func virtualTimeOverflow() {
        let scheduler = TestScheduler()
        // The four events at 210 are sent before the drain job scheduled by the first
        // one runs, so two of them go into overflow nodes.
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(210, 2), .next(210, 3), .next(210, 4), .next(220, 5), .completed(230),
        ])
        let observer = scheduler.start { source.asObservable().observeOn(scheduler, ringCapacity: 2) }
        #expect(observer.events == [
            .next(210, 1), .next(210, 2), .next(210, 3), .next(210, 4), .next(220, 5), .completed(230),
        ])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "-(1234)5|")
    }

    @Test("ring of 4, a held burst of 5 000 goes through the overflow path: one job, order kept, completion last")
    func heldBurstOverflows() {
        let counting = JobCountingScheduler(SerialDispatchQueueScheduler(label: "observeOn-overflow"))
        let subject = PublishSubject<Int>()
        let received = SharedList<Int>()
        let done = DispatchSemaphore(value: 0)
        let subscription = subject.observeOn(counting, ringCapacity: 4)
            .subscribe(onNext: { received.append($0) }, onCompleted: {
                received.append(-1)
                done.signal()
            })
        let n = 5_000
        counting.hold()
        for i in 0..<n { subject.onNext(i) }   // 4 in the ring, the rest in overflow nodes
        #expect(counting.scheduled == 1)
        counting.release()
        for i in n..<(2 * n) { subject.onNext(i) }
        subject.onCompleted()
        #expect(done.wait(timeout: .now() + 10) == .success)
        #expect(received.values == Array(0..<(2 * n)) + [-1])
        subscription.dispose()
    }

    @Test("8 producer threads × 20 000 events into a ring of 16: each once, per-producer order, never concurrent, completion after all")
    func manyProducersTinyRing() {
        let probe = DeliveryProbe<Int>()
        let completions = SharedCounter()
        let done = DispatchSemaphore(value: 0)
        // The sink's own observer goes to every producer thread: nothing in front of
        // observeOn serialises them.
        let feed = Mutex<AnyObserver<Int>?>(nil)
        let source = Observable<Int> { observer in
            feed.withLock { $0 = observer }
            return Disposables.create()
        }
        let counting = JobCountingScheduler(ConcurrentDispatchQueueScheduler(qos: .default))
        let subscription = source.observeOn(counting, ringCapacity: 16)
            .subscribe(onNext: { probe.receive($0) }, onCompleted: {
                completions.add(1)
                probe.receive(-1)
                done.signal()
            })
        let observer = feed.withLock { $0! }
        let producers = 8, perProducer = 20_000
        runConcurrently(threads: producers) { p in
            for i in 0..<perProducer { observer.onNext(p * 1_000_000 + i) }
        }
        observer.onCompleted()
        #expect(done.wait(timeout: .now() + 60) == .success)
        observer.onNext(-2)   // after the stop event: dropped
        let values = probe.values
        #expect(probe.overlaps == 0)
        #expect(values.count == producers * perProducer + 1)
        #expect(values.last == -1)
        #expect(perProducerComplete(Array(values.dropLast()), producers: producers, perProducer: perProducer))
        subscription.dispose()
        feed.withLock { $0 = nil }
        // Once the drain jobs have returned, whatever the -2 could have set off has happened.
        #expect(counting.waitUntilIdle())
        #expect(completions.value == 1)
        #expect(probe.values.count == producers * perProducer + 1)
    }

    @Test("dispose (twice) while 4 threads send into a ring of 8: delivery stops, nothing leaks")
    func disposeDuringHeavySend() {
        let delivered = SharedCounter()
        let sent = SharedCounter()
        let stop = AtomicFlag()
        let feed = Mutex<AnyObserver<Int>?>(nil)
        let source = Observable<Int> { observer in
            feed.withLock { $0 = observer }
            return Disposables.create()
        }
        let queue = SerialDispatchQueueScheduler(label: "observeOn-dispose")
        let subscription = source.observeOn(queue, ringCapacity: 8)
            .subscribe(onNext: { _ in delivered.add(1) })
        let observer = feed.withLock { $0! }
        let producers = 4
        let afterDispose = SharedCounter()
        // Threads 0..<producers send until told to stop; the last thread waits for some
        // deliveries, then disposes (twice).
        let disposedAt = Mutex<Int>(-1)
        runConcurrently(threads: producers + 1) { t in
            if t < producers {
                var i = 0
                while !stop.isSet {
                    observer.onNext(i)
                    sent.add(1)
                    i += 1
                }
                return
            }
            let deadline = monotonicNow() + 10_000_000_000
            while delivered.value < 5_000 && monotonicNow() < deadline { sched_yield() }
            subscription.dispose()
            subscription.dispose()   // idempotent
            disposedAt.withLock { $0 = delivered.value }
            let sentAtDispose = sent.value
            // The producers keep sending into the disposed sink: a thousand more sends.
            let sendingDeadline = monotonicNow() + 10_000_000_000
            while sent.value < sentAtDispose + 1_000 && monotonicNow() < sendingDeadline { sched_yield() }
            afterDispose.add(sent.value - sentAtDispose)
            stop.set()
        }
        let countAtDispose = disposedAt.withLock { $0 }
        #expect(countAtDispose >= 5_000)
        #expect(afterDispose.value >= 1_000)
        // A job on the serial queue after the sends: a drain queued by any of them has run.
        let drained = DispatchSemaphore(value: 0)
        queue.schedule { drained.signal() }
        #expect(drained.wait(timeout: .now() + 10) == .success)
        // At most the delivery in flight when dispose returned completes afterwards.
        #expect(delivered.value <= countAtDispose + 1)
        feed.withLock { $0 = nil }
    }
}

#if canImport(Glibc)
import Glibc
#endif
