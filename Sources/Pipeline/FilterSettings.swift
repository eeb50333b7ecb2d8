import InputModel

/// How one event code of one device is filtered (resolved from `FilterConfig`).
public enum CodeFilter: Hashable, Sendable, CustomStringConvertible {
    /// Delivered unchanged.
    case passthrough
    /// Keys and buttons: the `KeyDebounce` state machine — bounce method with `window`,
    /// spurious-release method with `spuriousWindow` as `spurious` says. Repeats (value 2)
    /// always pass.
    case chatter(window: Int64, spurious: SpuriousMode = .auto, spuriousWindow: Int64 = 12_000_000)
    /// Switches, slow sensors: a value is delivered once it has been stable for `window`.
    case debounce(window: Int64)
    /// Absolute axes: a change of at most `hysteresis` from the last delivered value counts
    /// as unchanged; with `minInterval` > 0 at most one value per interval (latest wins).
    case absolute(hysteresis: Int32, minInterval: Int64)
    /// Relative axes: never dropped; with `minInterval` > 0 deltas inside an interval are
    /// summed and delivered at its end.
    case relative(minInterval: Int64)

    public var description: String {
        func ms(_ ns: Int64) -> String {
            ns % 1_000_000 == 0 ? "\(ns / 1_000_000)ms" : "\(Double(ns) / 1e6)ms"
        }
        switch self {
        case .passthrough: return "passthrough"
        case .chatter(let w, let mode, let s):
            return mode == .off || s == 0 ? "debounce \(ms(w)), spurious off" : "debounce \(ms(w)), spurious \(mode.rawValue) \(ms(s))"
        case .debounce(let w): return "debounce \(ms(w))"
        case .absolute(let h, let i): return i > 0 ? "hysteresis \(h), every \(ms(i))" : "hysteresis \(h)"
        case .relative(let i): return i > 0 ? "sum every \(ms(i))" : "passthrough"
        }
    }
}

/// The wheel filter of one scroll axis.
public struct WheelSetting: Hashable, Sendable {
    /// The window (ns): a lone reversed tick less than this after the scroll's last tick is
    /// dropped.
    public var window: Int64
    /// Whether the device declares the axis' high-resolution code: then the filter reads the
    /// high-resolution motion and delivers the detents it adds up to (docs/configuration.md).
    public var hiRes: Bool

    /// A setting.
    public init(window: Int64, hiRes: Bool) {
        self.window = window
        self.hiRes = hiRes
    }
}

/// The filters of one device: one `CodeFilter` per (type, code) it reports.
public struct DeviceFilterSettings: Hashable, Sendable {
    /// Filter per `EV_KEY` code.
    public var keys: [UInt16: CodeFilter] = [:]
    /// Filter per `EV_SW` code.
    public var switches: [UInt16: CodeFilter] = [:]
    /// Filter per `EV_ABS` code.
    public var absolute: [UInt16: CodeFilter] = [:]
    /// Filter per `EV_REL` code.
    public var relative: [UInt16: CodeFilter] = [:]
    /// The gestures of the device's keys (docs/gestures.md).
    public var gestures = GestureSettings()
    /// The wheel filter (`WheelFilter`) per scroll axis, keyed by `REL_WHEEL` (8) or
    /// `REL_HWHEEL` (6); its high-resolution code (`REL_WHEEL_HI_RES`, `REL_HWHEEL_HI_RES`)
    /// is filtered with it. Empty: no wheel filter (the default).
    public var wheel: [UInt16: WheelSetting] = [:]
    /// BounceKeys and SlowKeys on the keyboard keys, after their chatter debounce.
    public var accessibility = AccessibilitySettings()

    /// Creates empty settings (everything passes).
    public init() {}

    /// The filter for `type`/`code` (passthrough when none is set).
    public func filter(type: UInt16, code: UInt16) -> CodeFilter {
        switch type {
        case EventType.key: return keys[code] ?? .passthrough
        case EventType.sw: return switches[code] ?? .passthrough
        case EventType.abs: return absolute[code] ?? .passthrough
        case EventType.rel: return relative[code] ?? .passthrough
        default: return .passthrough
        }
    }
}
