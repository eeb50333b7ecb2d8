import InputModel

/// What one filter did to a device's events.
///
/// For every filter, at any moment: inputs = delivered at once + `dropped` + `delayed`
/// + `merged` + (inputs still held, at most one per code).
public struct FilterCounts: Hashable, Sendable, Codable {
    /// Inputs that never reached the output (chatter, repeats of the last value, moves
    /// inside the hysteresis, superseded by a later value).
    public var dropped: UInt64 = 0
    /// Inputs held and delivered later, at the end of their window (the settled value).
    public var delayed: UInt64 = 0
    /// Relative-axis inputs added into a later summed delta (never lost).
    public var merged: UInt64 = 0

    /// Creates counts.
    public init(dropped: UInt64 = 0, delayed: UInt64 = 0, merged: UInt64 = 0) {
        self.dropped = dropped
        self.delayed = delayed
        self.merged = merged
    }
}

/// The filters that count.
public enum FilterKind: String, CaseIterable, Hashable, Sendable, Codable {
    /// Key/button debounce (`KeyDebounce`: bounce and spurious-release methods).
    case keyChatter = "key_chatter"
    /// Switch / slow-sensor debounce.
    case debounce
    /// Absolute-axis hysteresis.
    case absHysteresis = "abs_hysteresis"
    /// Absolute-axis rate limit.
    case absRate = "abs_rate"
    /// Relative-axis rate limit (summing).
    case relRate = "rel_rate"
    /// Wheel filter (`WheelFilter`): stray reversed scroll ticks dropped, held ticks delivered.
    case wheel
    /// BounceKeys (`AccessKey`): presses ignored (dropped).
    case bounceKeys = "bounce_keys"
    /// SlowKeys (`AccessKey`): presses that never counted (dropped), presses delivered once
    /// held long enough (delayed).
    case slowKeys = "slow_keys"
}

/// Counters of one device.
public struct DeviceCounters: Hashable, Sendable, Codable {
    /// Frames received from the device.
    public var framesIn: UInt64 = 0
    /// Events received (without `SYN_REPORT`s).
    public var eventsIn: UInt64 = 0
    /// Frames delivered after filtering (including frames of settled values).
    public var framesOut: UInt64 = 0
    /// Events delivered after filtering.
    public var eventsOut: UInt64 = 0
    /// Frames that lost every event to the filters.
    public var framesDropped: UInt64 = 0
    /// `SYN_DROPPED` seen (the kernel's buffer overflowed; the device was resynced).
    public var synDropped: UInt64 = 0
    /// `EV_MSC` events dropped with their frame: the filters removed every other event of it,
    /// and a scan code or serial number without its key or axis carries no state.
    public var mscDropped: UInt64 = 0
    // One stored field per filter, so counting on the frame path is a field update, not a
    // dictionary look-up (`subscript(kind:)`).
    private var keyChatter = FilterCounts()
    private var debounce = FilterCounts()
    private var absHysteresis = FilterCounts()
    private var absRate = FilterCounts()
    private var relRate = FilterCounts()
    private var wheel = FilterCounts()
    private var bounceKeys = FilterCounts()
    private var slowKeys = FilterCounts()
    /// Whether the accessibility filters counted anything: the state store writes their
    /// counts only then, so a device without them pays one test per frame.
    public private(set) var accessibilityCounted = false

    /// Zero counters.
    public init() {}

    /// The counts of one filter.
    public subscript(kind: FilterKind) -> FilterCounts {
        @inline(__always) get {
            switch kind {
            case .keyChatter: keyChatter
            case .debounce: debounce
            case .absHysteresis: absHysteresis
            case .absRate: absRate
            case .relRate: relRate
            case .wheel: wheel
            case .bounceKeys: bounceKeys
            case .slowKeys: slowKeys
            }
        }
        @inline(__always) set {
            switch kind {
            case .keyChatter: keyChatter = newValue
            case .debounce: debounce = newValue
            case .absHysteresis: absHysteresis = newValue
            case .absRate: absRate = newValue
            case .relRate: relRate = newValue
            case .wheel: wheel = newValue
            case .bounceKeys: bounceKeys = newValue; accessibilityCounted = accessibilityCounted || newValue != FilterCounts()
            case .slowKeys: slowKeys = newValue; accessibilityCounted = accessibilityCounted || newValue != FilterCounts()
            }
        }
    }

    /// The filters that counted anything (any of their counts not zero), with their counts.
    public var filters: [FilterKind: FilterCounts] {
        var counts: [FilterKind: FilterCounts] = [:]
        for kind in FilterKind.allCases where self[kind] != FilterCounts() { counts[kind] = self[kind] }
        return counts
    }
}

/// A device's current state: a consistent snapshot taken at a frame boundary.
public struct DeviceState: Hashable, Sendable, Codable {
    /// The device.
    public var info: DeviceInfo
    /// `EV_KEY` codes held down (value 1 or 2), ascending.
    public var keysDown: [UInt16]
    /// Current value per absolute axis (initial values from absinfo, then the filtered stream).
    public var absolute: [UInt16: Int32]
    /// `EV_SW` codes that are on, ascending.
    public var switchesOn: [UInt16]
    /// `EV_LED` codes that are on, ascending.
    public var ledsOn: [UInt16]
    /// Time of the last frame (monotonic ns), nil before the first.
    public var lastEventTime: Int64?
    /// Counters.
    public var counters: DeviceCounters
}
