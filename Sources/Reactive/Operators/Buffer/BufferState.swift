/// The buffer decisions, free of threads and timers: each input returns what to do.
@usableFromInline
struct BufferState<Element>: TimedOperatorState {
    @usableFromInline
    enum Action {
        case none
        /// Emit the array; the timer is restarted for `deadline` with `token`.
        case emit([Element], deadline: Int64, token: UInt64)
        /// Emit the array (possibly empty), then complete.
        case emitAndComplete([Element])
        case error(any Error)
    }

    @usableFromInline let timeSpan: Int64
    @usableFromInline let count: Int
    @usableFromInline var buffer: [Element] = []
    /// Token of the armed window timer; a tick with another token is stale.
    @usableFromInline var generation: UInt64 = 1
    @usableFromInline var stopped = false

    @inlinable
    init(timeSpan: Int64, count: Int) {
        self.timeSpan = max(timeSpan, 1)
        self.count = count
        buffer.reserveCapacity(Swift.min(count, 64))
    }

    @inlinable
    mutating func onNext(_ element: Element, now: Int64) -> Action {
        if stopped { return .none }
        buffer.append(element)
        guard buffer.count >= count else { return .none }
        // A count-triggered emission starts a new window: the timer restarts from now.
        return emit(deadline: now + timeSpan)
    }

    @inlinable
    mutating func onTick(_ token: UInt64, deadline: Int64) -> Action {
        guard !stopped, token == generation else { return .none }
        // Fixed rate from the previous deadline, so windows do not drift with timer latency.
        return emit(deadline: deadline + timeSpan)
    }

    @inlinable
    mutating func emit(deadline: Int64) -> Action {
        let full = buffer
        buffer = []
        buffer.reserveCapacity(Swift.min(count, 64))
        generation &+= 1
        return .emit(full, deadline: deadline, token: generation)
    }

    @inlinable
    mutating func onCompleted() -> Action {
        if stopped { return .none }
        stopped = true
        defer { buffer = [] }
        return .emitAndComplete(buffer)
    }

    @inlinable
    mutating func onError(_ error: any Error) -> Action {
        if stopped { return .none }
        stopped = true
        buffer = []
        return .error(error)
    }
}
