extension ObservableType {
    /// Passes elements for `duration` after subscription, then completes and disposes the
    /// source.
    ///
    /// - Element: every element that arrives before `now + duration` (scheduler clock).
    /// - Completion: when the duration ends (delivered on `scheduler`), or earlier with the
    ///   source's completion.
    /// - Error: passed through while the duration runs.
    /// - Disposal: disposes the source and invalidates the timer.
    /// - Scheduler: one timer slot on `scheduler`; source events and the timer tick are
    ///   serialised through a `SerialGate`.
    @inlinable
    public func take(for duration: RxTimeInterval, scheduler: SchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = TakeForSink(downstream: observer, scheduler: scheduler)
            sink.start(deadline: scheduler.now + max(duration.nanoseconds, 0))
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

@usableFromInline
final class TakeForSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case event(Event<Element>)
        case tick
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: SchedulerType
    // Touched only inside the gate (and in start(), before anything can race).
    @usableFromInline var timer: SchedulerTimer?
    @usableFromInline var stopped = false

    @inlinable
    init(downstream: AnyObserver<Element>, scheduler: SchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        super.init()
    }

    @inlinable
    func start(deadline: Int64) {
        let timer = scheduler.makeTimer { [weak self] _ in
            guard let self else { return }
            self.gate.send(.tick) { self.handle($0) }
        }
        self.timer = timer
        timer.arm(at: deadline, token: 1)
    }

    @inlinable
    func on(_ event: Event<Element>) {
        gate.send(.event(event)) { self.handle($0) }
    }

    @usableFromInline
    override func disposeResources() {
        gate.send(.dispose) { self.handle($0) }
    }

    @inlinable
    func handle(_ message: Message) {
        switch message {
        case .dispose:
            timer?.invalidate()
            timer = nil
            return
        case .tick:
            guard !stopped, !isDisposed else { return }
            stopped = true
            downstream.on(.completed)
            dispose()
        case .event(let event):
            guard !stopped, !isDisposed else { return }
            if event.isStopEvent { stopped = true }
            downstream.on(event)
            if event.isStopEvent { dispose() }
        }
    }
}
