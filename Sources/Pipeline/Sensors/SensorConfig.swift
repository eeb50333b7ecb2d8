import InputModel
import YAML

/// The `sensors:` section of the configuration: filter defaults per quantity and per-sensor
/// rules, over evflow's built-in defaults (`SensorConfig.builtIn`).
///
/// ```yaml
/// sensors:
///   defaults:                 # per quantity; over the built-in defaults
///     illuminance: { hysteresis: [1, 10%], settle: 500ms, outliers: { phantom_zero: on } }
///     accel: { max_rate: 10, smoothing: median 3, orientation: { hysteresis: 10, flat_angle: 25 } }
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
        case .illuminance, .intensity:
            // A lamp is a level: 10 % (at least 1 lx) is a visible change, 500 ms of holding
            // it rules out a hand passing by, and the phantom zero after resume is held.
            return SensorChannelFilterSettings(outliers: OutlierSettings(phantomZero: true),
                                               hysteresis: 1, relativeHysteresis: 0.1, settle: 500_000_000)
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

// MARK: - Reading the `sensors:` section

extension ConfigReader {
    /// The largest smoothing window.
    static let maxSmoothing = 1000

    func readSensors(_ node: YAMLNode) throws(ConfigError) -> SensorConfig {
        var config = SensorConfig()
        for (key, value) in try mapping(node, "sensors") {
            let path = "sensors." + key
            switch key {
            case "defaults":
                for (name, block) in try mapping(value, path) {
                    guard let quantity = SensorQuantity(rawValue: name) else {
                        let known = SensorQuantity.allCases.map(\.rawValue).joined(separator: ", ")
                        throw error(block, path + "." + name, "unknown quantity (one of \(known))")
                    }
                    var b = SensorConfig.Block()
                    for (k, v) in try mapping(block, path + "." + name) {
                        try readBlockKey(k, v, path + "." + name, into: &b)
                    }
                    config.defaults[quantity] = b
                }
            case "devices":
                guard case .sequence(let seq) = value else { throw error(value, path, "expected a list of rules") }
                for (i, item) in seq.enumerated() {
                    config.rules.append(try readSensorRule(item, path: "\(path)[\(i)]"))
                }
            default:
                throw error(value, path, "unknown key (expected defaults, devices)")
            }
        }
        return config
    }

    private func readSensorRule(_ node: YAMLNode, path: String) throws(ConfigError) -> SensorConfig.Rule {
        let entries = try mapping(node, path)
        guard let matchNode = entries.first(where: { $0.0 == "match" })?.1 else {
            throw error(node, path + ".match", "missing (every rule needs a match)")
        }
        var rule = SensorConfig.Rule(match: try readSensorMatch(matchNode, path: path + ".match"))
        for (key, value) in entries {
            let p = path + "." + key
            switch key {
            case "match": break
            case "channels":
                for (name, spec) in try mapping(value, p) {
                    var overrides = SensorConfig.ChannelOverrides()
                    for (k, v) in try mapping(spec, p + "." + name) {
                        guard try readChannelKey(k, v, p + "." + name + "." + k, into: &overrides) else {
                            throw error(v, p + "." + name + "." + k,
                                        "unknown key (expected hysteresis, settle, smoothing, outliers)")
                        }
                    }
                    rule.channels[name] = overrides
                }
            default:
                try readBlockKey(key, value, path, into: &rule.block, extra: "match, channels, ")
            }
        }
        return rule
    }

    private func readSensorMatch(_ node: YAMLNode, path: String) throws(ConfigError) -> SensorConfig.Match {
        var match = SensorConfig.Match()
        let entries = try mapping(node, path)
        if entries.isEmpty { throw error(node, path, "empty match (give name and/or properties)") }
        for (key, value) in entries {
            let p = path + "." + key
            switch key {
            case "name":
                guard case .scalar(let s) = value else { throw error(value, p, "expected a string") }
                match.name = s.string
            case "properties":
                for (property, pattern) in try mapping(value, p) {
                    guard case .scalar(let s) = pattern else { throw error(pattern, p + "." + property, "expected a string") }
                    match.properties[property] = s.string
                }
            default:
                throw error(value, p, "unknown key (expected name, properties)")
            }
        }
        return match
    }

    /// One key of a `defaults` quantity or a rule: a channel key or a sensor-wide one.
    private func readBlockKey(_ key: String, _ value: YAMLNode, _ path: String, into block: inout SensorConfig.Block,
                              extra: String = "") throws(ConfigError) {
        let p = path + "." + key
        if try readChannelKey(key, value, p, into: &block.channel) { return }
        switch key {
        case "max_rate": block.minInterval = try rate(value, p)
        case "orientation": block.orientation = try readOrientation(value, p)
        default:
            throw error(value, p, "unknown key (expected \(extra)hysteresis, settle, smoothing, outliers, max_rate, orientation)")
        }
    }

    /// One channel key; false if `key` is not one.
    private func readChannelKey(_ key: String, _ value: YAMLNode, _ path: String,
                                into o: inout SensorConfig.ChannelOverrides) throws(ConfigError) -> Bool {
        switch key {
        case "hysteresis":
            let (absolute, relative) = try bound(value, path, what: "hysteresis")
            o.hysteresis = absolute
            o.relativeHysteresis = relative
        case "settle": o.settle = try duration(value, path)
        case "smoothing": o.smoothing = try smoothing(value, path)
        case "outliers": o.outliers = try readOutliers(value, path)
        default: return false
        }
        return true
    }

    /// `off`, or a mapping of `spike`, `phantom_zero`, `confirm`.
    private func readOutliers(_ node: YAMLNode, _ path: String) throws(ConfigError) -> SensorConfig.OutlierOverrides {
        if case .scalar = node {
            guard try flag(node, path) == false else {
                throw error(node, path, "expected off or a mapping such as { phantom_zero: on, spike: 50% }")
            }
            return .off
        }
        var o = SensorConfig.OutlierOverrides()
        for (k, v) in try mapping(node, path) {
            let p = path + "." + k
            switch k {
            case "spike":
                let (absolute, relative) = try bound(v, p, what: "spike bound")
                o.spike = absolute
                o.relativeSpike = relative
            case "phantom_zero": o.phantomZero = try flag(v, p)
            case "confirm":
                let d = try duration(v, p)
                guard d > 0 else { throw error(v, p, "must be longer than 0 (a held sample needs a time to give up waiting)") }
                o.confirmTimeout = d
            default: throw error(v, p, "unknown key (expected spike, phantom_zero, confirm)")
            }
        }
        return o
    }

    /// `off`, or a mapping of `hysteresis`, `flat_angle`, `gravity_tolerance`.
    private func readOrientation(_ node: YAMLNode, _ path: String) throws(ConfigError) -> SensorConfig.OrientationOverrides {
        var o = SensorConfig.OrientationOverrides()
        if case .scalar = node {
            o.enabled = try flag(node, path)
            return o
        }
        o.enabled = true
        for (k, v) in try mapping(node, path) {
            let p = path + "." + k
            switch k {
            case "hysteresis": o.hysteresis = try number(v, p, in: 0...40, unit: "degrees")
            case "flat_angle": o.flatAngle = try number(v, p, in: 0...80, unit: "degrees")
            case "gravity_tolerance": o.gravityTolerance = try percent(v, p, in: 0.05...1)
            default: throw error(v, p, "unknown key (expected hysteresis, flat_angle, gravity_tolerance)")
            }
        }
        return o
    }

    /// A band: a number (absolute, channel units), a percentage (relative), a list of one
    /// of each, or `off`. Returns both parts; the one not given is 0.
    private func bound(_ node: YAMLNode, _ path: String, what: String) throws(ConfigError) -> (Double, Double) {
        let usage = "a number in the channel's unit, a percentage such as 10%, both as [1, 10%], or off"
        var items: [YAMLNode] = []
        switch node {
        case .scalar: items = [node]
        case .sequence(let seq):
            items = Array(seq)
            guard (1...2).contains(items.count) else { throw error(node, path, "bad \(what) (\(usage))") }
        case .mapping: throw error(node, path, "bad \(what) (\(usage))")
        }
        var absolute: Double? = nil, relative: Double? = nil
        for item in items {
            guard case .scalar(let s) = item else { throw error(item, path, "bad \(what) (\(usage))") }
            let text = s.string.sensorTrimmed().lowercased()
            if text == "off" || text == "false" || text == "none" {
                guard items.count == 1 else { throw error(item, path, "off cannot be combined with a value") }
                return (0, 0)
            }
            if text.hasSuffix("%") {
                guard relative == nil, let v = Self.decimal(String(text.dropLast()).sensorTrimmed()), v >= 0, v <= 1000 else {
                    throw error(item, path, "bad \(what) '\(s.string)' (a percentage from 0% to 1000%, given once)")
                }
                relative = v / 100
            } else {
                guard absolute == nil, let v = Self.decimal(text), v >= 0, v <= 1e9 else {
                    throw error(item, path, "bad \(what) '\(s.string)' (\(usage); an absolute value from 0 to 1e9, given once)")
                }
                absolute = v
            }
        }
        return (absolute ?? 0, relative ?? 0)
    }

    /// `off`, `mean N` or `median N` (N from 1 to `maxSmoothing`).
    private func smoothing(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Smoothing {
        let usage = "off, mean N or median N with N from 1 to \(Self.maxSmoothing)"
        guard case .scalar(let s) = node else { throw error(node, path, "expected \(usage)") }
        let words = s.string.lowercased().split(separator: " ", omittingEmptySubsequences: true)
        if words.count == 1, ["off", "false", "none"].contains(words[0]) { return .off }
        guard words.count == 2, let n = Int(words[1]), (1...Self.maxSmoothing).contains(n) else {
            throw error(node, path, "bad smoothing '\(s.string)' (\(usage))")
        }
        switch words[0] {
        case "mean", "average": return n == 1 ? .off : .mean(n)
        case "median": return n == 1 ? .off : .median(n)
        default: throw error(node, path, "bad smoothing '\(s.string)' (\(usage))")
        }
    }

    /// `on`/`off` (also `true`/`false`, `yes`/`no`).
    private func flag(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Bool {
        if case .scalar(let s) = node {
            switch s.string.sensorTrimmed().lowercased() {
            case "on", "true", "yes": return true
            case "off", "false", "no", "none": return false
            default: break
            }
        }
        throw error(node, path, "expected on or off")
    }

    private func number(_ node: YAMLNode, _ path: String, in range: ClosedRange<Double>, unit: String) throws(ConfigError) -> Double {
        guard case .scalar(let s) = node, let v = Self.decimal(s.string.sensorTrimmed()), range.contains(v) else {
            throw error(node, path, "expected a number of \(unit) from \(range.lowerBound) to \(range.upperBound)")
        }
        return v
    }

    /// A fraction written as a percentage (`40%`) or a plain fraction (`0.4`).
    private func percent(_ node: YAMLNode, _ path: String, in range: ClosedRange<Double>) throws(ConfigError) -> Double {
        if case .scalar(let s) = node {
            let text = s.string.sensorTrimmed()
            let value = text.hasSuffix("%") ? Self.decimal(String(text.dropLast()).sensorTrimmed()).map { $0 / 100 } : Self.decimal(text)
            if let value, range.contains(value) { return value }
        }
        throw error(node, path, "expected a fraction from \(range.lowerBound) to \(range.upperBound) (or a percentage)")
    }
}

extension String {
    fileprivate func sensorTrimmed() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
