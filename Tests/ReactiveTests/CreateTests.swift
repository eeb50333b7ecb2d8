import Reactive
import ReactiveTesting
import Testing

/// Observable.create: grammar enforcement and dispose-after-stop.
@Suite("create", .ownLiveResources)
struct CreateTests {
    @Test("nothing is delivered after completed")
    func nothingAfterCompleted() {
        var events: [Event<Int>] = []
        let source = Observable<Int>.create { observer in
            observer.onNext(1)
            observer.onCompleted()
            observer.onNext(2)
            observer.onError(TestError(1))
            observer.onCompleted()
            return Disposables.create()
        }
        // A raw observer: no subscribe(onNext:) in between, so create alone must enforce it.
        _ = source.subscribe(AnyObserver { events.append($0) })
        #expect(events == [.next(1), .completed])
    }

    @Test("nothing is delivered after error")
    func nothingAfterError() {
        var events: [Event<Int>] = []
        _ = Observable<Int>.create { observer in
            observer.onError(TestError(2))
            observer.onNext(1)
            observer.onCompleted()
            return Disposables.create()
        }.subscribe(AnyObserver { events.append($0) })
        #expect(events == [.error(TestError(2))])
    }

    @Test("a stop before subscribe returns still disposes the returned disposable, once")
    func stopBeforeSubscribeReturns() {
        let disposals = SharedCounter()
        var onDisposedCalls = 0
        let source = Observable<Int>.create { observer in
            observer.onNext(1)
            observer.onCompleted()
            return Disposables.create { disposals.add(1) }
        }
        let subscription = source.subscribe(onDisposed: { onDisposedCalls += 1 })
        #expect(disposals.value == 1)
        #expect(onDisposedCalls == 1)
        subscription.dispose()
        #expect(disposals.value == 1)
        #expect(onDisposedCalls == 1)

        // The same with a raw observer: create itself disposes after the stop.
        _ = source.subscribe(AnyObserver { _ in })
        #expect(disposals.value == 2)
    }

    @Test("a later stop disposes the user's disposable and calls onDisposed")
    func laterStop() {
        let scheduler = TestScheduler()
        let disposals = SharedCounter()
        var disposedAt: TestTime?
        let observer = scheduler.createObserver(Int.self)
        let source = Observable<Int>.create { observer in
            scheduler.scheduleAt(210) { observer.onNext(1) }
            scheduler.scheduleAt(220) { observer.onCompleted() }
            scheduler.scheduleAt(230) { observer.onNext(99) }
            return Disposables.create { disposals.add(1) }
        }
        scheduler.scheduleAt(200) {
            _ = source.subscribe(onNext: { observer.onNext($0) }, onCompleted: { observer.onCompleted() },
                                 onDisposed: { disposedAt = scheduler.clockTicks })
        }
        scheduler.start()
        #expect(observer.events == [.next(210, 1), .completed(220)])
        #expect(disposals.value == 1)
        #expect(disposedAt == 220)
    }

    @Test("disposal stops delivery and disposes the user's disposable once")
    func disposal() {
        let disposals = SharedCounter()
        var send: AnyObserver<Int>?
        var received: [Int] = []
        let subscription = Observable<Int>.create { observer in
            send = observer
            return Disposables.create { disposals.add(1) }
        }.subscribe(onNext: { received.append($0) })
        send?.onNext(1)
        subscription.dispose()
        subscription.dispose()
        send?.onNext(2)
        send?.onCompleted()
        #expect(received == [1])
        #expect(disposals.value == 1)
        send = nil
    }
}
