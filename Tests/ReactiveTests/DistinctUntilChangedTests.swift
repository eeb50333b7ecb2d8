import Reactive
import ReactiveTesting
import Testing

/// The four forms of distinctUntilChanged.
@Suite("distinctUntilChanged", .ownLiveResources)
struct DistinctUntilChangedTests {
    @Test("Equatable form drops repeats of the previous element")
    func equatable() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, 1), .next(220, 1), .next(230, 2), .next(240, 2), .next(250, 1), .completed(260),
        ])
        let observer = MarbleRun.startTerminal(scheduler) { source.asObservable().distinctUntilChanged() }
        #expect(observer.events == [.next(210, 1), .next(230, 2), .next(250, 1), .completed(260)])
        #expect(source.subscriptions == [Subscription(200, 260)])
        #expect(Marbles.render(observer.events, start: 200) == "-1-2-1|")
    }

    @Test("each subscription starts fresh")
    func freshPerSubscription() {
        let values = Observable.of(1, 1, 2).distinctUntilChanged()
        var first: [Int] = []
        var second: [Int] = []
        _ = values.subscribe(onNext: { first.append($0) })
        _ = values.subscribe(onNext: { second.append($0) })
        #expect(first == [1, 2])
        #expect(second == [1, 2])
    }

    @Test("key selector form compares keys")
    func keySelector() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, "apple"), .next(220, "avocado"), .next(230, "banana"), .next(240, "blueberry"),
            .next(250, "apricot"), .completed(260),
        ])
        let observer = scheduler.start { source.asObservable().distinctUntilChanged { $0.first! } }
        #expect(observer.events == [.next(210, "apple"), .next(230, "banana"), .next(250, "apricot"),
                                    .completed(260)])
        #expect(Marbles.render(observer.events, start: 200) { String($0.first!) } == "-a-b-a|")
    }

    @Test("comparer form: hysteresis abs(a-b) <= 2 compares against the last passed-on value")
    func hysteresisDrift() {
        let scheduler = TestScheduler()
        // A slow drift by 1 per step: 10 passes; 11, 12 are within the fuzz of 10; 13 is
        // 3 away from 10 (the last *passed-on* value) and is reported although it is only
        // 1 away from the previous input; then 14, 15 stay within 13's fuzz; 9 jumps.
        let source = scheduler.createHotObservable([
            .next(210, 10), .next(220, 11), .next(230, 12), .next(240, 13), .next(250, 14), .next(260, 15),
            .next(270, 9), .completed(280),
        ])
        let observer = MarbleRun.startTerminal(scheduler) {
            source.asObservable().distinctUntilChanged { a, b in abs(a - b) <= 2 }
        }
        #expect(observer.events == [.next(210, 10), .next(240, 13), .next(270, 9), .completed(280)])
        #expect(source.subscriptions == [Subscription(200, 280)])
        #expect(Marbles.render(observer.events, start: 200) { $0 == 10 ? "a" : $0 == 13 ? "d" : "g" }
                == "-a--d--g|")
    }

    @Test("key + comparer form")
    func keyAndComparer() {
        struct Reading { let code: Int; let value: Int }
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([
            .next(210, Reading(code: 0, value: 100)), .next(220, Reading(code: 0, value: 104)),
            .next(230, Reading(code: 0, value: 106)), .completed(240),
        ])
        let observer = scheduler.start {
            source.asObservable().distinctUntilChanged({ $0.value }, comparer: { abs($0 - $1) <= 5 })
        }
        #expect(observer.events.map(\.time) == [210, 230, 240])
        #expect(observer.elements.map(\.value) == [100, 106])
    }

    @Test("an error is passed through")
    func error() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 1), .error(230, TestError(7))])
        let observer = scheduler.start { source.asObservable().distinctUntilChanged() }
        #expect(observer.events == [.next(210, 1), .error(230, TestError(7))])
    }

    @Test("disposal stops delivery")
    func disposal() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(260, 2)])
        let observer = scheduler.start(disposed: 250) { source.asObservable().distinctUntilChanged() }
        #expect(observer.events == [.next(210, 1)])
        #expect(source.subscriptions == [Subscription(200, 250)])
    }

    @Test("re-entrant emission of an equal value from inside onNext is dropped")
    func reentrant() {
        let subject = PublishSubject<Int>()
        var received: [Int] = []
        let subscription = subject.distinctUntilChanged().subscribe(onNext: { value in
            received.append(value)
            if value == 1 { subject.onNext(1); subject.onNext(2) }
        })
        subject.onNext(1)
        #expect(received == [1, 2])
        subscription.dispose()
    }
}
