import Synchronization

/// How a sensor's reads are going: every failed read counted (a read error of any kind, or a
/// value that does not parse), and the sensor marked failed after `failedAfter` in a row — a
/// good read clears the mark. Written by the reader on the input thread, read by `STATE` and
/// `METRICS` on the server's: atomics, no lock.
public final class SensorHealth: Sendable {
    /// Failed reads in a row that mark the sensor failed: 10, one second of a polled sensor's
    /// ticks at the default 10 Hz — long enough that one bad transfer on a busy I²C bus is
    /// not a failure, short enough that a broken sensor shows as one at once.
    public static let failedAfter = 10

    private let errors = Atomic<UInt64>(0)
    private let inARow = Atomic<Int>(0)
    private let lastErrno = Atomic<Int32>(0)

    /// A sensor with no read yet.
    public init() {}

    /// Failed reads since the sensor came.
    public var readErrors: UInt64 { errors.load(ordering: .relaxed) }
    /// Failed reads since the last good one.
    public var consecutiveErrors: Int { inARow.load(ordering: .relaxed) }
    /// Whether the last `failedAfter` reads or more all failed.
    public var failed: Bool { consecutiveErrors >= Self.failedAfter }
    /// The errno of the last failed read (`EINVAL` for a value that did not parse); 0 before any.
    public var lastError: Int32 { lastErrno.load(ordering: .relaxed) }

    /// A read failed with `errno`. Returns whether this one marked the sensor failed.
    @discardableResult
    public func recordError(_ errno: Int32) -> Bool {
        errors.wrappingAdd(1, ordering: .relaxed)
        lastErrno.store(errno, ordering: .relaxed)
        return inARow.wrappingAdd(1, ordering: .relaxed).newValue == Self.failedAfter
    }

    /// A read succeeded: the run of failures (and the failed mark) ends.
    public func recordSuccess() {
        if inARow.load(ordering: .relaxed) != 0 { inARow.store(0, ordering: .relaxed) }
    }
}
