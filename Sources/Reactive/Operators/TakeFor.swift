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
            let sink = TimedSink(TakeForMachine(downstream: observer, duration: max(duration.nanoseconds, 0)),
                                 scheduler: scheduler)
            sink.start()
            sink.setUpstream(source.subscribe(AnyObserver { sink.send($0) }))
            return sink
        }
    }
}

/// `take(for:)` as a `TimedMachine`: passes events until the one tick, armed at subscription.
@usableFromInline
struct TakeForMachine<Element>: TimedMachine {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let duration: Int64

    @inlinable
    init(downstream: AnyObserver<Element>, duration: Int64) {
        self.downstream = downstream
        self.duration = duration
    }

    @inlinable
    func start(_ sink: TimedSink<Self>) {
        sink.arm(at: sink.now + duration)
    }

    @inlinable
    func on(_ event: Event<Element>, _ sink: TimedSink<Self>) {
        downstream.on(event)
        if event.isStopEvent { sink.dispose() }
    }

    @inlinable
    func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        sink.stop(downstream, .completed)
    }
}
