extension ObservableType {
    /// Emits an element only after `dueTime` has passed without another element.
    ///
    /// - Element: each element restarts the quiet period; the last element is emitted when
    ///   `dueTime` passes with no newer one (a value that is "stable for the window").
    /// - Completion: a pending element is emitted at once, then completion.
    /// - Error: passed on at once; a pending element is dropped.
    /// - Disposal: disposes the source and the timer; the pending element is dropped; a
    ///   timer already in flight does nothing (generation check).
    /// - Scheduler: the emission runs on `scheduler`. One reusable timer slot per
    ///   subscription: re-arming per element allocates nothing.
    @inlinable
    public func debounce(_ dueTime: RxTimeInterval, scheduler: SchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = DebounceSink(downstream: observer, dueTime: dueTime.nanoseconds, scheduler: scheduler)
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

/// The debounce decisions, free of threads and timers.
///
/// Public so frame-level filters run exactly the logic the `debounce` operator runs.
public struct DebounceState<Element> {
    /// What the owner must do after an input.
    public enum Action {
        /// Nothing.
        case none
        /// (Re)arm the timer for `deadline` with `token`.
        case arm(deadline: Int64, token: UInt64)
        /// Emit the element now.
        case emit(Element)
        /// Emit (unless nil), then complete.
        case emitAndComplete(Element?)
        /// Pass the error on.
        case error(any Error)
    }

    /// The quiet period in scheduler nanoseconds.
    public let dueTime: Int64
    /// The element waiting for the quiet period to pass.
    public var pending: Element? = nil
    /// Token of the latest arm; a tick with another token is stale.
    public var generation: UInt64 = 0
    /// A stop event has been handled.
    public var stopped = false

    /// Creates the state for a quiet period of `dueTime` nanoseconds.
    @inlinable
    public init(dueTime: Int64) { self.dueTime = max(dueTime, 0) }

    /// An element arrived at `now`.
    @inlinable
    public mutating func onNext(_ element: Element, now: Int64) -> Action {
        if stopped { return .none }
        pending = element
        generation &+= 1
        return .arm(deadline: now + dueTime, token: generation)
    }

    /// The timer armed with `token` fired.
    @inlinable
    public mutating func onTick(_ token: UInt64) -> Action {
        guard !stopped, token == generation, let element = pending else { return .none }
        pending = nil
        return .emit(element)
    }

    /// The source completed.
    @inlinable
    public mutating func onCompleted() -> Action {
        if stopped { return .none }
        stopped = true
        defer { pending = nil }
        return .emitAndComplete(pending)
    }

    /// The source failed.
    @inlinable
    public mutating func onError(_ error: any Error) -> Action {
        if stopped { return .none }
        stopped = true
        pending = nil
        return .error(error)
    }
}

/// Runs `DebounceState` behind a `SerialGate`.
@usableFromInline
final class DebounceSink<Element>: OperatorSink, @unchecked Sendable {
    @usableFromInline
    enum Message {
        case event(Event<Element>)
        case tick(UInt64)
        case dispose
    }

    @usableFromInline let gate = SerialGate<Message>()
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline let scheduler: SchedulerType
    @usableFromInline @exclusivity(unchecked) var state: DebounceState<Element>
    @usableFromInline @exclusivity(unchecked) var timer: SchedulerTimer?

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64, scheduler: SchedulerType) {
        self.downstream = downstream
        self.scheduler = scheduler
        self.state = DebounceState(dueTime: dueTime)
        super.init()
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
        let action: DebounceState<Element>.Action
        switch message {
        case .event(.next(let element)): action = state.onNext(element, now: scheduler.now)
        case .event(.completed): action = state.onCompleted()
        case .event(.error(let error)): action = state.onError(error)
        case .tick(let token): action = state.onTick(token)
        case .dispose:
            timer?.invalidate()
            timer = nil
            return
        }
        if isDisposed { return }
        switch action {
        case .none:
            break
        case .arm(let deadline, let token):
            if timer == nil {
                timer = scheduler.makeTimer { [weak self] token in
                    guard let self else { return }
                    self.gate.send(.tick(token)) { self.handle($0) }
                }
            }
            timer?.arm(at: deadline, token: token)
        case .emit(let element):
            downstream.on(.next(element))
        case .emitAndComplete(let element):
            if let element { downstream.on(.next(element)) }
            downstream.on(.completed)
            dispose()
        case .error(let error):
            downstream.on(.error(error))
            dispose()
        }
    }
}

extension DebounceState: Sendable where Element: Sendable {}
