import Synchronization

extension Observable {
    /// One element, then completion — delivered synchronously during `subscribe`.
    @inlinable
    public static func just(_ element: Element) -> Observable<Element> {
        Observable { observer in
            observer.on(.next(element))
            observer.on(.completed)
            return Disposables.create()
        }
    }

    /// The elements of `sequence` in order, then completion — synchronously during
    /// `subscribe` (a synchronous source cannot be interrupted by disposal: use
    /// `subscribeOn` or `take` downstream if that matters).
    @inlinable
    public static func from<S: Sequence>(_ sequence: S) -> Observable<Element> where S.Element == Element {
        Observable { observer in
            for element in sequence { observer.on(.next(element)) }
            observer.on(.completed)
            return Disposables.create()
        }
    }

    /// The given elements in order, then completion.
    @inlinable
    public static func of(_ elements: Element...) -> Observable<Element> {
        from(elements)
    }

    /// Completion and nothing else.
    @inlinable
    public static func empty() -> Observable<Element> {
        Observable { observer in
            observer.on(.completed)
            return Disposables.create()
        }
    }

    /// No event ever.
    @inlinable
    public static func never() -> Observable<Element> {
        Observable { _ in Disposables.create() }
    }

    /// The error and nothing else.
    @inlinable
    public static func error(_ error: any Error) -> Observable<Element> {
        Observable { observer in
            observer.on(.error(error))
            return Disposables.create()
        }
    }

    /// Calls `factory` for every subscription and subscribes to what it returns; a thrown
    /// error becomes the sequence's error.
    @inlinable
    public static func deferred(_ factory: @escaping () throws -> Observable<Element>) -> Observable<Element> {
        Observable { observer in
            do {
                return try factory().subscribe(observer)
            } catch {
                observer.on(.error(error))
                return Disposables.create()
            }
        }
    }
}

extension Observable where Element: FixedWidthInteger {
    /// Emits 0 after `dueTime`, then (if `period` is given) 1, 2, ... every `period`;
    /// completes after the single element when there is no period.
    ///
    /// Uses one reusable scheduler timer per subscription; disposal invalidates it and a fire
    /// already in flight does nothing.
    public static func timer(_ dueTime: RxTimeInterval, period: RxTimeInterval? = nil,
                             scheduler: SchedulerType) -> Observable<Element> {
        Observable { observer in
            let sink = TimerSink<Element>(observer: observer, period: period, scheduler: scheduler)
            sink.start(after: dueTime)
            return sink
        }
    }

    /// Emits 0, 1, 2, ... every `period`, the first after one period.
    public static func interval(_ period: RxTimeInterval, scheduler: SchedulerType) -> Observable<Element> {
        timer(period, period: period, scheduler: scheduler)
    }
}

final class TimerSink<Element: FixedWidthInteger>: Cancelable, @unchecked Sendable {
    /// Counts this object in `LiveResources` until it is destroyed.
    private let live = LiveResources.Token()
    private let observer: AnyObserver<Element>
    private let period: RxTimeInterval?
    private let scheduler: SchedulerType
    private let disposed = Atomic<Bool>(false)
    // Touched only from timer fires, which a scheduler timer delivers serially.
    private var count: Element = 0
    private var deadline: Int64 = 0
    private var timer: SchedulerTimer?

    init(observer: AnyObserver<Element>, period: RxTimeInterval?, scheduler: SchedulerType) {
        self.observer = observer
        self.period = period
        self.scheduler = scheduler
    }

    var isDisposed: Bool { disposed.load(ordering: .acquiring) }

    func start(after dueTime: RxTimeInterval) {
        let timer = scheduler.makeTimer { [weak self] _ in self?.fire() }
        self.timer = timer
        deadline = scheduler.now + dueTime.nanoseconds
        timer.arm(at: deadline, token: 1)
        // A dispose that raced with start() must still stop the timer.
        if disposed.load(ordering: .acquiring) { timer.invalidate() }
    }

    private func fire() {
        guard !disposed.load(ordering: .acquiring) else { return }
        let value = count
        count &+= 1
        observer.on(.next(value))
        if let period {
            guard !disposed.load(ordering: .acquiring) else { return }
            // Fixed rate: the next deadline follows the previous one, not the fire time.
            deadline += max(period.nanoseconds, 1)
            timer?.arm(at: deadline, token: UInt64(count) &+ 1)
        } else {
            observer.on(.completed)
            dispose()
        }
    }

    func dispose() {
        if disposed.exchange(true, ordering: .acquiringAndReleasing) { return }
        timer?.invalidate()
    }
}
