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
    ///   already in flight does nothing (generation check).
    /// - Scheduler: window times are read from `scheduler`'s clock and the end-of-window
    ///   emission runs on it. One reusable timer slot per subscription.
    @inlinable
    public func throttle(_ dueTime: RxTimeInterval, latest: Bool = true,
                         scheduler: SchedulerType) -> Observable<Element> {
        let source = self
        return Observable { observer in
            let sink = ThrottleSink(downstream: observer, dueTime: dueTime.nanoseconds,
                                    latest: latest, scheduler: scheduler)
            sink.setUpstream(source.subscribe(AnyObserver { sink.on($0) }))
            return sink
        }
    }
}

/// The throttle decisions, free of threads and timers: each input returns what to do.
///
/// Public so frame-level filters (the noise-filter pipeline) run exactly the logic the
/// `throttle` operator runs, pinned by the same tests.
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
    /// End of the open window, or nil when none is open.
    public var windowEnd: Int64? = nil
    /// The element kept for the window's end.
    public var kept: Element? = nil
    /// Completion arrived while an element was kept.
    public var completionPending = false
    /// A stop event has been handled.
    public var stopped = false
    /// Token of the armed timer; a tick with another token is stale.
    public var generation: UInt64 = 0
    /// Whether a timer is armed for the window's end.
    public var armed = false

    /// Creates the state for windows of `dueTime` nanoseconds.
    @inlinable
    public init(dueTime: Int64, latest: Bool) {
        self.dueTime = max(dueTime, 0)
        self.latest = latest
    }

    /// An element arrived at `now`.
    @inlinable
    public mutating func onNext(_ element: Element, now: Int64) -> Action {
        if stopped { return .none }
        if let end = windowEnd, now < end {
            guard latest else { return .none }
            kept = element
            if armed { return .none }
            armed = true
            generation &+= 1
            return .arm(deadline: end, token: generation)
        }
        windowEnd = now + dueTime
        if kept != nil || armed {
            kept = nil
            armed = false
            generation &+= 1
            return .emitAndDisarm(element)
        }
        return .emit(element)
    }

    /// The timer armed with `token` fired at `now`.
    @inlinable
    public mutating func onTick(_ token: UInt64, now: Int64) -> Action {
        guard armed, token == generation, !stopped else { return .none }
        armed = false
        guard let element = kept else {
            windowEnd = nil
            return .none
        }
        kept = nil
        windowEnd = now + dueTime
        if completionPending {
            stopped = true
            return .emitAndComplete(element)
        }
        return .emit(element)
    }

    /// The source completed.
    @inlinable
    public mutating func onCompleted() -> Action {
        if stopped { return .none }
        if kept != nil {
            completionPending = true
            return .none
        }
        stopped = true
        return .emitAndComplete(nil)
    }

    /// The source failed.
    @inlinable
    public mutating func onError(_ error: any Error) -> Action {
        if stopped { return .none }
        stopped = true
        kept = nil
        return .error(error)
    }
}

extension ThrottleState: Sendable where Element: Sendable {}
