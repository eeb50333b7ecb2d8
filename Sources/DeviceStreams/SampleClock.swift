// SampleClock: shared by DeviceStream and SensorStream, so in a file of its own (issue #35).

/// When a stream's samples (a sensor's samples, a device's frames: `SensorStream.clock`,
/// `DeviceStream.clock`) arrive on the scheduler's clock, given their sample times: what a
/// timed filter needs to know when a deadline in sample time may fire without overtaking a
/// sample recorded before it.
///
/// Live, a sample's time is the scheduler's clock (CLOCK_MONOTONIC) when it was read: the two
/// are the same (`.live`). A replay at `speed` delivers a sample of time `origin + t` at
/// `origin + t / speed`: slower than recorded the scheduler runs ahead of the samples, so a
/// timer armed at a deadline's sample time would fire before samples recorded earlier than
/// the deadline had come.
public struct SampleClock: Hashable, Sendable {
    /// The scheduler time of a replay's start.
    public var origin: Int64
    /// The sample time of a replay's start: `origin`, but on a looping device replay's later
    /// passes, whose event times carry on after the previous pass's.
    public var sampleOrigin: Int64
    /// Sample time per scheduler time: 1 live, the replay's speed (may be `.infinity`).
    public var speed: Double

    /// Sample time is the scheduler's time.
    public static let live = SampleClock(origin: 0, speed: 1)

    /// A clock whose sample time `sampleOrigin + t` (`sampleOrigin` is `origin` when nil) is
    /// reached at scheduler time `origin + t / speed`.
    @inlinable
    public init(origin: Int64, speed: Double, sampleOrigin: Int64? = nil) {
        precondition(speed > 0, "speed must be positive")
        self.origin = origin
        self.sampleOrigin = sampleOrigin ?? origin
        self.speed = speed
    }

    /// When a sample recorded `t` after the start (sample time `sampleOrigin + t`) is delivered:
    /// `origin + t / speed` in whole nanoseconds (`origin` at `.infinity`), saturating at
    /// `Int64`'s bounds — a slow pace stretches a long recording beyond them, which must not trap.
    /// Inlinable: a device replay maps every step with it (`ReplaySource.scheduledTime`).
    @inlinable
    public func deliveryTime(recorded t: Int64) -> Int64 {
        if speed.isInfinite { return origin }
        let offset: Int64
        if speed == 1 {
            offset = t
        } else {
            let v = (Double(t) / speed).rounded()
            offset = v >= 0x1p63 ? .max : v < -0x1p63 ? .min : v.isNaN ? 0 : Int64(v)
        }
        let (sum, overflow) = origin.addingReportingOverflow(offset)
        return overflow ? (offset > 0 ? .max : .min) : sum
    }

    /// The scheduler time when sample time `time` is reached: every sample of time ≤ `time`
    /// has been delivered before it. Live (and at speed 1 from the start) that is `time`; otherwise one
    /// nanosecond after a sample of exactly `time` would be delivered, so a timer armed for it
    /// never runs before that sample, whatever order the scheduler gives equal times.
    public func schedulerTime(_ time: Int64) -> Int64 {
        if speed == 1 && sampleOrigin == origin { return time }
        let (t, overflow) = time.subtractingReportingOverflow(sampleOrigin)
        if overflow { return time > sampleOrigin ? .max : .min }
        let due = deliveryTime(recorded: t)
        return due == .max ? .max : due + 1
    }
}
