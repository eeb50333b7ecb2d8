import Reactive
import ReactiveTesting
import Synchronization
import Testing

/// do(on...) and debug.
@Suite("do / debug", .ownLiveResources, .serialized)
struct DoDebugTests {
    @Test("do: callbacks run in order, before each event is passed on")
    func doOrder() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .next(220, 2), .completed(230)])
        var log: [String] = []
        let observer = scheduler.createObserver(Int.self)
        var subscription: Disposable?
        scheduler.scheduleAt(200) {
            subscription = source.asObservable()
                .do(onNext: { log.append("next \($0) seen=\(observer.events.count)") },
                    onError: { _ in log.append("error") },
                    onCompleted: { log.append("completed seen=\(observer.events.count)") },
                    onSubscribe: { log.append("subscribe subs=\(source.subscriptions.count)") },
                    onSubscribed: { log.append("subscribed subs=\(source.subscriptions.count)") },
                    onDispose: { log.append("dispose @\(scheduler.clockTicks)") })
                .subscribe(onNext: { observer.onNext($0) }, onCompleted: { observer.onCompleted() })
        }
        scheduler.start()
        #expect(log == ["subscribe subs=0", "subscribed subs=1", "next 1 seen=0", "next 2 seen=1",
                        "completed seen=2", "dispose @230"])
        #expect(observer.events == [.next(210, 1), .next(220, 2), .completed(230)])
        #expect(source.subscriptions == [Subscription(200, 230)])
        #expect(Marbles.render(observer.events, start: 200) == "-12|")
        subscription?.dispose()
        #expect(log.filter { $0.hasPrefix("dispose") }.count == 1)
        subscription = nil
    }

    @Test("do: onError runs, onDispose runs after the source is disposed")
    func doError() {
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.error(210, TestError(1))] as [Recorded<Event<Int>>])
        var log: [String] = []
        let observer = scheduler.start(disposed: 300) {
            source.asObservable().do(onError: { log.append("error \($0)") },
                                     onDispose: { log.append("dispose subs=\(source.subscriptions)") })
        }
        #expect(observer.events == [.error(210, TestError(1))])
        // The raw test observer disposes at 300; the create wrapper released the source at 210.
        #expect(log == ["error TestError(1)", "dispose subs=[(200, 210)]"])
    }

    @Test("do: onSubscribed runs after synchronous events")
    func doSynchronous() {
        var log: [String] = []
        _ = Observable.of(1).do(onNext: { log.append("next \($0)") }, onCompleted: { log.append("completed") },
                                onSubscribe: { log.append("subscribe") }, onSubscribed: { log.append("subscribed") })
            .subscribe()
        #expect(log == ["subscribe", "next 1", "completed", "subscribed"])
    }

    @Test("debug: logs subscription, events with virtual time stamps, and disposal")
    func debugLines() {
        let lines = SharedList<String>()
        let previous = DebugOutput.sink
        DebugOutput.sink = { lines.append($0) }
        defer { DebugOutput.sink = previous }
        let scheduler = TestScheduler()
        let source = scheduler.createHotObservable([.next(210, 1), .completed(1250)])
        let observer = MarbleRun.startTerminal(scheduler, disposed: 2000) {
            source.asObservable().debug("keys", scheduler: scheduler)
        }
        #expect(observer.events == [.next(210, 1), .completed(1250)])
        #expect(lines.values == [
            "0.200 keys -> subscribed",
            "0.210 keys -> Event next(1)",
            "1.250 keys -> Event completed",
            "1.250 keys -> isDisposed",
        ])
    }

    @Test("debug: trimOutput shortens long events; the default identifier names the call site")
    func debugTrim() {
        let lines = SharedList<String>()
        let previous = DebugOutput.sink
        DebugOutput.sink = { lines.append($0) }
        defer { DebugOutput.sink = previous }
        let long = String(repeating: "a", count: 30) + String(repeating: "z", count: 30)
        let scheduler = TestScheduler()
        _ = Observable.just(long).debug("t", trimOutput: true, scheduler: scheduler).subscribe()
        _ = Observable.just(long).debug("u", scheduler: scheduler).subscribe()
        _ = Observable.just(1).debug(scheduler: scheduler).subscribe()
        let values = lines.values
        // "next(" + 30 a's + 30 z's + ")" is 66 characters: first 20 and last 20 are kept.
        #expect(values[1] == "0.000 t -> Event next(" + String(repeating: "a", count: 15) + "..."
                + String(repeating: "z", count: 19) + ")")
        #expect(values[5] == "0.000 u -> Event next(\(long))")
        #expect(values[8].hasPrefix("0.000 ReactiveTests/DoDebugTests.swift:"))
        #expect(values[8].hasSuffix("-> subscribed"))
    }

    @Test("debug without a scheduler stamps the monotonic clock and writes through the sink")
    func debugMonotonic() {
        let lines = SharedList<String>()
        let previous = DebugOutput.sink
        DebugOutput.sink = { lines.append($0) }
        defer { DebugOutput.sink = previous }
        let before = monotonicNow() / 1_000_000
        _ = Observable.just(1).debug("m").subscribe()
        let after = monotonicNow() / 1_000_000
        let first = lines.values.first ?? ""
        let stamp = first.split(separator: " ").first.map(String.init) ?? ""
        let parts = stamp.split(separator: ".")
        let ms = (Int64(parts.first ?? "") ?? -1) * 1000 + (Int64(parts.last ?? "") ?? -1)
        #expect(parts.count == 2 && parts[1].count == 3)
        #expect(ms >= before && ms <= after)
        #expect(lines.values.count == 4)
    }
}
