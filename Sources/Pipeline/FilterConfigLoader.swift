import FileReading
import InputModel
import YAML

/// A configuration error naming the key path, the line and what is wrong.
public struct ConfigError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The file, if the configuration came from one.
    public var file: String?
    /// 1-based line, if known.
    public var line: Int?
    /// The key path, e.g. `devices[1].codes.KEY_Q`.
    public var key: String
    /// What is wrong.
    public var reason: String

    /// Creates an error.
    public init(file: String?, line: Int?, key: String, reason: String) {
        self.file = file
        self.line = line
        self.key = key
        self.reason = reason
    }

    public var description: String {
        var where_ = file ?? "config"
        if let line { where_ += ":\(line)" }
        return "\(where_): \(key.isEmpty ? "" : key + ": ")\(reason)"
    }
}

extension FilterConfig {
    /// Largest configuration file read: 1 MiB (the documented example is 3 KiB).
    public static let maxFileBytes = 1 << 20

    /// The longest window, timeout or rate interval a configuration may give: 1,000,000 s
    /// (11.6 days) in nanoseconds. Every duration and every `max_rate` (as its interval, so
    /// down to 0.000001 Hz) is checked against it, so a filter's deadline (event time plus
    /// window) stays far from `Int64` overflow.
    public static let maxIntervalNanoseconds: Int64 = 1_000_000 * 1_000_000_000

    /// Reads a configuration file: a regular file of at most `maxFileBytes`, opened without
    /// blocking (a FIFO, a directory or a device at the path is refused, never waited on), then
    /// `parse(yaml:file:)`. Every failure is a `ConfigError` naming the file.
    public static func load(path: String) throws(ConfigError) -> FilterConfig {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: maxFileBytes)
        } catch {
            let reason: String
            switch error.reason {
            case .cannotOpen: reason = "cannot open: \(error.reasonText)"
            case .tooLarge: reason = "larger than the \(BoundedFileError.size(maxFileBytes)) limit for a configuration file"
            case .notARegularFile, .cannotRead: reason = error.reasonText
            }
            throw ConfigError(file: path, line: nil, key: "", reason: reason)
        }
        return try parse(yaml: String(decoding: bytes, as: UTF8.self), file: path)
    }

    /// Parses configuration text.
    public static func parse(yaml: String, file: String? = nil) throws(ConfigError) -> FilterConfig {
        let root: YAMLNode?
        do {
            root = try YAMLComposer.compose(yaml)
        } catch where !error.duplicateKeys.isEmpty {
            throw ConfigError(file: file, line: error.mark.line, key: error.duplicateKeys[0],
                              reason: "not valid YAML: duplicate key \(error.duplicateKeys.map { "'\($0)'" }.joined(separator: ", "))")
        } catch {
            throw ConfigError(file: file, line: error.mark.line, key: "", reason: "not valid YAML: \(error.message)")
        }
        var config = FilterConfig()
        guard let root else { return config }   // empty file: built-in defaults
        let maxNodes = YAMLLimits.maxNodes(textBytes: yaml.utf8.count)
        if YAMLLimits.expandsBeyond(root, limit: maxNodes) {
            throw ConfigError(file: file, line: 1, key: "",
                              reason: "the document expands to more than \(maxNodes) nodes (YAML aliases used over and over)")
        }
        let reader = ConfigReader(file: file)
        let top = try reader.mapping(root, "")
        for (key, value) in top {
            switch key {
            case "version":
                guard reader.int(value) == 1 else {
                    throw reader.error(value, "version", "unsupported version (expected 1)")
                }
            case "defaults":
                try reader.readDefaults(value, into: &config.defaults)
            case "devices":
                guard case .sequence(let seq) = value else { throw reader.error(value, "devices", "expected a list of rules") }
                for (i, item) in seq.enumerated() {
                    config.rules.append(try reader.readRule(item, path: "devices[\(i)]"))
                }
            case "panic_chord":
                config.panicChord = try reader.panicChord(value, "panic_chord")
            case "sensors":
                config.sensors = try reader.readSensors(value)
            case "sensor_proxy":
                // YAML 1.1's booleans, as `orientation:` takes them.
                guard case .scalar(let s) = value, let on = ["true": true, "on": true, "yes": true, "false": false,
                                                             "off": false, "no": false][s.string.lowercased()] else {
                    throw reader.error(value, key, "expected true or false")
                }
                config.sensorProxy = on
            default:
                throw reader.error(value, key, "unknown key (expected version, defaults, devices, panic_chord, sensors, sensor_proxy)")
            }
        }
        return config
    }
}

/// Walks the YAML tree, turning every mistake into a `ConfigError` with key path and line.
/// Internal: the `sensors:` section is read by an extension in Sensors/SensorConfig.swift, a
/// device rule (`devices:`, its match and its filters) by ConfigReader+DeviceRules.swift.
struct ConfigReader {
    let file: String?

    func error(_ node: YAMLNode, _ key: String, _ reason: String) -> ConfigError {
        ConfigError(file: file, line: node.mark.line, key: key, reason: reason)
    }

    func mapping(_ node: YAMLNode, _ path: String) throws(ConfigError) -> [(String, YAMLNode)] {
        guard case .mapping(let m) = node else { throw error(node, path, "expected a mapping") }
        var seen = Set<String>()
        var result: [(String, YAMLNode)] = []
        for (k, v) in m {
            guard let key = k.string else { throw error(k, path, "keys must be strings") }
            guard seen.insert(key).inserted else { throw error(k, join(path, key), "duplicate key") }
            result.append((key, v))
        }
        return result
    }

    func join(_ path: String, _ key: String) -> String { path.isEmpty ? key : path + "." + key }

    func int(_ node: YAMLNode) -> Int? {
        guard case .scalar(let s) = node else { return nil }
        return Int(s.string)
    }

    /// `25ms`, `1s`, `500us`, `0.5s`, a bare number (milliseconds), or `off` (0); at most
    /// `FilterConfig.maxIntervalNanoseconds`. NaN, infinities, negative numbers and a
    /// positive value below 1 ns (which would silently round to "off") are refused.
    func duration(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Int64 {
        guard case .scalar(let s) = node else { throw error(node, path, "expected a duration like 25ms or off") }
        let text = s.string.trimmingSpaces().lowercased()
        if text == "off" || text == "false" || text == "none" { return 0 }
        let units: [(String, Double)] = [("ms", 1e6), ("us", 1e3), ("µs", 1e3), ("ns", 1), ("s", 1e9)]
        let unit = units.first { text.hasSuffix($0.0) }
        let number = unit.map { String(text.dropLast($0.0.count)) } ?? text
        guard let value = Self.decimal(number) else {
            throw error(node, path, "bad duration '\(s.string)' (use e.g. 25ms, 1s or off)")
        }
        guard let nanos = Self.nanoseconds(value * (unit?.1 ?? 1e6)) else {
            throw error(node, path, "duration '\(s.string)' out of range (0, or 1ns to 1000000s; off turns it off)")
        }
        return nanos
    }

    /// A rate in Hz (`max_rate: 125`) as a minimum interval; `off` = 0. From 0.000001 Hz
    /// (an interval of `FilterConfig.maxIntervalNanoseconds`) to 1,000,000 Hz.
    func rate(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Int64 {
        guard case .scalar(let s) = node else { throw error(node, path, "expected a rate in Hz or off") }
        let text = s.string.trimmingSpaces().lowercased()
        if text == "off" || text == "false" || text == "none" { return 0 }
        let number = text.hasSuffix("hz") ? String(text.dropLast(2)) : text
        guard let hz = Self.decimal(number), hz > 0, hz <= 1_000_000,
              let interval = Self.nanoseconds(1e9 / hz), interval > 0 else {
            throw error(node, path, "bad rate '\(s.string)' (a number of Hz from 0.000001 to 1000000, or off)")
        }
        return interval
    }

    /// A plain decimal number (`25`, `0.5`, `1e3`): not `nan`, `inf`, hexadecimal floats or
    /// anything `Double(_:)` reads beyond what a person writes in a configuration.
    static func decimal(_ text: String) -> Double? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0)
                || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }),
              let value = Double(text), value.isFinite else { return nil }
        return value
    }

    /// `value` nanoseconds as a whole number (the fraction dropped), or nil when it is
    /// negative, below 1 ns but not 0 (it would silently mean "off"), or above
    /// `FilterConfig.maxIntervalNanoseconds` — checked on the `Double`, before the conversion
    /// that would trap.
    static func nanoseconds(_ value: Double) -> Int64? {
        guard value.isFinite, value >= 0, value <= Double(FilterConfig.maxIntervalNanoseconds) else { return nil }
        let whole = value.rounded(.towardZero)
        if whole == 0 && value > 0 { return nil }
        return Int64(whole)
    }

    func hysteresis(_ node: YAMLNode, _ path: String) throws(ConfigError) -> FilterConfig.Hysteresis {
        guard case .scalar(let s) = node else { throw error(node, path, "expected a number, fuzz or off") }
        let text = s.string.trimmingSpaces().lowercased()
        if text == "fuzz" { return .fuzz }
        if text == "off" || text == "false" { return .value(0) }
        guard let v = Int32(text), v >= 0 else { throw error(node, path, "bad hysteresis '\(s.string)' (a number ≥ 0, fuzz or off)") }
        return .value(v)
    }

    func readDefaults(_ node: YAMLNode, into d: inout FilterConfig.Defaults) throws(ConfigError) {
        for (key, value) in try mapping(node, "defaults") {
            let path = "defaults." + key
            switch key {
            case "keys": d.keys = try duration(value, path)
            case "buttons": d.buttons = try duration(value, path)
            case "switches": d.switches = try duration(value, path)
            case "spurious": d.spurious = try spuriousMode(value, path)
            case "spurious_window": d.spuriousWindow = try duration(value, path)
            case "bounce_keys": d.bounceKeys = try duration(value, path)
            case "slow_keys": d.slowKeys = try duration(value, path)
            case "abs":
                for (k, v) in try mapping(value, path) {
                    switch k {
                    case "hysteresis": d.absHysteresis = try hysteresis(v, path + "." + k)
                    case "max_rate": d.absMinInterval = try rate(v, path + "." + k)
                    default: throw error(v, path + "." + k, "unknown key (expected hysteresis, max_rate)")
                    }
                }
            case "rel":
                for (k, v) in try mapping(value, path) {
                    guard k == "max_rate" else { throw error(v, path + "." + k, "unknown key (expected max_rate)") }
                    d.relMinInterval = try rate(v, path + "." + k)
                }
            case "wheel": d.wheel = try duration(value, path)
            case "multitouch":
                guard case .scalar(let s) = value, s.string == "passthrough" else {
                    throw error(value, path, "only 'passthrough' is supported (multitouch axes are per slot and always pass through)")
                }
            default:
                throw error(value, path, "unknown key (expected keys, buttons, switches, spurious, spurious_window, bounce_keys, slow_keys, abs, rel, wheel, multitouch)")
            }
        }
    }
}

extension String {
    /// The text without leading and trailing spaces and tabs (a YAML scalar as written).
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
