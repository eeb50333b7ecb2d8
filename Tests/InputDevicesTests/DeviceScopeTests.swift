@testable import InputDevices
import Reactive
import ReactiveTesting
import Testing

@Suite("DeviceScope", .ownLiveResources)
struct DeviceScopeTests {
    @Test("disposal disposes members in insertion order; later inserts are disposed at once")
    func disposalOrder() {
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
    }

    @Test("removal completes the device's frames before its subscriptions are disposed; nothing leaks")
    func removalCompletesSubscribers() {
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
    }
}
