import InputModel

/// The noise-filter configuration: defaults plus per-device rules, read from YAML.
///
/// ```yaml
/// version: 1
/// defaults:
///   keys: 15ms            # debounce window for keys (off disables)
///   buttons: 25ms         # debounce window for buttons (BTN_*)
///   switches: 20ms        # debounce for EV_SW
///   spurious: auto        # spurious-release method: auto (on once seen), always, off
///   spurious_window: 12ms # how long a release is held when it is on
///   abs: { hysteresis: fuzz, max_rate: off }   # fuzz = the axis' absinfo fuzz
///   rel: { max_rate: off }                     # Hz; deltas are summed, never dropped
///   wheel: off            # wheel filter window: a lone reversed scroll tick is dropped
///   bounce_keys: off      # BounceKeys: a re-press within this time after the release is ignored
///   slow_keys: off        # SlowKeys: a press counts once held this long
/// panic_chord: [KEY_BACKSPACE, KEY_ESC, KEY_ENTER]   # releases every grab (2 to 8 keys)
/// devices:                # later rules override earlier ones
///   - match: { class: mouse, name: "Logitech*", id: "046d:c077" }   # all given must match
///     output: virtual     # grab and re-emit through a uinput twin (default observe)
///     buttons: 30ms
///   - match: { phys: "usb-0000:00:14.0-2/*", uniq: "?*", properties: { ID_PATH: "pci-*" } }
///     keys: 20ms
///     codes:
///       BTN_LEFT: 40ms
///       KEY_A: off
///       ABS_X: { hysteresis: 4, max_rate: 250 }
///       REL_WHEEL: { max_rate: 60 }
///       SW_LID: 200ms
///       ABS_MISC: { debounce: 100ms }
/// ```
/// Multitouch axes (`ABS_MT_*`) and touch/tool buttons (`BTN_TOUCH`, `BTN_TOOL_*`,
/// `BTN_STYLUS*`) pass through unless a `codes:` entry names them.
/// See docs/configuration.md.
public struct FilterConfig: Hashable, Sendable {
    /// Filters applied when no rule says otherwise.
    public struct Defaults: Hashable, Sendable {
        /// Chatter window for keys (ns; 0 = off).
        public var keys: Int64 = 15_000_000
        /// Chatter window for buttons (ns; 0 = off).
        public var buttons: Int64 = 25_000_000
        /// Debounce window for switches (ns; 0 = off).
        public var switches: Int64 = 20_000_000
        /// When keys and buttons use the spurious-release method.
        public var spurious: SpuriousMode = .auto
        /// How long a release is held when the spurious-release method is on (ns; 0 = off).
        public var spuriousWindow: Int64 = 12_000_000
        /// Hysteresis for absolute axes.
        public var absHysteresis: Hysteresis = .fuzz
        /// Minimum interval between absolute-axis values (ns; 0 = unlimited).
        public var absMinInterval: Int64 = 0
        /// Minimum interval between relative-axis deliveries (ns; 0 = unlimited).
        public var relMinInterval: Int64 = 0
        /// The wheel filter's window (ns; 0 = off, the default: see docs/configuration.md).
        public var wheel: Int64 = 0
        /// BounceKeys time for keyboard keys (ns; 0 = off, the default).
        public var bounceKeys: Int64 = 0
        /// SlowKeys time for keyboard keys (ns; 0 = off, the default).
        public var slowKeys: Int64 = 0

        /// The built-in defaults.
        public init() {}
    }

    /// Where an axis' hysteresis comes from.
    public enum Hysteresis: Hashable, Sendable {
        /// The axis' absinfo fuzz.
        case fuzz
        /// A fixed value (0 = off).
        case value(Int32)
    }

    /// Which devices a rule applies to; every given field must match.
    public struct Match: Hashable, Sendable {
        /// A udev class (`keyboard`, `mouse`, `touchpad`, `switch`, ...).
        public var deviceClass: DeviceClass?
        /// A name glob (`*` and `?`).
        public var name: String?
        /// Vendor and product.
        public var vendor: UInt16?
        /// Product (with `vendor`).
        public var product: UInt16?
        /// A glob on the physical path (`EVIOCGPHYS`, e.g. `usb-0000:00:14.0-2/input0`); a
        /// device without one does not match.
        public var phys: String?
        /// A glob on the unique id (`EVIOCGUNIQ`, often a serial or a Bluetooth address); a
        /// device without one does not match.
        public var uniq: String?
        /// Globs on udev properties (`ID_PATH: "pci-*"`); a device lacking a property does not
        /// match.
        public var properties: [String: String]

        /// Creates a match.
        public init(deviceClass: DeviceClass? = nil, name: String? = nil, vendor: UInt16? = nil, product: UInt16? = nil,
                    phys: String? = nil, uniq: String? = nil, properties: [String: String] = [:]) {
            self.deviceClass = deviceClass
            self.name = name
            self.vendor = vendor
            self.product = product
            self.phys = phys
            self.uniq = uniq
            self.properties = properties
        }

        /// Whether `device` matches.
        public func matches(_ device: DeviceInfo) -> Bool {
            if let deviceClass, !device.classes.contains(deviceClass) { return false }
            if let name, !globMatch(name, device.name) { return false }
            if let vendor, device.inputID.vendor != vendor { return false }
            if let product, device.inputID.product != product { return false }
            if let phys, !(device.phys.map { globMatch(phys, $0) } ?? false) { return false }
            if let uniq, !(device.uniq.map { globMatch(uniq, $0) } ?? false) { return false }
            for (key, pattern) in properties {
                guard let value = device.properties[key], globMatch(pattern, value) else { return false }
            }
            return true
        }
    }

    /// A per-device rule.
    public struct Rule: Hashable, Sendable {
        /// Which devices.
        public var match: Match
        /// Overrides of the defaults for these devices (nil = keep).
        public var keys: Int64?
        public var buttons: Int64?
        public var switches: Int64?
        public var spurious: SpuriousMode?
        public var spuriousWindow: Int64?
        public var absHysteresis: Hysteresis?
        public var absMinInterval: Int64?
        public var relMinInterval: Int64?
        /// The wheel filter's window (ns; 0 = off).
        public var wheel: Int64?
        public var bounceKeys: Int64?
        public var slowKeys: Int64?
        /// Per-code filters, by (type, code).
        public var codes: [CodeKey: CodeFilterSpec] = [:]
        /// Where the filtered stream goes (nil = keep); see `outputMode(for:)`.
        public var output: OutputMode?
        /// Gestures of the device's keys (nil = keep; docs/gestures.md).
        public var gestures: GestureRule?

        /// Creates a rule.
        public init(match: Match) { self.match = match }
    }

    /// An event type and code.
    public struct CodeKey: Hashable, Sendable {
        public var type: UInt16
        public var code: UInt16
        /// Creates a key.
        public init(type: UInt16, code: UInt16) {
            self.type = type
            self.code = code
        }
    }

    /// A per-code filter as written in the file (hysteresis may still say "fuzz").
    public enum CodeFilterSpec: Hashable, Sendable {
        case off
        case window(Int64)
        /// `EV_KEY` written as a mapping; nil parts come from the rule/defaults.
        case key(window: Int64?, spurious: SpuriousMode?, spuriousWindow: Int64?)
        case debounce(Int64)
        case absolute(hysteresis: Hysteresis?, minInterval: Int64?)
        case relative(minInterval: Int64)
    }

    /// The defaults.
    public var defaults = Defaults()
    /// The rules, in file order.
    public var rules: [Rule] = []
    /// The keys that, held together on any grabbed device's raw stream, release every grab
    /// until the next reload or restart (`panic_chord`); the default is keyd's.
    public var panicChord: Set<UInt16> = FilterConfig.defaultPanicChord
    /// Filters of IIO sensors (the `sensors:` section; see `sensorSettings(for:)`).
    public var sensors = SensorConfig()
    /// Whether evflowd serves iio-sensor-proxy's D-Bus API, `net.hadess.SensorProxy` on the
    /// system bus (`sensor_proxy`; docs/sensors.md, "The desktop's D-Bus API"). Off by default,
    /// so it never fights an installed iio-sensor-proxy; read at start (a reload does not
    /// change it).
    public var sensorProxy = false
    /// KEY_BACKSPACE + KEY_ESC + KEY_ENTER.
    public static let defaultPanicChord: Set<UInt16> = [14, 1, 28]
    /// How many keys a `panic_chord` may have: at least two (one key alone would release the
    /// grabs whenever it is typed), at most eight.
    public static let panicChordSizes: ClosedRange<Int> = 2...8

    /// The built-in configuration (no file).
    public init() {}

    /// Where one device's filtered stream goes: the last matching rule's `output`, else
    /// `observe`.
    public func outputMode(for device: DeviceInfo) -> OutputMode {
        var mode = OutputMode.observe
        for rule in rules where rule.match.matches(device) {
            mode = rule.output ?? mode
        }
        return mode
    }

    /// Resolves the filters of one device.
    public func settings(for device: DeviceInfo) -> DeviceFilterSettings {
        var keys = defaults.keys, buttons = defaults.buttons, switches = defaults.switches
        var hysteresis = defaults.absHysteresis, absInterval = defaults.absMinInterval
        var relInterval = defaults.relMinInterval
        var wheel = defaults.wheel
        var spurious = defaults.spurious, spuriousWindow = defaults.spuriousWindow
        var codes: [CodeKey: CodeFilterSpec] = [:]
        var access = AccessibilitySettings(bounceKeys: defaults.bounceKeys, slowKeys: defaults.slowKeys)
        for rule in rules where rule.match.matches(device) {
            access.bounceKeys = rule.bounceKeys ?? access.bounceKeys
            access.slowKeys = rule.slowKeys ?? access.slowKeys
            keys = rule.keys ?? keys
            buttons = rule.buttons ?? buttons
            switches = rule.switches ?? switches
            spurious = rule.spurious ?? spurious
            spuriousWindow = rule.spuriousWindow ?? spuriousWindow
            hysteresis = rule.absHysteresis ?? hysteresis
            absInterval = rule.absMinInterval ?? absInterval
            relInterval = rule.relMinInterval ?? relInterval
            wheel = rule.wheel ?? wheel
            codes.merge(rule.codes) { _, new in new }
        }

        func hysteresisValue(_ h: Hysteresis, code: UInt16) -> Int32 {
            switch h {
            case .fuzz: return device.absInfo[code]?.fuzz ?? 0
            case .value(let v): return v
            }
        }

        var s = DeviceFilterSettings()
        if device.capabilities[EventType.key]?.contains(where: { !CodeRange.isButton($0) }) ?? false {
            s.accessibility = access   // keyboards' keys only: buttons never (AccessKeys)
        }
        for code in device.capabilities[EventType.key] ?? [] {
            if TouchCodes.isTouchOrTool(code) { continue }
            let w = CodeRange.isButton(code) ? buttons : keys
            if w > 0 { s.keys[code] = .chatter(window: w, spurious: spurious, spuriousWindow: spuriousWindow) }
        }
        if switches > 0 {
            for code in device.capabilities[EventType.sw] ?? [] { s.switches[code] = .debounce(window: switches) }
        }
        for code in device.capabilities[EventType.abs] ?? [] where !CodeRange.multitouch.contains(code) {
            let h = hysteresisValue(hysteresis, code: code)
            if h > 0 || absInterval > 0 { s.absolute[code] = .absolute(hysteresis: h, minInterval: absInterval) }
        }
        if relInterval > 0 {
            for code in device.capabilities[EventType.rel] ?? [] { s.relative[code] = .relative(minInterval: relInterval) }
        }
        if wheel > 0 {
            let rel = device.capabilities[EventType.rel] ?? []
            // REL_WHEEL with REL_WHEEL_HI_RES, REL_HWHEEL with REL_HWHEEL_HI_RES. The filter writes
            // the low-resolution code of an axis, so a device without it gets no wheel filter.
            for (lo, hi) in [(UInt16(8), UInt16(11)), (UInt16(6), UInt16(12))] where rel.contains(lo) {
                s.wheel[lo] = WheelSetting(window: wheel, hiRes: rel.contains(hi))
            }
        }
        for (key, spec) in codes {
            let filter: CodeFilter
            switch spec {
            case .off: filter = .passthrough
            case .window(let w):
                filter = key.type == EventType.sw ? .debounce(window: w)
                    : .chatter(window: w, spurious: spurious, spuriousWindow: spuriousWindow)
            case .key(let w, let mode, let sw):
                let window = w ?? (CodeRange.isButton(key.code) ? buttons : keys)
                filter = window == 0 ? .passthrough
                    : .chatter(window: window, spurious: mode ?? spurious, spuriousWindow: sw ?? spuriousWindow)
            case .debounce(let w): filter = .debounce(window: w)
            case .absolute(let h, let i):
                filter = .absolute(hysteresis: hysteresisValue(h ?? hysteresis, code: key.code), minInterval: i ?? absInterval)
            case .relative(let i): filter = .relative(minInterval: i)
            }
            switch key.type {
            case EventType.key: s.keys[key.code] = filter
            case EventType.sw: s.switches[key.code] = filter
            case EventType.abs: s.absolute[key.code] = filter
            case EventType.rel: s.relative[key.code] = filter
            default: break
            }
        }
        s.gestures = gestureSettings(for: device)
        return s
    }
}

/// Touch and tool buttons report contact, not a mechanical switch: never chatter-filtered
/// by default (fast taps on touchscreens must survive).
enum TouchCodes {
    /// `BTN_TOOL_PEN` (0x140) ... `BTN_TOOL_QUADTAP` (0x14f), including `BTN_TOUCH` and
    /// `BTN_STYLUS`/`BTN_STYLUS2`; and `BTN_STYLUS3` (0x149), `BTN_TOOL_QUINTTAP` (0x148).
    static func isTouchOrTool(_ code: UInt16) -> Bool { (0x140...0x14f).contains(code) }
}

/// `*` matches any run of characters, `?` one character; everything else literally.
func globMatch(_ pattern: String, _ text: String) -> Bool {
    let p = Array(pattern.unicodeScalars), t = Array(text.unicodeScalars)
    var pi = 0, ti = 0, star = -1, mark = 0
    while ti < t.count {
        if pi < p.count, p[pi] == "?" || p[pi] == t[ti] {
            pi += 1
            ti += 1
        } else if pi < p.count, p[pi] == "*" {
            star = pi
            mark = ti
            pi += 1
        } else if star >= 0 {
            pi = star + 1
            mark += 1
            ti = mark
        } else {
            return false
        }
    }
    while pi < p.count, p[pi] == "*" { pi += 1 }
    return pi == p.count
}
