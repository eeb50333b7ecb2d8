import InputModel
import YAML

/// A `devices:` rule (its `match`, output mode and per-type filters, docs/configuration.md) and
/// the values only rules and the top-level `panic_chord` take.
extension ConfigReader {
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
            case "gestures": rule.gestures = try gestureRule(value, p)
            case "bounce_keys": rule.bounceKeys = try duration(value, p)
            case "slow_keys": rule.slowKeys = try duration(value, p)
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
            case "wheel": rule.wheel = try duration(value, p)
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
                throw error(value, p, "unknown key (expected match, output, keys, buttons, switches, spurious, spurious_window, bounce_keys, slow_keys, gestures, abs, rel, wheel, codes)")
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
