import DeviceStreams
import InputModel
import Reactive
import Synchronization

// The values the sensor hub (`SensorHub`) hands out, and its small helpers.

/// One sample of a sensor as the hub passes it on: as read, or out of the sensor's filters.
public enum SensorUpdate: Hashable, Sendable {
    /// The sample as the source read it (physical units).
    case raw(SensorSample)
    /// The sample out of the sensor's filter chain, with the device's orientation after it
    /// (accelerometers with orientation on: `normal`, `left-up`, …; nil otherwise).
    case filtered(SensorSample, orientation: String? = nil)

    /// The sample.
    public var sample: SensorSample {
        switch self {
        case .raw(let s), .filtered(let s, _): s
        }
    }
}

/// A present sensor as a watcher gets it: its description and its updates (raw and
/// filtered), which complete when the sensor goes away or the hub stops.
public struct SensorFeed: Sendable {
    /// The sensor.
    public let info: SensorInfo
    /// Raw and filtered samples from the moment of subscribing; subscribing starts the
    /// sensor's reading if nobody else consumes it.
    public let updates: Observable<SensorUpdate>
    /// Completes when the sensor goes away or the hub stops (after one element, for a
    /// subscriber that was there; at once for a later one): the end without subscribing
    /// `updates`, which would read the sensor.
    public let ended: Observable<Void>
}

/// What a sensor's `STATE` reports: the last samples seen, and whether anyone consumes it.
public struct SensorState: Hashable, Sendable {
    /// The sensor.
    public var info: SensorInfo
    /// The last sample read (nil before the sensor was first consumed).
    public var raw: SensorSample?
    /// The last sample out of the filters (nil before the first one).
    public var filtered: SensorSample?
    /// The device's orientation after the last filtered sample (accelerometers).
    public var orientation: String?
    /// Whether the sensor is being read now (a watcher or the bridge consumes it).
    public var live: Bool
    /// Samples read since the sensor came (while it was consumed).
    public var samplesIn: UInt64 = 0
    /// Samples out of its filters since the sensor came.
    public var samplesOut: UInt64 = 0
    /// Failed reads since the sensor came (`SensorHealth`: read errors of any kind, values
    /// that do not parse).
    public var readErrors: UInt64 = 0
    /// Whether its last `SensorHealth.failedAfter` reads or more all failed.
    public var failed = false

    /// A state.
    public init(info: SensorInfo, raw: SensorSample?, filtered: SensorSample?, orientation: String? = nil, live: Bool) {
        self.info = info
        self.raw = raw
        self.filtered = filtered
        self.orientation = orientation
        self.live = live
    }
}

/// The answer of `SensorHub.state(of:)`.
public enum SensorLookup: Hashable, Sendable {
    /// The sensor and its last samples.
    case found(SensorState)
    /// No present sensor has that id or name.
    case none
    /// Several present sensors have that name.
    case ambiguous
}

/// One `stateReadingOnce`: ends its reading and its timeout, then answers once.
final class ReadOnce: Sendable {
    let subscription = SerialDisposable()
    let timeout = SerialDisposable()
    private let scheduler: SchedulerType
    private let completion: @Sendable (SensorLookup) -> Void
    private let done = Atomic<Bool>(false)

    init(scheduler: SchedulerType, _ completion: @escaping @Sendable (SensorLookup) -> Void) {
        self.scheduler = scheduler
        self.completion = completion
    }

    func finish(_ answer: @escaping @Sendable () -> SensorLookup) {
        if done.exchange(true, ordering: .acquiringAndReleasing) { return }
        subscription.dispose()
        timeout.dispose()
        // The reading's disposal runs on the scheduler: answer after it, so the state says
        // the sensor is not read any more.
        let completion = completion
        scheduler.schedule(after: .zero) { completion(answer()) }
    }
}

/// The filtered sample the orientation rule is deciding on (confined to the scheduler).
final class OrientationDelivery: @unchecked Sendable {
    /// Its time: an orientation decided now took effect then.
    var time: Int64 = 0
    /// Whether the rule runs inside the sample's delivery (the sample will carry the
    /// orientation), or from a hold's timer (the orientation goes out on its own).
    var inSample = false
}
