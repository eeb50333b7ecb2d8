import InputModel
import YAML

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

    /// A rotation hold: a duration up to 10 s, or `off` (at once).
    private func orientationHold(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Int64 {
        let d = try duration(node, path)
        guard d <= 10_000_000_000 else { throw error(node, path, "must be at most 10s (a longer hold hides real rotations)") }
        return d
    }

    /// `off`, or a mapping of `hysteresis`, `flat_angle`, `gravity_tolerance`, `hold`.
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
            case "hold": o.hold = try orientationHold(v, p)
            default: throw error(v, p, "unknown key (expected hysteresis, flat_angle, gravity_tolerance, hold)")
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
