extension ObservableType {
    /// Fails with `RxError.timeout` when no event arrives within `dueTime`.
    ///
    /// - Element: passed through; each element restarts the `dueTime` period. The first
    ///   period starts at subscription.
    /// - Completion: passed through if it arrives within the period.
    /// - Error: the source's error is passed through; when a period ends first, the source is
    ///   disposed and `RxError.timeout` is delivered (on `scheduler`).
    /// - Disposal: disposes the source and invalidates the timer; a tick already in flight
    ///   does nothing (generation check).
    /// - Scheduler: one reusable timer slot per subscription; source events and ticks are
    ///   serialised through a `SerialGate`.
    @inlinable
    public func timeout(_ dueTime: RxTimeInterval, scheduler: SchedulerType) -> Observable<Element> {
        timeout(dueTime, other: Observable<Element>.error(RxError.timeout), scheduler: scheduler)
    }

    /// Switches to `other` when no event arrives within `dueTime`.
    ///
    /// As `timeout(_:scheduler:)`, except that when a period ends the source is disposed and
    /// `other` is subscribed (on `scheduler`); from then on the result is `other`'s events,
    /// with no more timeouts.
    @inlinable
    public func timeout<Other: ObservableType>(_ dueTime: RxTimeInterval, other: Other,
                                               scheduler: SchedulerType) -> Observable<Element>
    where Other.Element == Element {
        let source = self
        return Observable { observer in
            let sink = TimeoutSink(downstream: observer, dueTime: dueTime.nanoseconds, scheduler: scheduler,
                                   other: other.asObservable())
            sink.start()
            sink.sourceSubscription.setDisposable(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

@usableFromInline
final class TimeoutSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case source(Event<Element>)
        case other(Event<Element>)
        case tick(UInt64)
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let dueTime: Int64
    @usableFromInline let scheduler: SchedulerType
    @usableFromInline let other: Observable<Element>
    // Both set once and disposed by disposeResources (or the source one on switching).
    @usableFromInline let sourceSubscription = SingleAssignmentDisposable()
    @usableFromInline let otherSubscription = SingleAssignmentDisposable()
    // Touched only inside the gate (and in start(), before anything can race).
    @usableFromInline var timer: SchedulerTimer?
    @usableFromInline var generation: UInt64 = 1
    @usableFromInline var switched = false
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64, scheduler: SchedulerType, other: Observable<Element>) {
        self.downstream = downstream
        self.dueTime = max(dueTime, 0)
        self.scheduler = scheduler
        self.other = other
        super.init()
    }

    @inlinable
    func start() {
        let timer = scheduler.makeTimer { [weak self] token in
            guard let self else { return }
            self.gate.send(.tick(token)) { self.handle($0) }
        }
        self.timer = timer
        timer.arm(at: scheduler.now + dueTime, token: generation)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        gate.send(.source(event)) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        sourceSubscription.dispose()
        otherSubscription.dispose()
        gate.send(.dispose) { self.handle($0) }
    }

    @inlinable
    func handle(_ message: Message) {
        if case .dispose = message {
            timer?.invalidate()
            timer = nil
            return
        }
        guard !stopped, !isDisposed else { return }
        switch message {
        case .source(let event):
            guard !switched else { return }   // arrived after the switch: dropped
            switch event {
            case .next:
                generation &+= 1
                timer?.arm(at: scheduler.now + dueTime, token: generation)
                downstream.on(event)
            case .error, .completed:
                stopped = true
                downstream.on(event)
                dispose()
            }
        case .other(let event):
            if event.isStopEvent { stopped = true }
            downstream.on(event)
            if event.isStopEvent { dispose() }
        case .tick(let token):
            guard !switched, token == generation else { return }   // stale tick
            switched = true
            timer?.invalidate()
            timer = nil
            sourceSubscription.dispose()
            // Events `other` sends during subscribe are queued by the gate and handled next.
            otherSubscription.setDisposable(other.subscribe(AnyObserver { [weak self] event in
                guard let self else { return }
                self.gate.send(.other(event)) { self.handle($0) }
            }))
        case .dispose:
            break
        }
    }
}
