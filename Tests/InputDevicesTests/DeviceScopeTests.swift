@testable import InputDevices
import Reactive
import Testing

@Suite("DeviceScope")
struct DeviceScopeTests {
    @Test("disposal disposes members in insertion order; later inserts are disposed at once")
    func disposalOrder() {
        let baseline = LiveResources.count
        let counter = ScopeCounter()
        var order: [String] = []
        do {
            let scope = DeviceScope(counter: counter)
            #expect(counter.value.load(ordering: .relaxed) == 1)
            scope.insert(Disposables.create { order.append("reader") })
            scope.insert(Disposables.create { order.append("frames") })
            scope.dispose()
            scope.dispose()
            #expect(order == ["reader", "frames"])
            #expect(scope.insert(Disposables.create { order.append("late") }) == nil)
            #expect(order == ["reader", "frames", "late"])
        }
        #expect(counter.value.load(ordering: .relaxed) == 0)
        #expect(LiveResources.count == baseline)
    }

    @Test("removal completes the device's frames before its subscriptions are disposed; nothing leaks")
    func removalCompletesSubscribers() {
        let baseline = LiveResources.count
        let counter = ScopeCounter()
        var events: [String] = []
        do {
            let scope = DeviceScope(counter: counter)
            let frames = PublishSubject<Int>()
            scope.insert(Disposables.create { frames.onCompleted() })   // what the reader's stop does
            let subscription = frames.subscribe(onNext: { events.append("next \($0)") },
                                                onCompleted: { events.append("completed") },
                                                onDisposed: { events.append("disposed") })
            scope.insert(subscription)
            frames.onNext(1)
            scope.dispose()
            frames.onNext(2)
        }
        #expect(events == ["next 1", "completed", "disposed"])
        #expect(counter.value.load(ordering: .relaxed) == 0)
        #expect(LiveResources.count == baseline)
    }

    @Test("a subscriber that leaves early is removed from the scope (no pile-up on long-lived devices)")
    func scopedSubscriptionLeavesScope() {
        let baseline = LiveResources.count
        let counter = ScopeCounter()
        do {
            let scope = DeviceScope(counter: counter)
            let frames = PublishSubject<Int>()
            for _ in 0..<100 {
                let s = ScopedSubscription()
                let key = scope.insert(frames.subscribe(onNext: { _ in }))!
                s.attach(scope: scope, key: key)
                s.dispose()
            }
            #expect(scope.memberCount == 0)
            #expect(!frames.hasObservers)
            // Disposed before being attached: the member is removed as soon as it is attached.
            let early = ScopedSubscription()
            early.dispose()
            early.attach(scope: scope, key: scope.insert(frames.subscribe(onNext: { _ in }))!)
            #expect(scope.memberCount == 0)
            scope.dispose()
        }
        #expect(counter.value.load(ordering: .relaxed) == 0)
        #expect(LiveResources.count == baseline)
    }

    @Test("a subscriber's disposable kept after removal does not keep the device scope alive")
    func keptDisposableDoesNotPinScope() {
        let baseline = LiveResources.count
        let counter = ScopeCounter()
        let kept = ScopedSubscription()
        do {
            let scope = DeviceScope(counter: counter)
            kept.attach(scope: scope, key: scope.insert(Disposables.create())!)
            scope.dispose()
        }
        #expect(counter.value.load(ordering: .relaxed) == 0)
        kept.dispose()   // still safe afterwards
        #expect(LiveResources.count == baseline)
    }
}
