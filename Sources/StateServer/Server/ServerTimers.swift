import NIOCore

/// The clock of the server's own timers: a client's idle limits and a slow consumer's grace.
///
/// evflowd uses the event loop's (`EventLoopTimers`); tests pass one they advance by hand, so a
/// check that a limit is re-armed, or that shutdown does not wait for a grace, depends on the
/// order of events and not on how fast the host runs.
protocol ServerTimers: Sendable {
    /// Runs `task` on `loop` once `delay` has passed, unless the returned timer is cancelled
    /// first (cancelled on `loop`, it never runs).
    func schedule(in delay: TimeAmount, on loop: EventLoop, _ task: @escaping @Sendable () -> Void) -> ServerTimer
}

/// A timer scheduled by `ServerTimers`; `cancel()` on its event loop guarantees it does not run.
struct ServerTimer: Sendable {
    let cancel: @Sendable () -> Void
}

/// The event loop's own timers (NIO's `scheduleTask`).
struct EventLoopTimers: ServerTimers {
    func schedule(in delay: TimeAmount, on loop: EventLoop, _ task: @escaping @Sendable () -> Void) -> ServerTimer {
        let scheduled = loop.scheduleTask(in: delay, task)
        return ServerTimer { scheduled.cancel() }
    }
}
