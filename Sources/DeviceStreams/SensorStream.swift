import InputModel
import Reactive

/// One IIO sensor's lifetime as a value: its description, its samples, and its removal — the
/// sensors' counterpart of `DeviceStream`.
///
/// It lives in InputModel, beside `DeviceStream`, rather than in the `Sensors` module that
/// reads the hardware, so that a replay source (Recording) and the hub (Pipeline) make and
/// consume sensor streams without linking libudev — the same reason `DeviceStream` is here.
///
/// `samples` completes when the sensor goes away. Reading starts when it is subscribed and
/// stops when that subscription is disposed: a sensor nobody consumes is not read at all
/// (its buffer stays disabled, nothing polls it). Each source says how often and when it may
/// be subscribed (a live sensor: any number of times, one subscription at a time).
public struct SensorStream: Sendable {
    /// The sensor, as identified when the stream began.
    public let info: SensorInfo
    /// Its samples, one value per channel of `info.channels`, in physical units.
    public let samples: Observable<SensorSample>
    /// Completes when the sensor goes away, whether or not `samples` is subscribed: a
    /// consumer learns of the removal of a sensor nobody reads without starting to read it
    /// (the hub keeps a sensor's session by it). Subscribing it costs nothing and may be done
    /// any number of times; a subscription after the removal completes at once.
    public let removal: Observable<Never>
    /// How its sample times relate to the scheduler's clock (`.live` but for a replay).
    public let clock: SampleClock
    /// Its failed reads and whether it is failed (a replay's never fail).
    public let health: SensorHealth
    /// Whether `STATE` may read it once while nobody reads it (`SensorHub.stateReadingOnce`):
    /// a live sensor's samples are read now; a replay's are its recording's, in time, so
    /// subscribing them for a moment would be no reading.
    public let readableOnce: Bool

    /// A stream of `info` with `samples`, ending with `removal`, whose sample times follow `clock`.
    public init(info: SensorInfo, samples: Observable<SensorSample>, removal: Observable<Never>,
                clock: SampleClock = .live, health: SensorHealth = SensorHealth(), readableOnce: Bool = false) {
        self.info = info
        self.samples = samples
        self.removal = removal
        self.clock = clock
        self.health = health
        self.readableOnce = readableOnce
    }
}

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
