import Reactive

/// A value of a channel at a time (CLOCK_MONOTONIC ns).
public struct TimedValue: Hashable, Sendable {
    /// The value in the channel's unit.
    public var value: Double
    /// When it was measured (or accepted, for a value released by a timeout).
    public var time: Int64

    /// A value at `time`.
    public init(_ value: Double, at time: Int64) {
        self.value = value
        self.time = time
    }
}

/// Outlier rejection by confirmation: a suspicious sample is held until the next sample says
/// whether it was real. Pure: no clock, no timer; `deadline` says when a held sample times out.
///
/// States and transitions (`a` = last accepted value, `p` = the held sample):
/// - **open** (nothing held). A sample `v`: the first ever, or one that is not suspicious, is
///   accepted. A suspicious one is held → **holding p**. Suspicious: with `phantomZero`,
///   `v == 0` while `a != 0`; with a spike bound, `|v − a| > bound(a)`, where
///   `bound(r) = max(spike, relativeSpike·|r|)`.
/// - **holding p**, a spike suspect. The next sample `v`: if it confirms `p`
///   (`|v − p| ≤ bound(p)`), `p` is accepted and `v` is then judged against it (→ **open** or,
///   rarely, **holding v**). Otherwise `p` is dropped as an outlier and `v` is judged against
///   `a` as in **open**. At `p.time + confirmTimeout` with no next sample, `p` is accepted at
///   that time → **open**.
/// - **holding p**, a phantom-zero suspect. Zeros confirm it only by lasting: a zero before
///   `p.time + confirmTimeout` keeps it held (the zeros of one run are one suspect: a sensor
///   polled every 100 ms reads a 0.7-s phantom seven times); at that time `p` is accepted
///   (real darkness) → **open**. A non-zero sample before then drops `p` and the zeros after
///   it as outliers, and is judged against `a` as in **open**.
/// - Non-finite samples (NaN, ±∞) are dropped in any state and change nothing.
///
/// The cost: a true step that looks like a spike is passed on one sample late (at the next
/// sample, or after `confirmTimeout` when none comes); real darkness after light is passed on
/// `confirmTimeout` late; anything else passes at once.
public struct OutlierGate: Hashable, Sendable {
    /// The rules.
    public let settings: OutlierSettings
    /// The last accepted value.
    public private(set) var accepted: Double?
    /// The held sample, if any.
    public private(set) var held: TimedValue?
    /// Whether the held sample is a phantom-zero suspect (else a spike suspect).
    private var heldIsZero = false
    /// Zeros that came after a held phantom-zero suspect, before its deadline: dropped with
    /// it when a non-zero sample refutes it.
    private var heldZeros = 0
    /// Samples dropped as outliers (and non-finite ones).
    public private(set) var dropped = 0

    /// A gate with `settings`.
    public init(settings: OutlierSettings) {
        self.settings = settings
    }

    /// When the held sample is accepted if nothing confirms or refutes it first.
    /// Saturating, not wrapping (issue #34): a wrapped sum near 2⁶³ ns was a deadline in the past.
    public var deadline: Int64? { held.map { $0.time.addingSaturated(settings.confirmTimeout) } }

    private func bound(_ reference: Double) -> Double {
        max(settings.spike, settings.relativeSpike * abs(reference))
    }

    /// What one sample lets through: the held sample it confirmed, then itself, each if
    /// accepted (no array: this runs per sample).
    public struct Step: Hashable, Sendable {
        /// The held sample, accepted because this one confirmed it.
        public var confirmed: TimedValue?
        /// This sample, if accepted.
        public var accepted: TimedValue?

        /// A step.
        public init(confirmed: TimedValue? = nil, accepted: TimedValue? = nil) {
            self.confirmed = confirmed
            self.accepted = accepted
        }
    }

    /// One sample: what is accepted now, in order.
    public mutating func on(_ sample: TimedValue) -> Step {
        guard sample.value.isFinite else {
            dropped += 1
            return Step()
        }
        guard settings.isOn else {
            accepted = sample.value
            return Step(accepted: sample)
        }
        var step = Step()
        if let p = held {
            if heldIsZero {
                if sample.value == 0 {
                    // Still dark: the suspect stands until it has lasted `confirmTimeout`.
                    guard let d = deadline, sample.time >= d else {
                        heldZeros += 1
                        return step
                    }
                    accepted = p.value
                    step.confirmed = TimedValue(p.value, at: d)
                } else {
                    dropped += 1 + heldZeros
                }
                heldZeros = 0
            } else if abs(sample.value - p.value) <= bound(p.value) {
                accepted = p.value
                step.confirmed = p
            } else {
                dropped += 1
            }
            held = nil
        }
        if judge(sample) { step.accepted = sample }
        return step
    }

    /// Accepts `sample` (true) or holds it.
    private mutating func judge(_ sample: TimedValue) -> Bool {
        guard let a = accepted else {
            accepted = sample.value
            return true
        }
        if settings.phantomZero && sample.value == 0 && a != 0 {
            held = sample
            heldIsZero = true
            return false
        }
        if (settings.spike > 0 || settings.relativeSpike > 0) && abs(sample.value - a) > bound(a) {
            held = sample
            heldIsZero = false
            return false
        }
        accepted = sample.value
        return true
    }

    /// Time reached `now`: a held sample whose deadline passed is accepted, at its deadline.
    public mutating func fire(at now: Int64) -> TimedValue? {
        guard let p = held, let d = deadline, d <= now else { return nil }
        held = nil
        heldZeros = 0
        accepted = p.value
        return TimedValue(p.value, at: d)
    }
}

/// Moving mean or median over the last `Smoothing.count` accepted values of a channel.
/// Pure; one output per input: the statistic over the window so far.
public struct Smoother: Hashable, Sendable {
    /// The statistic and window.
    public let smoothing: Smoothing
    /// The window, oldest first.
    private var window: [Double] = []

    /// A smoother.
    public init(_ smoothing: Smoothing) {
        self.smoothing = smoothing
        window.reserveCapacity(smoothing.count)
    }

    /// Adds `value`; returns the smoothed value.
    public mutating func on(_ value: Double) -> Double {
        if case .off = smoothing { return value }
        if window.count == smoothing.count { window.removeFirst() }
        window.append(value)
        switch smoothing {
        case .off: return value
        case .mean: return window.reduce(0, +) / Double(window.count)
        case .median:
            let sorted = window.sorted()
            let mid = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
        }
    }
}

/// Hysteresis with settling time: decides which values become the channel's published level.
/// Pure: `deadline` says when a candidate level has held long enough; `fire(at:)` publishes it.
///
/// `band(r) = max(hysteresis, relativeHysteresis·|r|)`; `v` is *outside* `r`'s band when
/// `v != r` and `|v − r| ≥ band(r)` (with both hysteresis fields 0, every change is outside).
///
/// States and transitions (`P` = published level):
/// - **empty** (nothing published). With `settle` = 0 the first value is published at once
///   → **steady**. Otherwise it is the first candidate → **settling**: the first level waits
///   like any other, because a single noisy sample would be a poor reference for the band
///   (a first reading 8 % high made a 10 % band publish ordinary noise as a change).
/// - **steady**. A value inside `P`'s band is dropped. One outside it: with `settle` = 0 it
///   is published at once; otherwise it becomes the candidate `C` (first value `c₀`, since
///   `t`) → **settling**.
/// - **settling**. A value inside `P`'s band drops the candidate → **steady** (the level went
///   back). A value inside `c₀`'s band joins the candidate. A value outside both bands starts
///   a new candidate (the timer restarts). At `t + settle` the mean of the candidate's values
///   is published, at that time → **steady**: the level is what held, not its last sample.
public struct LevelPublisher: Hashable, Sendable {
    /// Absolute band (channel units).
    public let hysteresis: Double
    /// Relative band (fraction of the reference).
    public let relativeHysteresis: Double
    /// How long a candidate must hold (ns; 0 = publish at once).
    public let settle: Int64
    /// The published level.
    public private(set) var published: Double?
    /// A level waiting to hold for `settle`.
    public struct Candidate: Hashable, Sendable {
        /// Its first value: the centre of the band it must stay in.
        public var first: Double
        /// The sum and number of its values: their mean is published when it has held.
        public var sum: Double
        public var count: Int
        /// When its first value came.
        public var since: Int64

        /// The mean of its values.
        public var mean: Double { sum / Double(count) }
    }
    /// The candidate level, while settling.
    public private(set) var candidate: Candidate?
    /// Values dropped inside the published level's band.
    public private(set) var dropped = 0

    /// A publisher with these bands and settling time; `published` is the level it starts
    /// from (a reload keeps the channel's level), nil for none.
    public init(hysteresis: Double, relativeHysteresis: Double, settle: Int64, published: Double? = nil) {
        self.hysteresis = max(hysteresis, 0)
        self.relativeHysteresis = max(relativeHysteresis, 0)
        self.settle = max(settle, 0)
        self.published = published
    }

    /// When the candidate is published, if it keeps holding.
    /// Saturating, as the outlier gate's (issue #34).
    public var deadline: Int64? { candidate.map { $0.since.addingSaturated(settle) } }

    /// Whether `value` is outside `reference`'s band.
    public func isOutside(_ value: Double, _ reference: Double) -> Bool {
        value != reference && abs(value - reference) >= max(hysteresis, relativeHysteresis * abs(reference))
    }

    /// One value at `time`; returns it if it is published now.
    public mutating func on(_ value: Double, at time: Int64) -> Double? {
        if let p = published, !isOutside(value, p) {
            candidate = nil   // the level went back: the candidate did not hold
            dropped += 1
            return nil
        }
        if settle == 0 {
            published = value
            return value
        }
        if var c = candidate, !isOutside(value, c.first) {
            c.sum += value
            c.count += 1
            candidate = c
            return nil
        }
        candidate = Candidate(first: value, sum: value, count: 1, since: time)
        return nil
    }

    /// Time reached `now`: a candidate that held until its deadline is published.
    public mutating func fire(at now: Int64) -> Double? {
        guard let c = candidate, c.since.addingSaturated(settle) <= now else { return nil }
        candidate = nil
        published = c.mean
        return c.mean
    }
}

/// One channel's chain: `OutlierGate` → `Smoother` → `LevelPublisher`. Pure.
public struct SensorChannelFilter: Hashable, Sendable {
    /// The settings it was made with.
    public let settings: SensorChannelFilterSettings
    /// The outlier stage.
    public private(set) var gate: OutlierGate
    /// The smoothing stage.
    public private(set) var smoother: Smoother
    /// The hysteresis and settling stage.
    public private(set) var publisher: LevelPublisher

    /// A chain with `settings`, starting from the published level `published` (nil for none).
    public init(settings: SensorChannelFilterSettings, published: Double? = nil) {
        self.settings = settings
        gate = OutlierGate(settings: settings.outliers)
        smoother = Smoother(settings.smoothing)
        publisher = LevelPublisher(hysteresis: settings.hysteresis, relativeHysteresis: settings.relativeHysteresis,
                                   settle: settings.settle, published: published)
    }

    /// The earliest time one of the stages has something due.
    public var deadline: Int64? {
        switch (gate.deadline, publisher.deadline) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }

    /// One raw sample; returns the value published now, if any (the last, when a confirmed
    /// held sample and this one both publish).
    public mutating func on(_ sample: TimedValue) -> Double? {
        let step = gate.on(sample)
        var out: Double? = nil
        if let confirmed = step.confirmed, let p = publisher.on(smoother.on(confirmed.value), at: confirmed.time) { out = p }
        if let accepted = step.accepted, let p = publisher.on(smoother.on(accepted.value), at: accepted.time) { out = p }
        return out
    }

    /// Time reached `now`: what is due fires (a held sample accepted, a candidate published);
    /// returns the value published, if any.
    public mutating func fire(at now: Int64) -> Double? {
        var out: Double? = nil
        if let accepted = gate.fire(at: now) {
            if let p = publisher.on(smoother.on(accepted.value), at: accepted.time) { out = p }
        }
        if let p = publisher.fire(at: now) { out = p }
        return out
    }
}
