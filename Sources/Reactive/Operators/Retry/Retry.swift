extension ObservableType {
    /// Resubscribes to this sequence after every error, forever.
    ///
    /// - Element: the elements of every attempt.
    /// - Completion: when an attempt completes.
    /// - Error: never passed on (a source that always fails retries forever).
    /// - Disposal: disposes the current attempt. A failed attempt's subscription is
    ///   disposed at its error, before the next attempt subscribes.
    /// - Scheduler: none; the next attempt subscribes on the thread that delivered the error.
    ///   Resubscription goes through the sink's gate, so a source that fails during
    ///   `subscribe` loops instead of recursing.
    @inlinable
    public func retry() -> Observable<Element> {
        retry(Int.max)
    }

    /// Subscribes to this sequence up to `maxAttemptCount` times in all (the first attempt
    /// counts, as in RxSwift): after the last attempt's error, that error is passed on.
    ///
    /// `retry(1)` never resubscribes; values below 1 are treated as 1. Element / Completion /
    /// Disposal / Scheduler: as `retry()`.
    @inlinable
    public func retry(_ maxAttemptCount: Int) -> Observable<Element> {
        let source = self.asObservable()
        return Observable { observer in
            let sink = RetrySink<Element, Never>(downstream: observer, source: source,
                                                 attempts: max(maxAttemptCount, 1))
            sink.start()
            return sink
        }
    }

    /// Resubscribes after an error when the trigger sequence says so: the backoff tool.
    ///
    /// `notificationHandler` is called once per subscription with the sequence of this
    /// sequence's errors and returns the trigger sequence, which is subscribed before the
    /// first attempt.
    /// - Element: the elements of every attempt.
    /// - Retry: each trigger element subscribes a new attempt (an attempt still running is
    ///   disposed first). A failed attempt's subscription is disposed at its error.
    /// - Completion: when an attempt completes, or when the trigger completes.
    /// - Error: when the trigger errors (with its error); source errors themselves only go to
    ///   the trigger's input.
    /// - Disposal: disposes the current attempt and the trigger subscription.
    /// - Scheduler: none of its own; the trigger decides when (e.g. with `timer`).
    @inlinable
    public func retry<Trigger: ObservableType>(
        when notificationHandler: @escaping (Observable<any Error>) -> Trigger
    ) -> Observable<Element> {
        let source = self.asObservable()
        return Observable { observer in
            let sink = RetrySink<Element, Trigger.Element>(downstream: observer, source: source, attempts: .max)
            let errors = PublishSubject<any Error>()
            sink.errors = errors
            let trigger = notificationHandler(errors.asObservable())
            sink.triggerSubscription.setDisposable(trigger.subscribe(AnyObserver { sink.send(.trigger($0)) }))
            sink.start()
            return sink
        }
    }
}

/// retry(n) and retry(when:): one attempt at a time; attempts, their events and the
/// trigger's events are serialised through a `SerialGate`, which doubles as the trampoline
/// that turns "fail during subscribe, resubscribe" into a loop.
@usableFromInline
final class RetrySink<Element, Trigger>: DownstreamSink<Element>, GatedSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case subscribe
        case source(UInt64, Event<Element>)
        case trigger(Event<Trigger>)
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let source: Observable<Element>
    @usableFromInline let current = SerialDisposable()
    @usableFromInline let triggerSubscription = SingleAssignmentDisposable()
    /// The errors subject of `retry(when:)`; nil for `retry(n)`. Set before `start()`.
    @usableFromInline var errors: PublishSubject<any Error>?
    // Touched only inside the gate.
    @usableFromInline var attemptsLeft: Int
    @usableFromInline var generation: UInt64 = 0

    @inlinable
    init(downstream: AnyObserver<Element>, source: Observable<Element>, attempts: Int) {
        self.source = source
        self.attemptsLeft = attempts
        super.init(downstream: downstream)
    }

    @inlinable
    func start() {
        send(.subscribe)
    }

    @usableFromInline
    override func disposeResources() {
        current.dispose()
        triggerSubscription.dispose()
    }

    @inlinable
    func handle(_ message: Message) {
        if stopped || isDisposed { return }
        switch message {
        case .subscribe, .trigger(.next):
            generation &+= 1
            let id = generation
            let holder = SingleAssignmentDisposable()
            current.disposable = holder
            holder.setDisposable(source.subscribe(AnyObserver { event in
                self.gate.send(.source(id, event)) { self.handle($0) }
            }))
        case .trigger(.error(let error)):
            stop(.error(error))
        case .trigger(.completed):
            stop(.completed)
        case .source(let id, let event):
            guard id == generation else { return }
            switch event {
            case .next:
                downstream.on(event)
            case .completed:
                stop(.completed)
            case .error(let error):
                generation &+= 1   // nothing more from this attempt
                current.disposable = Disposables.create()
                if let errors {
                    errors.on(.next(error))
                } else {
                    if attemptsLeft != .max { attemptsLeft -= 1 }
                    if attemptsLeft > 0 {
                        send(.subscribe)   // queued: runs after this turn, no recursion
                    } else {
                        stop(.error(error))
                    }
                }
            }
        }
    }
}
