import InputModel
import YAML

/// The gestures of one device (resolved from `FilterConfig`, docs/gestures.md): which keys,
/// which gestures, and the three times.
public struct GestureSettings: Hashable, Sendable {
    /// The `EV_KEY` codes gestures are computed for (empty: none).
    public var codes: Set<UInt16> = []
    /// The gestures sent.
    public var kinds: Set<GestureKind> = Set(GestureKind.allCases)
    /// The multi-press window (ns): a press less than this after the release before it
    /// continues the sequence.
    public var multiPress: Int64 = GestureSettings.defaultMultiPress
    /// A press held this long (ns) or longer is `long`.
    public var long: Int64 = GestureSettings.defaultLong
    /// `hold` repeats every this long (ns) after the first, which comes with `long`.
    public var hold: Int64 = GestureSettings.defaultHold

    /// The default multi-press window: 300 ms.
    public static let defaultMultiPress: Int64 = 300_000_000
    /// The default long time: 500 ms.
    public static let defaultLong: Int64 = 500_000_000
    /// The default hold period: 200 ms.
    public static let defaultHold: Int64 = 200_000_000

    /// No gesture at all.
    public init() {}

    /// Gestures for `codes`.
    public init(codes: Set<UInt16>, kinds: Set<GestureKind> = Set(GestureKind.allCases),
                multiPress: Int64 = defaultMultiPress, long: Int64 = defaultLong, hold: Int64 = defaultHold) {
        self.codes = codes
        self.kinds = kinds
        self.multiPress = multiPress
        self.long = long
        self.hold = hold
    }

    /// Whether no gesture can come.
    public var isEmpty: Bool { codes.isEmpty || kinds.isEmpty }

    /// The highest count gesture sent (3 with `triple`, …, 0 with none): a sequence ends at
    /// the release of that press, without waiting for the window.
    var maxCount: Int {
        kinds.contains(.triple) ? 3 : kinds.contains(.double) ? 2 : kinds.contains(.single) ? 1 : 0
    }

    /// Whether a held press is timed (`long` or `hold` sent).
    var timesHeld: Bool { kinds.contains(.long) || kinds.contains(.hold) }

    /// What DEVICES reports (nil when empty).
    public var described: DeviceGestures? {
        isEmpty ? nil : DeviceGestures(codes: codes, kinds: kinds)
    }
}

extension FilterConfig {
    /// A rule's `gestures:` as written: `off`, `on`, or a mapping whose missing parts come
    /// from earlier rules or the built-in default (docs/gestures.md, "Configuration").
    public struct GestureRule: Hashable, Sendable {
        /// `off` (false), `on` or a mapping (true).
        public var enabled: Bool
        /// `keys:` the codes (nil: every key and button of the device).
        public var codes: Set<UInt16>?
        /// `gestures:` which ones (nil: keep).
        public var kinds: Set<GestureKind>?
        /// `multi_press` (nil: keep).
        public var multiPress: Int64?
        /// `long` (nil: keep).
        public var long: Int64?
        /// `hold` (nil: keep).
        public var hold: Int64?

        /// A rule that turns gestures on or off with nothing else given.
        public init(enabled: Bool) { self.enabled = enabled }
    }

    /// Whether a device gets gestures without a rule: one classed `key` that is neither a
    /// full keyboard nor a pointer, tablet or joystick — remotes, media-key and consumer-control
    /// nodes, numeric keypads, macro pads that do not present a full keyboard.
    public static func gesturesByDefault(_ device: DeviceInfo) -> Bool {
        let other: Set<DeviceClass> = [.keyboard, .mouse, .pointingstick, .touchpad, .touchscreen, .tablet, .tabletPad, .joystick]
        return device.classes.contains(.key) && device.classes.isDisjoint(with: other)
    }

    /// The gestures of one device: the default (`gesturesByDefault`), then each matching
    /// rule's `gestures:` in order, over the keys and buttons the device has (touch and tool
    /// codes never: they are contact, not presses).
    public func gestureSettings(for device: DeviceInfo) -> GestureSettings {
        var enabled = Self.gesturesByDefault(device)
        var codes: Set<UInt16>?
        var s = GestureSettings(codes: [])
        for rule in rules where rule.match.matches(device) {
            guard let g = rule.gestures else { continue }
            enabled = g.enabled
            codes = g.codes ?? codes
            s.kinds = g.kinds ?? s.kinds
            s.multiPress = g.multiPress ?? s.multiPress
            s.long = g.long ?? s.long
            s.hold = g.hold ?? s.hold
        }
        guard enabled else { return GestureSettings() }
        let has = (device.capabilities[EventType.key] ?? []).filter { !TouchCodes.isTouchOrTool($0) }
        s.codes = codes.map { $0.intersection(has) } ?? has
        return s
    }
}

extension ConfigReader {
    /// A rule's `gestures:` — `off`, `on`, or
    /// `{ keys: [KEY_F13, BTN_0], gestures: [single, double, long], multi_press: 300ms, long: 500ms, hold: 200ms }`.
    func gestureRule(_ node: YAMLNode, _ path: String) throws(ConfigError) -> FilterConfig.GestureRule {
        if case .scalar(let s) = node {
            switch s.string.trimmingSpaces().lowercased() {
            case "off", "false", "no": return FilterConfig.GestureRule(enabled: false)
            case "on", "true", "yes": return FilterConfig.GestureRule(enabled: true)
            default: throw error(node, path, "expected off, on or a mapping (keys, gestures, multi_press, long, hold)")
            }
        }
        var rule = FilterConfig.GestureRule(enabled: true)
        for (key, value) in try mapping(node, path) {
            let p = path + "." + key
            switch key {
            case "keys":
                guard case .sequence(let items) = value, !items.isEmpty else { throw error(value, p, "expected a list of key or button names") }
                var codes = Set<UInt16>()
                for (i, item) in items.enumerated() {
                    guard case .scalar(let s) = item, let (type, code) = EventNames.code(named: s.string.trimmingSpaces()),
                          type == EventType.key else {
                        throw error(item, "\(p)[\(i)]", "not a key or button name (KEY_* or BTN_*)")
                    }
                    codes.insert(code)
                }
                rule.codes = codes
            case "gestures":
                guard case .sequence(let items) = value else { throw error(value, p, "expected a list of gestures") }
                var kinds = Set<GestureKind>()
                for (i, item) in items.enumerated() {
                    guard case .scalar(let s) = item, let kind = GestureKind(rawValue: s.string.trimmingSpaces()) else {
                        let known = GestureKind.allCases.map(\.rawValue).joined(separator: ", ")
                        throw error(item, "\(p)[\(i)]", "not a gesture (one of \(known))")
                    }
                    kinds.insert(kind)
                }
                rule.kinds = kinds
            case "multi_press", "long", "hold":
                let d = try duration(value, p)
                guard d > 0 else { throw error(value, p, "must be more than 0") }
                switch key {
                case "multi_press": rule.multiPress = d
                case "long": rule.long = d
                default: rule.hold = d
                }
            default:
                throw error(value, p, "unknown key (expected keys, gestures, multi_press, long, hold)")
            }
        }
        return rule
    }
}
