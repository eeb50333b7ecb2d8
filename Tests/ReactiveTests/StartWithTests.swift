import Reactive
import ReactiveTesting
import Testing

/// startWith.
@Suite("startWith", .ownLiveResources)
struct StartWithTests {
    @Test("the prefix is emitted at subscription, then the source")
    func prefix() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(150, 0), .next(220, 3), .completed(230)])
        let observer = scheduler.start { source.asObservable().startWith(1, 2) }
        #expect(observer.events == [.next(200, 1), .next(200, 2), .next(220, 3), .completed(230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "(12)-3|")
    }

    @Test("the prefix comes before a synchronous source; chained startWith prepends")
    func chained() {
        var values: [Int] = []
        _ = Observable.of(3, 4).startWith(2).startWith(0, 1).subscribe(onNext: { values.append($0) })
        #expect(values == [0, 1, 2, 3, 4])
    }

    @Test("an error from the source follows the prefix")
    func error() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.error(210, TestError(2))] as [Recorded<Event<Int>>])
        let observer = scheduler.start { source.asObservable().startWith(9) }
        #expect(observer.events == [.next(200, 9), .error(210, TestError(2))])
        #expect(source.subscriptions == [Subscription(200, 210)])
    }

    @Test("disposal stops the source")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(260, 5)])
        let observer = scheduler.start(disposed: 250) { source.asObservable().startWith(1) }
        #expect(observer.events == [.next(200, 1)])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }
}
