extension ObservableType {
    /// Passes the first element at once, then at most one element per `dueTime` window.
    ///
    /// - Element: an element arriving while no window is open is emitted immediately and
    ///   opens a window `[t, t + dueTime)`. Elements inside the window are dropped, except
    ///   that with `latest: true` the last of them is kept and emitted when the window ends,
    ///   which opens the next window. An element arriving exactly at the window's end opens
    ///   a new window (it supersedes a kept one).
    /// - Completion: with nothing kept, passed on at once; with a kept element, that element
    ///   is emitted at the window's end and completion follows it.
    /// - Error: passed on at once; a kept element is dropped.
    /// - Disposal: disposes the source and the timer; a kept element is dropped and a timer
    ///   already in flight does nothing (it finds the subscription disposed).
    /// - Scheduler: window times are read from `scheduler`'s clock and the end-of-window
    ///   emission runs on it. One reusable timer slot per subscription.
    @inlinable
    public func throttle(_ dueTime: RxTimeInterval, latest: Bool = true,
                         scheduler: SchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = TimedSink(ThrottleMachine(downstream: observer, dueTime: dueTime.nanoseconds,
                                                 latest: latest), scheduler: scheduler)
            sink.setUpstream(source.subscribe(AnyObserver { sink.send($0) }))
            return sink
        }
    }
}

/// The throttle decisions, free of threads and timers: each input returns what to do.
///
/// Public so frame-level filters (the noise-filter pipeline) run exactly the logic the
/// `throttle` operator runs, pinned by the same tests. The state changes only through its
/// operations (`onNext`, `onTick`, `onCompleted`, `onError`, `discardKept`); its fields are
/// read-only outside the type.
public struct ThrottleState<Element> {
    /// What the owner must do after an input.
    public enum Action {
        /// Nothing.
        case none
        /// Emit the element now.
        case emit(Element)
        /// Emit (unless nil), then complete.
        case emitAndComplete(Element?)
        /// Pass the error on.
        case error(any Error)
        /// Keep the timer armed for `windowEnd` with `token`.
        case arm(deadline: Int64, token: UInt64)
        /// Emit now; the kept element (if any) is superseded, so disarm.
        case emitAndDisarm(Element)
    }

    /// The window length in scheduler nanoseconds.
    public let dueTime: Int64
    /// Whether the last element inside a window is kept for the window's end.
    public let latest: Bool
    @usableFromInline var _windowEnd: Int64? = nil
    @usableFromInline var _kept: Element? = nil
    @usableFromInline var _completionPending = false
    @usableFromInline var _stopped = false
    @usableFromInline var _generation: UInt64 = 0
    @usableFromInline var _armed = false

    /// End of the open window, or nil when none is open.
    @inlinable public var windowEnd: Int64? { _windowEnd }
    /// The element kept for the window's end.
    @inlinable public var kept: Element? { _kept }
    /// Completion arrived while an element was kept.
    @inlinable public var completionPending: Bool { _completionPending }
    /// A stop event has been handled.
    @inlinable public var stopped: Bool { _stopped }
    /// Token of the armed timer; a tick with another token is stale.
    @inlinable public var generation: UInt64 { _generation }
    /// Whether a timer is armed for the window's end.
    @inlinable public var armed: Bool { _armed }

    /// Creates the state for windows of `dueTime` nanoseconds.
    @inlinable
    public init(dueTime: Int64, latest: Bool) {
        self.dueTime = max(dueTime, 0)
        self.latest = latest
    }

    /// An element arrived at `now`.
    @inlinable
    public mutating func onNext(_ element: Element, now: Int64) -> Action {
        if _stopped { return .none }
        if let end = _windowEnd, now < end {
            guard latest else { return .none }
            _kept = element
            if _armed { return .none }
            _armed = true
            _generation &+= 1
            return .arm(deadline: end, token: _generation)
        }
        _windowEnd = now.addingSaturated(dueTime)   // issue #34: no trap near 2⁶³ ns
        if _kept != nil || _armed {
            _kept = nil
            _armed = false
            _generation &+= 1
            return .emitAndDisarm(element)
        }
        return .emit(element)
    }

    /// The timer armed with `token` fired at `now`.
    @inlinable
    public mutating func onTick(_ token: UInt64, now: Int64) -> Action {
        guard _armed, token == _generation, !_stopped else { return .none }
        _armed = false
        guard let element = _kept else {
            _windowEnd = nil
            return .none
        }
        _kept = nil
        _windowEnd = now.addingSaturated(dueTime)   // issue #34: no trap near 2⁶³ ns
        if _completionPending {
            _stopped = true
            return .emitAndComplete(element)
        }
        return .emit(element)
    }

    /// The source completed.
    @inlinable
    public mutating func onCompleted() -> Action {
        if _stopped { return .none }
        if _kept != nil {
            _completionPending = true
            return .none
        }
        _stopped = true
        return .emitAndComplete(nil)
    }

    /// The source failed.
    @inlinable
    public mutating func onError(_ error: any Error) -> Action {
        if _stopped { return .none }
        _stopped = true
        _kept = nil
        return .error(error)
    }

    /// Drops the kept element, if any, and returns it; the window and its timer stay as
    /// they are (the tick then closes the window without emitting). Not an input of the
    /// `throttle` operator: a frame filter calls it when a newer input makes the kept element
    /// stale (the noise filter's hysteresis: the axis came back to the delivered value).
    @inlinable
    @discardableResult
    public mutating func discardKept() -> Element? {
        defer { _kept = nil }
        return _kept
    }
}

extension ThrottleState: Sendable where Element: Sendable {}

extension ThrottleState: TimedOperatorState {}

/// `throttle` as a `TimedMachine`: runs `ThrottleState` and performs its actions.
@usableFromInline
struct ThrottleMachine<Element>: TimedOperatorMachine {
    @usableFromInline let downstream: AnyObserver<Element>
    @usableFromInline var state: ThrottleState<Element>

    @inlinable
    init(downstream: AnyObserver<Element>, dueTime: Int64, latest: Bool) {
        self.downstream = downstream
        self.state = ThrottleState(dueTime: dueTime, latest: latest)
    }

    @inlinable
    mutating func onTimer(_ token: UInt64, _ sink: TimedSink<Self>) {
        let action = state.onTick(token, now: sink.now)
        perform(action, sink)
    }

    @inlinable @inline(__always)
    func perform(_ action: ThrottleState<Element>.Action, _ sink: TimedSink<Self>) {
        switch action {
        case .none:
            break
        case .emit(let element):
            downstream.on(.next(element))
        case .emitAndDisarm(let element):
            sink.disarm()
            downstream.on(.next(element))
        case .arm(let deadline, let token):
            sink.arm(at: deadline, token: token)
        case .emitAndComplete(let element):
            if let element { downstream.on(.next(element)) }
            sink.stop(downstream, .completed)
        case .error(let error):
            sink.stop(downstream, .error(error))
        }
    }
}
