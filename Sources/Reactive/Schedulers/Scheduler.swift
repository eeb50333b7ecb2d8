#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A span of scheduler time in nanoseconds (`.milliseconds(25)`, `.seconds(1)`).
@frozen
public struct RxTimeInterval: Hashable, Comparable, Sendable, CustomStringConvertible {
    /// The span in nanoseconds.
    public var nanoseconds: Int64

    /// Creates a span from nanoseconds.
    @inlinable public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

    /// `n` seconds.
    @inlinable public static func seconds(_ n: Int) -> RxTimeInterval { .init(nanoseconds: Int64(n) * 1_000_000_000) }
    /// `n` seconds (fractional).
    @inlinable public static func seconds(_ n: Double) -> RxTimeInterval { .init(nanoseconds: Int64(n * 1e9)) }
    /// `n` milliseconds.
    @inlinable public static func milliseconds(_ n: Int) -> RxTimeInterval { .init(nanoseconds: Int64(n) * 1_000_000) }
    /// `n` microseconds.
    @inlinable public static func microseconds(_ n: Int) -> RxTimeInterval { .init(nanoseconds: Int64(n) * 1_000) }
    /// `n` nanoseconds.
    @inlinable public static func nanoseconds(_ n: Int) -> RxTimeInterval { .init(nanoseconds: Int64(n)) }
    /// No time.
    @inlinable public static var zero: RxTimeInterval { .init(nanoseconds: 0) }

    /// A `Duration` in nanoseconds, saturating at `Int64`'s bounds (about ±292 years): a
    /// timeout taken from an option or the environment can be longer than nanoseconds hold,
    /// and its conversion must not trap.
    public init(clamping duration: Duration) {
        let (seconds, attoseconds) = duration.components
        let (whole, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        let (sum, overflow2) = whole.addingReportingOverflow(attoseconds / 1_000_000_000)
        nanoseconds = overflow || overflow2 ? (seconds < 0 ? .min : .max) : sum
    }

    @inlinable public static func < (a: RxTimeInterval, b: RxTimeInterval) -> Bool { a.nanoseconds < b.nanoseconds }

    public var description: String {
        if nanoseconds % 1_000_000_000 == 0 { return "\(nanoseconds / 1_000_000_000)s" }
        if nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000)ms" }
        if nanoseconds % 1_000 == 0 { return "\(nanoseconds / 1_000)µs" }
        return "\(nanoseconds)ns"
    }
}

extension Int64 {
    /// `self + other`, saturating at `Int64`'s bounds: a time plus a span (a due time, a
    /// window's end) that would pass them is "never" (or "always"), not a trap (issue #34:
    /// times near 2⁶³ ns from a recording trapped the schedulers and the filters).
    @inlinable
    public func addingSaturated(_ other: Int64) -> Int64 {
        let (sum, overflow) = addingReportingOverflow(other)
        return overflow ? (other > 0 ? .max : .min) : sum
    }
}

/// Runs work, now or as soon as possible, in its own execution context.
public protocol ImmediateSchedulerType: AnyObject, Sendable {
    /// Runs `action` as soon as possible; disposing before it starts cancels it.
    @discardableResult
    func schedule(_ action: @escaping () -> Void) -> Disposable
}

/// A scheduler with a clock and timers.
///
/// Time is monotonic nanoseconds. Every time-based operator works on any `SchedulerType`:
/// live code uses the dispatch schedulers, tests and replay use `VirtualTimeScheduler`.
public protocol SchedulerType: ImmediateSchedulerType {
    /// The scheduler's clock: monotonic nanoseconds (`CLOCK_MONOTONIC` for the dispatch
    /// schedulers, virtual time for `VirtualTimeScheduler`).
    var now: Int64 { get }

    /// Runs `action` at or after `now + dueTime`; disposing before it starts cancels it.
    @discardableResult
    func schedule(after dueTime: RxTimeInterval, _ action: @escaping () -> Void) -> Disposable

    /// A reusable one-shot timer slot that calls `handler` on this scheduler.
    ///
    /// Operators that re-arm a timer per event (throttle, debounce, timeout) keep one slot for
    /// the subscription's lifetime instead of allocating a scheduled action per event.
    func makeTimer(_ handler: @escaping (_ token: UInt64) -> Void) -> SchedulerTimer
}

/// A reusable one-shot timer from `SchedulerType.makeTimer`.
///
/// `arm(at:token:)` (re)sets the single pending deadline; when it passes, the handler runs
/// once with the token of that arm. A fire that was already under way when the timer was
/// re-armed or disarmed may still arrive with an older token: the owner compares tokens
/// ("generations"), so a stale timer does nothing.
public protocol SchedulerTimer: AnyObject, Sendable {
    /// Sets the deadline (scheduler clock, ns), replacing any pending one.
    func arm(at deadline: Int64, token: UInt64)
    /// Cancels the pending deadline, if any.
    func disarm()
    /// Cancels for good and releases the handler.
    func invalidate()
}

/// The monotonic clock in nanoseconds (`CLOCK_MONOTONIC`, the clock live devices use).
@inlinable
public func monotonicNow() -> Int64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
}

/// Runs every action immediately, on the calling thread.
public final class ImmediateScheduler: ImmediateSchedulerType, @unchecked Sendable {
    /// The shared instance.
    public static let instance = ImmediateScheduler()

    /// Creates a scheduler.
    public init() {}

    /// Runs `action` now.
    @discardableResult
    public func schedule(_ action: @escaping () -> Void) -> Disposable {
        action()
        return Disposables.create()
    }
}
