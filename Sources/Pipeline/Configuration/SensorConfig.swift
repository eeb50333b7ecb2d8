import InputModel
import YAML

/// The `sensors:` section of the configuration: filter defaults per quantity and per-sensor
/// rules, over evflow's built-in defaults (`SensorConfig.builtIn`).
///
/// ```yaml
/// sensors:
///   defaults:                 # per quantity; over the built-in defaults
///     illuminance: { hysteresis: [1, 10%], settle: 500ms, outliers: { phantom_zero: on } }
///     accel: { max_rate: 10, smoothing: median 3, orientation: { hysteresis: 10, hold: 1s } }
///   devices:                  # later rules override earlier ones
///     - match: { name: "als*", properties: { ID_PATH: "platform-*" } }
///       settle: 1s            # every channel of the sensor
///       channels:
///         illuminance: { hysteresis: 5%, outliers: off }
/// ```
/// See docs/sensors.md, "Filters".
public struct SensorConfig: Hashable, Sendable {
    /// Changes to one channel's settings; nil keeps what was there.
    public struct ChannelOverrides: Hashable, Sendable {
        /// Absolute hysteresis (channel units).
        public var hysteresis: Double?
        /// Relative hysteresis (a fraction).
        public var relativeHysteresis: Double?
        /// Settling time (ns).
        public var settle: Int64?
        /// Smoothing.
        public var smoothing: Smoothing?
        /// Outlier rejection, whole (`outliers: off` or a mapping over the current one).
        public var outliers: OutlierOverrides?

        /// No changes.
        public init() {}

        /// Applies the changes to `settings`.
        public func apply(to settings: inout SensorChannelFilterSettings) {
            settings.hysteresis = hysteresis ?? settings.hysteresis
            settings.relativeHysteresis = relativeHysteresis ?? settings.relativeHysteresis
            settings.settle = settle ?? settings.settle
            settings.smoothing = smoothing ?? settings.smoothing
            outliers?.apply(to: &settings.outliers)
        }
    }

    /// Changes to the outlier settings; nil keeps what was there.
    public struct OutlierOverrides: Hashable, Sendable {
        /// Absolute spike bound.
        public var spike: Double?
        /// Relative spike bound (a fraction).
        public var relativeSpike: Double?
        /// Phantom-zero rule.
        public var phantomZero: Bool?
        /// How long a held sample waits (ns).
        public var confirmTimeout: Int64?

        /// No changes.
        public init() {}

        /// Everything off (`outliers: off`).
        public static let off: OutlierOverrides = {
            var o = OutlierOverrides()
            o.spike = 0
            o.relativeSpike = 0
            o.phantomZero = false
            return o
        }()

        /// Applies the changes to `settings`.
        public func apply(to settings: inout OutlierSettings) {
            settings = OutlierSettings(spike: spike ?? settings.spike,
                                       relativeSpike: relativeSpike ?? settings.relativeSpike,
                                       phantomZero: phantomZero ?? settings.phantomZero,
                                       confirmTimeout: confirmTimeout ?? settings.confirmTimeout)
        }
    }

    /// Changes to the orientation settings; nil keeps what was there.
    public struct OrientationOverrides: Hashable, Sendable {
        /// `orientation: off` turns it off; a mapping turns it on.
        public var enabled: Bool?
        /// Degrees past a boundary.
        public var hysteresis: Double?
        /// Degrees from flat that count as flat.
        public var flatAngle: Double?
        /// Fraction of g a reading may be off.
        public var gravityTolerance: Double?
        /// How long a new orientation must last (ns).
        public var hold: Int64?

        /// No changes.
        public init() {}

        /// Applies the changes to `settings` (nil = off).
        public func apply(to settings: inout OrientationSettings?) {
            if enabled == false {
                settings = nil
                return
            }
            var s = settings ?? OrientationSettings()
            s.hysteresis = hysteresis ?? s.hysteresis
            s.flatAngle = flatAngle ?? s.flatAngle
            s.gravityTolerance = gravityTolerance ?? s.gravityTolerance
            s.hold = hold ?? s.hold
            settings = s
        }
    }

    /// Settings given for a quantity (in `defaults`) or in a rule for all channels of a sensor.
    public struct Block: Hashable, Sendable {
        /// For every channel.
        public var channel = ChannelOverrides()
        /// The sensor's rate limit as a minimum interval (ns; 0 = unlimited).
        public var minInterval: Int64?
        /// Orientation, for accelerometers.
        public var orientation: OrientationOverrides?

        /// No changes.
        public init() {}
    }

    /// Which sensors a rule applies to; every given field must match.
    public struct Match: Hashable, Sendable {
        /// A glob (`*`, `?`) on the IIO device's `name` attribute.
        public var name: String?
        /// Globs on udev properties; a sensor without the property does not match.
        public var properties: [String: String] = [:]

        /// Creates a match.
        public init(name: String? = nil, properties: [String: String] = [:]) {
            self.name = name
            self.properties = properties
        }

        /// Whether `sensor` matches.
        public func matches(_ sensor: SensorInfo) -> Bool {
            if let name, !globMatch(name, sensor.name) { return false }
            for (key, pattern) in properties {
                guard let value = sensor.properties[key], globMatch(pattern, value) else { return false }
            }
            return true
        }
    }

    /// A per-sensor rule.
    public struct Rule: Hashable, Sendable {
        /// Which sensors.
        public var match: Match
        /// For the whole sensor.
        public var block = Block()
        /// Per channel, by name (`illuminance`, `accel_x`), after `block`.
        public var channels: [String: ChannelOverrides] = [:]

        /// A rule with no changes.
        public init(match: Match) { self.match = match }
    }

    /// Defaults per quantity, from the file (over `builtIn`).
    public var defaults: [SensorQuantity: Block] = [:]
    /// The rules, in file order.
    public var rules: [Rule] = []

    /// No `sensors:` section.
    public init() {}

    /// evflow's defaults for a channel measuring `quantity`: chosen so the true changes of a
    /// noisy accelerometer held near 45° and of a light sensor with a phantom zero are
    /// published and the flips and the phantom are not (Tests/Fixtures/sensors).
    public static func builtInChannel(_ quantity: SensorQuantity) -> SensorChannelFilterSettings {
        switch quantity {
        case .illuminance:
            // A lamp is a level: 10 % (at least 1 lx) is a visible change, 500 ms of holding
            // it rules out a hand passing by, and the phantom zero after resume is held.
            return SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true),
                                               hysteresis: 1, relativeHysteresis: 0.1, settle: 500_000_000)
        case .intensity:
            // The same light, in the kernel's raw counts with no unit: only what needs no unit
            // (relative band, settling, the phantom zero). An absolute 1 would be 1 lx on an
            // illuminance channel but an arbitrary count here (issue #29, item 5).
            return SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true),
                                               hysteresis: 0, relativeHysteresis: 0.1, settle: 500_000_000)
        case .accel:
            // A median of 3 removes single jolts without lagging a turn; the orientation
            // decides with its own hysteresis.
            return SensorChannelFilterSettings(smoothing: .median(3))
        case .temp: return SensorChannelFilterSettings(hysteresis: 0.1)
        case .pressure: return SensorChannelFilterSettings(hysteresis: 0.01)
        case .humidityrelative: return SensorChannelFilterSettings(hysteresis: 0.5)
        case .anglvel, .magn, .proximity: return .passthrough
        }
    }

    /// evflow's rate limit for a sensor whose first channel measures `quantity` (ns; 0 none).
    public static func builtInMinInterval(_ quantity: SensorQuantity) -> Int64 {
        quantity == .accel ? 100_000_000 : 0   // 10 Hz: plenty for turning a screen
    }
}

extension FilterConfig {
    /// Resolves the filters of one sensor: for each channel, `SensorConfig.builtInChannel`
    /// of its quantity, then `sensors.defaults` for that quantity, then every matching rule in
    /// order (its sensor-wide settings, then its `channels` entry). The rate limit and the
    /// orientation come the same way from the quantity of the sensor's first channel; the
    /// orientation is on by default for a sensor with `accel_x`, `accel_y` and `accel_z`.
    public func sensorSettings(for sensor: SensorInfo) -> SensorFilterSettings {
        let primary = sensor.channels.first?.quantity
        var result = SensorFilterSettings()
        var interval = primary.map(SensorConfig.builtInMinInterval) ?? 0
        let names = Set(sensor.channels.map(\.name))
        var orientation: OrientationSettings? =
            names.isSuperset(of: ["accel_x", "accel_y", "accel_z"]) ? OrientationSettings() : nil
        let orientable = orientation != nil
        if let primary, let block = sensors.defaults[primary] {
            interval = block.minInterval ?? interval
            if orientable { block.orientation?.apply(to: &orientation) }
        }
        let rules = sensors.rules.filter { $0.match.matches(sensor) }
        for rule in rules {
            interval = rule.block.minInterval ?? interval
            if orientable { rule.block.orientation?.apply(to: &orientation) }
        }
        for channel in sensor.channels {
            var s = SensorConfig.builtInChannel(channel.quantity)
            sensors.defaults[channel.quantity]?.channel.apply(to: &s)
            for rule in rules {
                rule.block.channel.apply(to: &s)
                rule.channels[channel.name]?.apply(to: &s)
            }
            result.channels[channel.name] = s
        }
        result.minInterval = interval
        result.orientation = orientation
        return result
    }
}
