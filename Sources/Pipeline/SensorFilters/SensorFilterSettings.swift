import InputModel

/// How one channel of a sensor is filtered: outlier gate → smoothing → hysteresis with
/// settling (see docs/sensors.md, "Filters"). Every stage is off when its fields are 0.
public struct SensorChannelFilterSettings: Hashable, Sendable {
    /// Outlier rejection: single spikes and the phantom zero after resume.
    public var outliers: OutlierSettings
    /// Moving mean or median over the last accepted samples.
    public var smoothing: Smoothing
    /// Absolute hysteresis in the channel's unit: a value closer than this to the last
    /// published one is not published (0 = off).
    public var hysteresis: Double
    /// Relative hysteresis as a fraction of the last published value (0.1 = 10 %; 0 = off).
    /// With both set, a change must reach the larger of the two bands.
    public var relativeHysteresis: Double
    /// A new level is published only after it has held this long (ns; 0 = at once). "Held"
    /// means every sample stayed within the hysteresis band of the first sample of the level.
    public var settle: Int64

    /// Settings; the defaults filter nothing.
    public init(outliers: OutlierSettings = .off, smoothing: Smoothing = .off, hysteresis: Double = 0,
                relativeHysteresis: Double = 0, settle: Int64 = 0) {
        self.outliers = outliers
        self.smoothing = smoothing
        self.hysteresis = hysteresis
        self.relativeHysteresis = relativeHysteresis
        self.settle = settle
    }

    /// Every value is published as it comes.
    public static let passthrough = SensorChannelFilterSettings()
}

/// Outlier rejection: which samples are held until the next sample confirms them.
public struct OutlierSettings: Hashable, Sendable {
    /// A sample farther than this from the last accepted value is a suspected spike (channel
    /// units; 0 = off).
    public var spike: Double
    /// The same bound as a fraction of the last accepted value (0.5 = 50 %; 0 = off). With
    /// both set, the larger bound applies.
    public var relativeSpike: Double
    /// A zero following a non-zero value is held until zeros have lasted `confirmTimeout`
    /// (the phantom lux = 0 some light sensors report right after resume, which a polled
    /// sensor may read several times).
    public var phantomZero: Bool
    /// How long a held spike waits for the next sample (with none by then it is accepted: a
    /// sensor that reports only on change may send nothing more), and how long zeros must
    /// last to be accepted after light. Nanoseconds, > 0.
    public var confirmTimeout: Int64

    /// Settings.
    public init(spike: Double = 0, relativeSpike: Double = 0, phantomZero: Bool = false,
                confirmTimeout: Int64 = 1_000_000_000) {
        self.spike = spike
        self.relativeSpike = relativeSpike
        self.phantomZero = phantomZero
        self.confirmTimeout = max(confirmTimeout, 1)
    }

    /// No outlier rejection.
    public static let off = OutlierSettings()

    /// Whether any rule is on.
    public var isOn: Bool { spike > 0 || relativeSpike > 0 || phantomZero }
}

/// Smoothing over the last `count` accepted samples of a channel.
public enum Smoothing: Hashable, Sendable, CustomStringConvertible {
    /// Each value as it comes.
    case off
    /// The arithmetic mean of the last `count` samples (fewer until `count` arrived).
    case mean(Int)
    /// The median of the last `count` samples (fewer until `count` arrived; an even number
    /// of samples gives the mean of the middle two).
    case median(Int)

    /// The window length (1 when off).
    public var count: Int {
        switch self {
        case .off: 1
        case .mean(let n), .median(let n): max(n, 1)
        }
    }

    public var description: String {
        switch self {
        case .off: "off"
        case .mean(let n): "mean \(n)"
        case .median(let n): "median \(n)"
        }
    }
}

/// The filters of one sensor, resolved from the configuration
/// (`FilterConfig.sensorSettings(for:)`).
public struct SensorFilterSettings: Hashable, Sendable {
    /// Per channel, by channel name (`accel_x`, `illuminance`).
    public var channels: [String: SensorChannelFilterSettings]
    /// For channels not in `channels`.
    public var fallback: SensorChannelFilterSettings
    /// Rate limit of the sensor's output: at most one sample per interval, the latest at
    /// the interval's end (ns; 0 = unlimited).
    public var minInterval: Int64
    /// Derived orientation, for accelerometers with `accel_x`, `accel_y` and `accel_z`.
    public var orientation: OrientationSettings?

    /// Settings.
    public init(channels: [String: SensorChannelFilterSettings] = [:], fallback: SensorChannelFilterSettings = .passthrough,
                minInterval: Int64 = 0, orientation: OrientationSettings? = nil) {
        self.channels = channels
        self.fallback = fallback
        self.minInterval = minInterval
        self.orientation = orientation
    }

    /// The settings of the channel named `name`.
    public func channel(_ name: String) -> SensorChannelFilterSettings {
        channels[name] ?? fallback
    }
}
