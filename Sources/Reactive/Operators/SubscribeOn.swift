extension ObservableType {
    /// Subscribes to the source, and later disposes that subscription, on `scheduler`.
    ///
    /// - Subscription: `subscribe` returns at once; the source's `subscribe` runs in a job on
    ///   `scheduler`. Disposing before the job has run cancels it (the source is never
    ///   subscribed).
    /// - Element, completion, error: passed through on whatever thread the source delivers
    ///   them (use `observeOn` to move delivery).
    /// - Disposal: the source subscription is disposed in a job on `scheduler`, also after a
    ///   stop event. Events are no longer passed on once `dispose()` was called.
    @inlinable
    public func subscribeOn(_ scheduler: ImmediateSchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = SubscribeOnSink(downstream: observer, scheduler: scheduler)
            // The job keeps the sink alive until it has run, as the source will afterwards.
            sink.job.setDisposable(scheduler.schedule {
                guard !sink.isDisposed else { return }
                sink.subscription.setDisposable(source.subscribe(AnyObserver { sink.on($0) }))
            })
            return sink
        }
    }

    /// `subscribeOn` under the name newer RxSwift uses.
    @inlinable
    public func subscribe(on scheduler: ImmediateSchedulerType) -> Observable<Element> {
        subscribeOn(scheduler)
    }
}

@usableFromInline
final class SubscribeOnSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: ImmediateSchedulerType
    /// The scheduled subscribe job.
    @usableFromInline let job = SingleAssignmentDisposable()
    /// The source subscription, set by the job.
    @usableFromInline let subscription = SingleAssignmentDisposable()

    @inlinable
    init(downstream: AnyObserver<Element>, scheduler: ImmediateSchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        super.init()
    }

    @inlinable
    func on(_ event: Event<Element>) {
        // The source delivers serially; the disposed check stops delivery after dispose().
        if isDisposed { return }
        downstream.on(event)
        if event.isStopEvent { dispose() }
    }

    @usableFromInline
    override func disposeResources() {
        job.dispose()
        let subscription = self.subscription
        // If the job has not set it yet, the job sets it later on the scheduler, and
        // SingleAssignmentDisposable disposes it there, at once.
        scheduler.schedule { subscription.dispose() }
    }
}
