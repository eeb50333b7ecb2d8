extension ObservableType {
    /// Delivers every event on `scheduler`, in order.
    ///
    /// - Element, completion, error: delivered on `scheduler` in the order received.
    /// - Hand-off: events go into a lock-free queue; one drain job is scheduled while the
    ///   queue is non-empty, and it delivers everything queued (including events that arrive
    ///   while it runs) before it ends. A burst of N events costs one scheduled job, not N —
    ///   this is what beats one `DispatchQueue.async` per event.
    /// - Disposal: disposes the source; queued events are dropped, and a drain job in flight
    ///   stops before the next event.
    /// - Serial even on a concurrent scheduler: at most one drain job exists at a time.
    @inlinable
    public func observeOn(_ scheduler: ImmediateSchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = ObserveOnSink(downstream: observer, scheduler: scheduler)
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }

    /// `observeOn` under the name newer RxSwift uses.
    @inlinable
    public func observe(on scheduler: ImmediateSchedulerType) -> Observable<Element> {
        observeOn(scheduler)
    }
}

@usableFromInline
final class ObserveOnSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let gate = SerialGate<Event<Element>>()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: ImmediateSchedulerType

    @inlinable
    init(downstream: AnyObserver<Element>, scheduler: ImmediateSchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        super.init()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        if gate.enqueue(event) {
            scheduler.schedule { self.drain() }
        }
    }

    @inlinable
    func drain() {
        gate.drain(missed: 1) { event in
            if isDisposed { return }
            downstream.on(event)
            if event.isStopEvent { dispose() }
        }
    }
}
