import Reactive

/// A virtual-time scheduler for marble tests, counting time in ticks.
///
/// One tick is `tick` of scheduler time (1 ms by default), so `throttle(.milliseconds(25))`
/// spans 25 ticks. `start()` follows RxSwift's convention: create the sequence at 100,
/// subscribe at 200, dispose at 1000.
public final class TestScheduler: VirtualTimeScheduler, @unchecked Sendable {
    /// Scheduler time per tick, in nanoseconds.
    public let tickNanoseconds: Int64

    /// Creates a scheduler at tick `initialClock`.
    public init(initialClock: TestTime = 0, tick: RxTimeInterval = .milliseconds(1)) {
        precondition(tick.nanoseconds > 0)
        tickNanoseconds = tick.nanoseconds
        super.init(initialClock: Int64(initialClock) * tick.nanoseconds)
    }

    /// The clock in ticks (rounded down).
    public var clockTicks: TestTime { TestTime(now / tickNanoseconds) }

    /// Converts ticks to scheduler time.
    public func nanoseconds(_ ticks: TestTime) -> Int64 { Int64(ticks) * tickNanoseconds }

    /// Runs `action` at tick `time`.
    @discardableResult
    public func scheduleAt(_ time: TestTime, action: @escaping () -> Void) -> Disposable {
        scheduleAbsolute(nanoseconds(time), action)
    }

    /// Runs everything due up to tick `time`.
    public func advanceTo(_ time: TestTime) {
        advance(to: nanoseconds(time))
    }

    /// Runs all scheduled work.
    public func start() {
        run()
    }

    /// A hot observable that sends `events` at their absolute times, whoever listens.
    public func createHotObservable<Element>(_ events: [Recorded<Event<Element>>]) -> TestableObservable<Element> {
        HotObservable(scheduler: self, events: events)
    }

    /// A cold observable that sends `events` at their times relative to each subscription.
    public func createColdObservable<Element>(_ events: [Recorded<Event<Element>>]) -> TestableObservable<Element> {
        ColdObservable(scheduler: self, events: events)
    }

    /// An observer that records every event with its time.
    public func createObserver<Element>(_ type: Element.Type) -> TestableObserver<Element> {
        TestableObserver(scheduler: self)
    }

    /// Creates the sequence at `created`, subscribes at `subscribed`, disposes at `disposed`,
    /// runs the scheduler and returns what was observed.
    public func start<Element>(created: TestTime = 100, subscribed: TestTime = 200, disposed: TestTime = 1000,
                               _ create: @escaping () -> Observable<Element>) -> TestableObserver<Element> {
        var source: Observable<Element>?
        var subscription: Disposable?
        let observer = createObserver(Element.self)
        scheduleAt(created) { source = create() }
        scheduleAt(subscribed) { subscription = source!.subscribe(observer) }
        scheduleAt(disposed) {
            subscription?.dispose()
            subscription = nil
            source = nil
        }
        start()
        return observer
    }
}

/// An observer that records events with the tick they arrived at.
public final class TestableObserver<Element>: ObserverType, @unchecked Sendable {
    private unowned let scheduler: TestScheduler
    /// Everything received, in order.
    public private(set) var events: [Recorded<Event<Element>>] = []

    init(scheduler: TestScheduler) {
        self.scheduler = scheduler
    }

    /// Records an event.
    public func on(_ event: Event<Element>) {
        events.append(Recorded(time: scheduler.clockTicks, value: event))
    }

    /// The elements received, without times.
    public var elements: [Element] { events.compactMap { $0.value.element } }
}

/// A test observable that records its subscriptions.
public class TestableObservable<Element>: ObservableType, @unchecked Sendable {
    /// The scheduler it runs on.
    public unowned let testScheduler: TestScheduler
    /// The events it was given.
    public let recordedEvents: [Recorded<Event<Element>>]
    /// Every subscription with its start and end ticks.
    public internal(set) var subscriptions: [Subscription] = []

    init(scheduler: TestScheduler, events: [Recorded<Event<Element>>]) {
        testScheduler = scheduler
        recordedEvents = events
    }

    /// Subscribes an observer.
    public func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        fatalError("abstract")
    }

    /// Itself as an `Observable`.
    public func asObservable() -> Observable<Element> {
        Observable.create { [self] in self.subscribe($0) }
    }

    func recordSubscription() -> Int {
        subscriptions.append(Subscription(testScheduler.clockTicks))
        return subscriptions.count - 1
    }

    func recordUnsubscription(_ index: Int) {
        subscriptions[index] = Subscription(subscriptions[index].subscribe, testScheduler.clockTicks)
    }
}

final class HotObservable<Element>: TestableObservable<Element>, @unchecked Sendable {
    private var observers: [(id: Int, observer: AnyObserver<Element>)] = []
    private var nextID = 0

    override init(scheduler: TestScheduler, events: [Recorded<Event<Element>>]) {
        super.init(scheduler: scheduler, events: events)
        for record in events {
            scheduler.scheduleAt(record.time) { [weak self] in
                guard let self else { return }
                for (_, observer) in self.observers { observer.on(record.value) }
            }
        }
    }

    override func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        let id = nextID
        nextID += 1
        observers.append((id, observer))
        let index = recordSubscription()
        return Disposables.create { [weak self] in
            guard let self else { return }
            self.observers.removeAll { $0.id == id }
            self.recordUnsubscription(index)
        }
    }
}

final class ColdObservable<Element>: TestableObservable<Element>, @unchecked Sendable {
    override func subscribe(_ observer: AnyObserver<Element>) -> Disposable {
        let index = recordSubscription()
        let scheduled = CompositeDisposable()
        for record in recordedEvents {
            scheduled.insert(testScheduler.scheduleAt(testScheduler.clockTicks + record.time) {
                observer.on(record.value)
            })
        }
        return Disposables.create { [weak self] in
            scheduled.dispose()
            self?.recordUnsubscription(index)
        }
    }
}
