extension ObservableType {
    /// Emits an element only after `dueTime` has passed without another element.
    ///
    /// - Element: each element restarts the quiet period; the last element is emitted when
    ///   `dueTime` passes with no newer one (a value that is "stable for the window").
    /// - Completion: a pending element is emitted at once, then completion.
    /// - Error: passed on at once; a pending element is dropped.
    /// - Disposal: disposes the source and the timer; the pending element is dropped; a
    ///   timer already in flight does nothing (it finds the subscription disposed).
    /// - Scheduler: the emission runs on `scheduler`. One reusable timer slot per
    ///   subscription: re-arming per element allocates nothing.
    @inlinable
    public func debounce(_ dueTime: RxTimeInterval, scheduler: SchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = TimedSink(DebounceMachine(downstream: observer, dueTime: dueTime.nanoseconds),
                                 scheduler: scheduler)
            sink.setUpstream(source.subscribe(AnyObserver { sink.send($0) }))
            return sink
        }
    }
}

/// The debounce decisions, free of threads and timers.
///
/// Public so frame-level filters run exactly the logic the `debounce` operator runs. The
/// state changes only through its operations (`onNext`, `onTick`, `onCompleted`,
/// `onError`); its fields are read-only outside the type.
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
    @usableFromInline var _pending: Element? = nil
    @usableFromInline var _generation: UInt64 = 0
    @usableFromInline var _stopped = false

    /// The element waiting for the quiet period to pass.
    @inlinable public var pending: Element? { _pending }
    /// Token of the latest arm; a tick with another token is stale.
    @inlinable public var generation: UInt64 { _generation }
    /// A stop event has been handled.
    @inlinable public var stopped: Bool { _stopped }

    /// Creates the state for a quiet period of `dueTime` nanoseconds.
    @inlinable
    public init(dueTime: Int64) { self.dueTime = max(dueTime, 0) }

    /// An element arrived at `now`.
    @inlinable
    public mutating func onNext(_ element: Element, now: Int64) -> Action {
        if _stopped { return .none }
        _pending = element
        _generation &+= 1
        // Saturating (issue #34): a switch's debounce runs on event times, near 2⁶³ ns in a
        // hostile recording.
        return .arm(deadline: now.addingSaturated(dueTime), token: _generation)
    }

    /// The timer armed with `token` fired.
    @inlinable
    public mutating func onTick(_ token: UInt64) -> Action {
        guard !_stopped, token == _generation, let element = _pending else { return .none }
        _pending = nil
        return .emit(element)
    }

    /// The source completed.
    @inlinable
    public mutating func onCompleted() -> Action {
        if _stopped { return .none }
        _stopped = true
        defer { _pending = nil }
        return .emitAndComplete(_pending)
    }

    /// The source failed.
    @inlinable
    public mutating func onError(_ error: any Error) -> Action {
        if _stopped { return .none }
        _stopped = true
        _pending = nil
        return .error(error)
    }
}

extension DebounceState: Sendable where Element: Sendable {}

extension DebounceState: TimedOperatorState {}

/// `debounce` as a `TimedMachine`: runs `DebounceState` and performs its actions.
@usableFromInline
struct DebounceMachine<Element>: TimedOperatorMachine {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline var state: DebounceState<Element>

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64) {
        self.downstream = downstream
        self.state = DebounceState(dueTime: dueTime)
    }

    @inlinable
    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        let action = state.onTick(token)
        perform(action, sink)
    }

    @inlinable @inline(__always)
    func perform(_ action: DebounceState<Element>.Action, _ sink: TimedSink<Self>) {
        switch action {
        case .none:
            break
        case .arm(let deadline, let token):
            sink.arm(at: deadline, token: token)
        case .emit(let element):
            downstream.on(.next(element))
        case .emitAndComplete(let element):
            if let element { downstream.on(.next(element)) }
            sink.stop(downstream, .completed)
        case .error(let error):
            sink.stop(downstream, .error(error))
        }
    }
}
