extension ObservableType {
    /// Fails with `RxError.timeout` when no event arrives within `dueTime`.
    ///
    /// - Element: passed through; each element restarts the `dueTime` period. The first
    ///   period starts at subscription.
    /// - Completion: passed through if it arrives within the period.
    /// - Error: the source's error is passed through; when a period ends first, the source is
    ///   disposed and `RxError.timeout` is delivered (on `scheduler`).
    /// - Disposal: disposes the source and invalidates the timer; a tick already in flight
    ///   does nothing (it finds the subscription disposed).
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
            let sourceSubscription = SingleAssignmentDisposable()
            let otherSubscription = SingleAssignmentDisposable()
            let sink = TimedSink(TimeoutMachine(downstream: observer, dueTime: dueTime.nanoseconds,
                                                other: other.asObservable(), sourceSubscription: sourceSubscription,
                                                otherSubscription: otherSubscription),
                                 scheduler: scheduler)
            // Disposing the sink disposes the source (or, after the switch, other) first.
            sink.setUpstream(Disposables.create(sourceSubscription, otherSubscription))
            sink.start()
            sourceSubscription.setDisposable(source.subscribe(AnyObserver { sink.send(.source($0)) }))
            return sink
        }
    }
}

/// `timeout` as a `TimedMachine`: each source element re-arms the period; the first tick
/// that is still current switches to `other`.
@usableFromInline
struct TimeoutMachine<Element>: TimedMachine {
    @usableFromInline
    enum Input {
        case source(Event<Element>)
        case other(Event<Element>)
    }

    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let dueTime: Int64
    @usableFromInline let other: Observable<Element>
    // Both set once; disposed with the sink (its upstream), the source one also on switching.
    @usableFromInline let sourceSubscription: SingleAssignmentDisposable
    @usableFromInline let otherSubscription: SingleAssignmentDisposable
    @usableFromInline var switched = false

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64, other: Observable<Element>,
         sourceSubscription: SingleAssignmentDisposable, otherSubscription: SingleAssignmentDisposable) {
        self.downstream = downstream
        self.dueTime = max(dueTime, 0)
        self.other = other
        self.sourceSubscription = sourceSubscription
        self.otherSubscription = otherSubscription
    }

    @inlinable
    func start(_ sink: TimedSink<Self>) {
        sink.arm(at: sink.now + dueTime)
    }

    @inlinable
    func on(_ input: Input, _ sink: TimedSink<Self>) {
        switch input {
        case .source(let event):
            guard !switched else { return }   // arrived after the switch: dropped
            switch event {
            case .next:
                sink.arm(at: sink.now + dueTime)
                downstream.on(event)
            case .error, .completed:
                sink.stop(downstream, event)
            }
        case .other(let event):
            if event.isStopEvent { sink.stop(downstream, event) } else { downstream.on(event) }
        }
    }

    @inlinable
    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        guard !switched, sink.isCurrent(token) else { return }   // stale tick
        switched = true
        sink.invalidateTimer()
        sourceSubscription.dispose()
        // Events `other` sends during subscribe are queued by the gate and handled next.
        otherSubscription.setDisposable(other.subscribe(AnyObserver { [weak sink] event in
            sink?.send(.other(event))
        }))
    }
}
