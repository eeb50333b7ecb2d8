import InputModel
import Reactive

/// The filters of one sensor, as a pure state machine over samples and time: one
/// `SensorChannelFilter` per channel, then the sensor's rate limit.
///
/// No threads and no timers (like `NoiseFilter`): `process(_:)` takes a sample and returns
/// the sample to deliver now, if any; `nextDeadline` says when something held is due;
/// `fire(at:)` handles what is due then. `filterSensor` drives it from an observable, live
/// and in replay alike.
///
/// - Output: a sample of every channel's *published* level, delivered when at least one
///   channel published a new level and every channel has published once (a channel whose
///   samples are all held or non-finite keeps the sensor's first output back).
/// - Rate limit (`minInterval` > 0): the output runs through `ThrottleState` with
///   `latest: true` — the `throttle(_:latest:scheduler:)` operator's state machine: the first
///   output passes at once and opens a window; the latest output inside the window is kept and
///   delivered at the window's end, with that time, which opens the next one. A kept sample
///   equal to the last one delivered is not delivered again.
/// - Samples whose value count differs from the channel count are dropped (`malformed`).
/// - Reload (`configure`): channels whose settings are unchanged keep their state; a changed
///   channel starts a new chain that keeps the published level as its reference (its held
///   outlier and settling candidate are dropped); a changed rate limit drops a kept sample.
public struct SensorFilter: Sendable {
    /// One stage per channel, in the sensor's channel order.
    public private(set) var channels: [SensorChannelFilter]
    /// The channels' names, for `configure`.
    private let names: [String]
    /// The rate limit's interval (0 = none).
    private var minInterval: Int64
    /// Each channel's published level; nil until it published once.
    public private(set) var levels: [Double?]
    /// The rate limit's throttle, when there is one.
    private var throttle: ThrottleState<SensorSample>?
    /// The token of the throttle's `.arm`, and the deadline it set.
    private var throttleToken: UInt64 = 0
    private var throttleDeadline: Int64?
    /// The values of the last sample delivered.
    public private(set) var lastDelivered: [Double]?
    private var lastTime: Int64 = .min
    /// Samples in, samples delivered, samples dropped as malformed.
    public private(set) var samplesIn = 0
    public private(set) var samplesOut = 0
    public private(set) var malformed = 0

    /// The filters of a sensor with `channels`, resolved from `settings`.
    public init(settings: SensorFilterSettings, channels: [SensorChannel]) {
        self.channels = channels.map { SensorChannelFilter(settings: settings.channel($0.name)) }
        names = channels.map(\.name)
        levels = Array(repeating: nil, count: channels.count)
        minInterval = settings.minInterval
        if settings.minInterval > 0 { throttle = ThrottleState(dueTime: settings.minInterval, latest: true) }
    }

    /// Replaces the settings (configuration reload), between samples.
    public mutating func configure(_ settings: SensorFilterSettings) {
        for i in channels.indices {
            let new = settings.channel(names[i])
            if new != channels[i].settings {
                channels[i] = SensorChannelFilter(settings: new, published: levels[i])
            }
        }
        if settings.minInterval != minInterval {
            minInterval = settings.minInterval
            throttle = settings.minInterval > 0 ? ThrottleState(dueTime: settings.minInterval, latest: true) : nil
            throttleDeadline = nil
        }
    }

    /// The earliest time something held is due, if any.
    public var nextDeadline: Int64? {
        var best = throttleDeadline
        for channel in channels {
            if let d = channel.deadline, best == nil || d < best! { best = d }
        }
        return best
    }

    /// One sample; returns the sample to deliver now, if any. Times never go backwards: a
    /// sample older than the last is taken as of the last time.
    public mutating func process(_ sample: SensorSample) -> SensorSample? {
        samplesIn += 1
        guard sample.values.count == channels.count else {
            malformed += 1
            return nil
        }
        let now = max(sample.time, lastTime)
        lastTime = now
        var changed = false
        for i in channels.indices {
            if let level = channels[i].on(TimedValue(sample.values[i], at: now)) {
                levels[i] = level
                changed = true
            }
        }
        return changed ? output(at: now) : nil
    }

    /// Handles everything due at or before `now` (call with `nextDeadline`); returns the
    /// sample to deliver, if any.
    public mutating func fire(at now: Int64) -> SensorSample? {
        lastTime = max(lastTime, now)
        var changed = false
        for i in channels.indices {
            guard let d = channels[i].deadline, d <= now else { continue }
            if let level = channels[i].fire(at: now) {
                levels[i] = level
                changed = true
            }
        }
        var out = changed ? output(at: now) : nil
        if let deadline = throttleDeadline, deadline <= now, var state = throttle {
            throttleDeadline = nil
            if case .emit(var kept) = state.onTick(throttleToken, now: now) {
                kept.time = now   // delivered at the window's end: that is when it is known
                out = deliver(kept) ?? out
            }
            throttle = state
        }
        return out
    }

    /// A new level at `time`: the sample to deliver now, through the rate limit.
    private mutating func output(at time: Int64) -> SensorSample? {
        var values: [Double] = []
        values.reserveCapacity(levels.count)
        for level in levels {
            guard let level else { return nil }
            values.append(level)
        }
        let sample = SensorSample(time: time, values: values)
        guard var state = throttle else { return deliver(sample) }
        defer { throttle = state }
        switch state.onNext(sample, now: time) {
        case .emit(let s):
            return deliver(s)
        case .emitAndDisarm(let s):
            throttleDeadline = nil
            return deliver(s)
        case .arm(let deadline, let token):
            throttleToken = token
            throttleDeadline = deadline
            return nil
        case .none, .emitAndComplete, .error:
            return nil
        }
    }

    private mutating func deliver(_ sample: SensorSample) -> SensorSample? {
        if sample.values == lastDelivered { return nil }
        lastDelivered = sample.values
        samplesOut += 1
        return sample
    }
}
