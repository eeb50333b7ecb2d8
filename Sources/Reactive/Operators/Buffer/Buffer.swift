extension ObservableType {
    /// Collects elements into arrays, emitted every `timeSpan` or as soon as `count` elements
    /// are collected, whichever comes first.
    ///
    /// - Element: an array of the elements collected in the current window. A window ends
    ///   after `timeSpan` — then the array is emitted even when it is empty, like RxSwift —
    ///   or when it holds `count` elements; a count-triggered emission restarts the timer, so
    ///   the next window is a full `timeSpan` long.
    /// - Completion: the current array is emitted (even when empty, like RxSwift), then
    ///   completion.
    /// - Error: passed on at once; the collected elements are dropped. A `count` below 1
    ///   fails at once with `RxError.argumentOutOfRange`.
    /// - Disposal: disposes the source and invalidates the timer; collected elements are
    ///   dropped and a tick in flight does nothing (generation check).
    /// - Scheduler: timer emissions run on `scheduler`; one reusable timer slot per
    ///   subscription, armed at subscription.
    @inlinable
    public func buffer(timeSpan: RxTimeInterval, count: Int, scheduler: SchedulerType) -> Observable<[Element]> {
        let source = self
        return Observable { observer in
            guard count >= 1 else {
                observer.on(.error(RxError.argumentOutOfRange))
                return Disposables.create()
            }
            let sink = BufferSink(downstream: observer, timeSpan: timeSpan.nanoseconds, count: count,
                                  scheduler: scheduler)
            sink.start()
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

/// Runs `BufferState` behind a `SerialGate`: source events and timer ticks may arrive on
/// different threads.
@usableFromInline
final class BufferSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case event(Event<Element>)
        case tick(UInt64)
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let downstream: AnyObserver<[Element]>
    @usableFromInline let scheduler: SchedulerType
    // Touched only inside the gate (and in start(), before anything can race).
    @usableFromInline var state: BufferState<Element>
    @usableFromInline var timer: SchedulerTimer?
    @usableFromInline var deadline: Int64 = 0

    @inlinable
    init(downstream: AnyObserver<[Element]>, timeSpan: Int64, count: Int, scheduler: SchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        self.state = BufferState(timeSpan: timeSpan, count: count)
        super.init()
    }

    @inlinable
    func start() {
        let timer = scheduler.makeTimer { [weak self] token in
            guard let self else { return }
            self.gate.send(.tick(token)) { self.handle($0) }
        }
        self.timer = timer
        deadline = scheduler.now + state.timeSpan
        timer.arm(at: deadline, token: state.generation)
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
        let action: BufferState<Element>.Action
        switch message {
        case .event(.next(let element)): action = state.onNext(element, now: scheduler.now)
        case .event(.completed): action = state.onCompleted()
        case .event(.error(let error)): action = state.onError(error)
        case .tick(let token): action = state.onTick(token, deadline: deadline)
        case .dispose:
            timer?.invalidate()
            timer = nil
            return
        }
        if isDisposed { return }
        switch action {
        case .none:
            break
        case .emit(let array, let next, let token):
            deadline = next
            timer?.arm(at: next, token: token)
            downstream.on(.next(array))
        case .emitAndComplete(let array):
            downstream.on(.next(array))
            if isDisposed { return }
            downstream.on(.completed)
            dispose()
        case .error(let error):
            downstream.on(.error(error))
            dispose()
        }
    }
}
