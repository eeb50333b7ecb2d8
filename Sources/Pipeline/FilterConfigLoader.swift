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
/// Internal: the `sensors:` section is read by an extension in Sensors/SensorConfig.swift.
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
            case "multitouch":
                guard case .scalar(let s) = value, s.string == "passthrough" else {
                    throw error(value, path, "only 'passthrough' is supported (multitouch axes are per slot and always pass through)")
                }
            default:
                throw error(value, path, "unknown key (expected keys, buttons, switches, spurious, spurious_window, abs, rel, multitouch)")
            }
        }
    }

    func readRule(_ node: YAMLNode, path: String) throws(ConfigError) -> FilterConfig.Rule {
        let entries = try mapping(node, path)
        guard let matchNode = entries.first(where: { $0.0 == "match" })?.1 else {
            throw error(node, path + ".match", "missing (every rule needs a match)")
        }
        var rule = FilterConfig.Rule(match: try readMatch(matchNode, path: path + ".match"))
        for (key, value) in entries {
            let p = path + "." + key
            switch key {
            case "match": break
            case "output": rule.output = try outputMode(value, p)
            case "keys": rule.keys = try duration(value, p)
            case "buttons": rule.buttons = try duration(value, p)
            case "switches": rule.switches = try duration(value, p)
            case "spurious": rule.spurious = try spuriousMode(value, p)
            case "spurious_window": rule.spuriousWindow = try duration(value, p)
            case "abs":
                for (k, v) in try mapping(value, p) {
                    switch k {
                    case "hysteresis": rule.absHysteresis = try hysteresis(v, p + "." + k)
                    case "max_rate": rule.absMinInterval = try rate(v, p + "." + k)
                    default: throw error(v, p + "." + k, "unknown key (expected hysteresis, max_rate)")
                    }
                }
            case "rel":
                for (k, v) in try mapping(value, p) {
                    guard k == "max_rate" else { throw error(v, p + "." + k, "unknown key (expected max_rate)") }
                    rule.relMinInterval = try rate(v, p + "." + k)
                }
            case "codes":
                for (name, spec) in try mapping(value, p) {
                    let cp = p + "." + name
                    guard let (type, code) = EventNames.code(named: name) else {
                        throw error(spec, cp, "unknown event code name")
                    }
                    // `EV_KEY:0xffff` names no code a device can have (and the protocol
                    // refuses it): the numeric form stops at the type's largest code.
                    guard let max = EventNames.maxCode(type: type), code <= max else {
                        let limit = EventNames.maxCode(type: type).map { "its largest is \(EventNames.codeText(type: type, code: $0))" }
                            ?? "the type has no codes"
                        throw error(spec, cp, "no such \(EventNames.typeText(type)) code (\(limit))")
                    }
                    // One value per code would mix every slot's contacts: refuse rather than
                    // filter ABS_MT_* across slots (a slot-aware filter does not exist yet).
                    if type == EventType.abs && CodeRange.multitouch.contains(code) {
                        throw error(spec, cp, "multitouch axes cannot be filtered (their values are per slot); they always pass through")
                    }
                    rule.codes[.init(type: type, code: code)] = try codeSpec(spec, type: type, path: cp)
                }
            default:
                throw error(value, p, "unknown key (expected match, output, keys, buttons, switches, spurious, spurious_window, abs, rel, codes)")
            }
        }
        return rule
    }

    func readMatch(_ node: YAMLNode, path: String) throws(ConfigError) -> FilterConfig.Match {
        var match = FilterConfig.Match()
        let entries = try mapping(node, path)
        if entries.isEmpty { throw error(node, path, "empty match (give class, name, id, phys, uniq and/or properties)") }
        for (key, value) in entries {
            let p = path + "." + key
            if key == "properties" {
                match.properties = try udevProperties(value, p)
                continue
            }
            guard case .scalar(let s) = value else { throw error(value, p, "expected a string") }
            switch key {
            case "class":
                guard let c = DeviceClass(rawValue: s.string) else {
                    let known = DeviceClass.allCases.map(\.rawValue).joined(separator: ", ")
                    throw error(value, p, "unknown class '\(s.string)' (one of \(known))")
                }
                match.deviceClass = c
            case "name":
                match.name = s.string
            case "phys":
                match.phys = try pattern(s.string, value, p)
            case "uniq":
                match.uniq = try pattern(s.string, value, p)
            case "id":
                let parts = s.string.split(separator: ":")
                guard parts.count == 2, let v = UInt16(parts[0], radix: 16), let pr = UInt16(parts[1], radix: 16) else {
                    throw error(value, p, "expected vendor:product in hex, e.g. 046d:c077")
                }
                match.vendor = v
                match.product = pr
            default:
                throw error(value, p, "unknown key (expected class, name, id, phys, uniq, properties)")
            }
        }
        return match
    }

    /// A glob for `phys`, `uniq` or a udev property. Empty is refused: a device without the
    /// field never matches, and one with it has a non-empty value, so `""` would match nothing.
    func pattern(_ text: String, _ node: YAMLNode, _ path: String) throws(ConfigError) -> String {
        guard !text.isEmpty else {
            throw error(node, path, "empty pattern (it would match no device; use * and ? as wildcards)")
        }
        return text
    }

    /// `properties: { ID_PATH: "pci-*", ... }`: udev property names a live device keeps
    /// (`DeviceInfo.keepsUdevProperty`), each with a glob. A name evflowd does not keep would
    /// never match, so it is refused rather than silently matching nothing.
    func udevProperties(_ node: YAMLNode, _ path: String) throws(ConfigError) -> [String: String] {
        let entries = try mapping(node, path)
        if entries.isEmpty { throw error(node, path, "empty properties (give udev properties such as ID_PATH: \"pci-*\")") }
        var result: [String: String] = [:]
        for (name, value) in entries {
            let p = path + "." + name
            if DeviceInfo.udevClassFlags.contains(name) {
                throw error(value, p, "a class flag: use class (e.g. class: keyboard) instead")
            }
            guard DeviceInfo.keepsUdevProperty(name) else {
                let prefixes = DeviceInfo.keptUdevPropertyPrefixes.map { $0 + "*" }.joined(separator: ", ")
                throw error(value, p, "not a udev property evflowd keeps (one of \(prefixes), e.g. ID_PATH, ID_SERIAL)")
            }
            guard case .scalar(let s) = value else { throw error(value, p, "expected a string") }
            result[name] = try pattern(s.string, value, p)
        }
        return result
    }

    /// `output: observe | virtual`.
    func outputMode(_ node: YAMLNode, _ path: String) throws(ConfigError) -> OutputMode {
        if case .scalar(let s) = node, let mode = OutputMode(rawValue: s.string.trimmingSpaces().lowercased()) {
            return mode
        }
        let modes = OutputMode.allCases.map(\.rawValue).joined(separator: " or ")
        throw error(node, path, "expected \(modes)")
    }

    /// `panic_chord: [KEY_BACKSPACE, KEY_ESC, KEY_ENTER]`: from `FilterConfig.panicChordSizes`
    /// distinct key or button names. One key alone would release the grabs whenever it is
    /// typed; more than eight cannot be pressed with two hands.
    func panicChord(_ node: YAMLNode, _ path: String) throws(ConfigError) -> Set<UInt16> {
        let sizes = FilterConfig.panicChordSizes
        guard case .sequence(let items) = node else {
            throw error(node, path, "expected a list of \(sizes.lowerBound) to \(sizes.upperBound) key names, e.g. [KEY_BACKSPACE, KEY_ESC, KEY_ENTER]")
        }
        guard sizes.contains(items.count) else {
            let why = items.count < sizes.lowerBound ? "one key alone would release the grabs whenever it is typed"
                : "more cannot be held down at once"
            throw error(node, path, "\(items.count) key(s): a chord has \(sizes.lowerBound) to \(sizes.upperBound) keys (\(why))")
        }
        var chord = Set<UInt16>()
        for (i, item) in items.enumerated() {
            let p = "\(path)[\(i)]"
            guard case .scalar(let s) = item else { throw error(item, p, "expected a key name such as KEY_ESC") }
            let name = s.string.trimmingSpaces()
            // Only libevdev's names: the numeric form (EV_KEY:0x2ff) names codes no keyboard has.
            guard name.hasPrefix("KEY_") || name.hasPrefix("BTN_"),
                  let (type, code) = EventNames.code(named: name), type == EventType.key, code != 0 else {
                throw error(item, p, "'\(s.string)' is not a key or button name (KEY_* or BTN_*, e.g. KEY_ESC)")
            }
            guard chord.insert(code).inserted else { throw error(item, p, "\(name) is named twice") }
        }
        return chord
    }

    func spuriousMode(_ node: YAMLNode, _ path: String) throws(ConfigError) -> SpuriousMode {
        if case .scalar(let s) = node {
            let text = s.string.trimmingSpaces().lowercased()
            if let mode = SpuriousMode(rawValue: text) { return mode }
            if text == "false" || text == "none" { return .off }
        }
        throw error(node, path, "expected auto, always or off")
    }

    func codeSpec(_ node: YAMLNode, type: UInt16, path: String) throws(ConfigError) -> FilterConfig.CodeFilterSpec {
        if case .scalar(let s) = node {
            let text = s.string.trimmingSpaces().lowercased()
            if text == "off" || text == "passthrough" { return .off }
            switch type {
            case EventType.key, EventType.sw:
                let d = try duration(node, path)
                return d == 0 ? .off : .window(d)
            default:
                throw error(node, path, "expected a mapping such as { hysteresis: 4, max_rate: 250 } for this axis")
            }
        }
        var hysteresis: FilterConfig.Hysteresis?
        var interval: Int64?
        var debounce: Int64?
        var spurious: SpuriousMode?
        var spuriousWindow: Int64?
        for (k, v) in try mapping(node, path) {
            switch k {
            case "hysteresis" where type == EventType.abs: hysteresis = try self.hysteresis(v, path + "." + k)
            case "max_rate" where type == EventType.abs || type == EventType.rel: interval = try rate(v, path + "." + k)
            case "debounce" where type == EventType.abs || type == EventType.sw: debounce = try duration(v, path + "." + k)
            case "window" where type == EventType.key: debounce = try duration(v, path + "." + k)
            case "spurious" where type == EventType.key: spurious = try spuriousMode(v, path + "." + k)
            case "spurious_window" where type == EventType.key: spuriousWindow = try duration(v, path + "." + k)
            default: throw error(v, path + "." + k, "not a setting for \(EventNames.typeText(type)) codes")
            }
        }
        if type == EventType.key {
            if debounce == 0 { return .off }
            if debounce == nil && spurious == nil && spuriousWindow == nil { return .off }
            return .key(window: debounce, spurious: spurious, spuriousWindow: spuriousWindow)
        }
        if let debounce {
            guard hysteresis == nil, interval == nil else {
                throw error(node, path, "debounce cannot be combined with hysteresis or max_rate")
            }
            return debounce == 0 ? .off : .debounce(debounce)
        }
        if type == EventType.rel { return .relative(minInterval: interval ?? 0) }
        return .absolute(hysteresis: hysteresis, minInterval: interval)
    }
}

extension String {
    fileprivate func trimmingSpaces() -> String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
