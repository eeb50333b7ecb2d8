import InputModel

/// One live change of a device's accessibility filters (the `ACCESSIBILITY` request; what
/// `evflowctl accessibility` sends): per filter, nil leaves it as it is, `.config` goes back
/// to the configuration's value, `.time` sets it (ns; 0 = off).
public struct AccessibilityChange: Hashable, Sendable {
    /// A filter's new value.
    public enum Value: Hashable, Sendable {
        /// The configuration file's value again (the live one is forgotten).
        case config
        /// This time (ns; 0 switches the filter off), whatever the file says.
        case time(Int64)
    }

    /// BounceKeys.
    public var bounceKeys: Value?
    /// SlowKeys.
    public var slowKeys: Value?

    /// A change (nil: unchanged).
    public init(bounceKeys: Value? = nil, slowKeys: Value? = nil) {
        self.bounceKeys = bounceKeys
        self.slowKeys = slowKeys
    }
}

/// The live settings of the accessibility filters, by device id: set from the socket, they
/// win over the configuration file until the daemon stops (a reload keeps them; a device
/// plugged in again has the same id and finds them; nothing is written to disk). Confined to
/// the hub's scheduler.
struct LiveAccessibility: Sendable {
    /// Per device: the live BounceKeys and SlowKeys times (nil: the file's).
    private(set) var overrides: [DeviceID: (bounceKeys: Int64?, slowKeys: Int64?)] = [:]

    /// Applies `change` to `id`'s live settings.
    mutating func apply(_ change: AccessibilityChange, to id: DeviceID) {
        var o = overrides[id] ?? (nil, nil)
        switch change.bounceKeys {
        case nil: break
        case .config?: o.bounceKeys = nil
        case .time(let t)?: o.bounceKeys = t
        }
        switch change.slowKeys {
        case nil: break
        case .config?: o.slowKeys = nil
        case .time(let t)?: o.slowKeys = t
        }
        overrides[id] = o.bounceKeys == nil && o.slowKeys == nil ? nil : o
    }

    /// `settings` (the file's, for `id`) with the live values put in. A device without keyboard
    /// keys has no accessibility filters, live or not.
    func settings(_ settings: DeviceFilterSettings, for device: DeviceInfo) -> DeviceFilterSettings {
        guard let o = overrides[device.id], Self.hasKeyboardKeys(device) else { return settings }
        var s = settings
        s.accessibility.bounceKeys = o.bounceKeys ?? s.accessibility.bounceKeys
        s.accessibility.slowKeys = o.slowKeys ?? s.accessibility.slowKeys
        return s
    }

    /// Whether `device` reports a keyboard key (a code below `BTN_MISC` or from `KEY_OK`).
    static func hasKeyboardKeys(_ device: DeviceInfo) -> Bool {
        device.capabilities[EventType.key]?.contains(where: { !CodeRange.isButton($0) }) ?? false
    }
}

/// What a device's accessibility filters are now, and whether each is a live value.
public struct AccessibilityStatus: Hashable, Sendable {
    /// The device.
    public var device: DeviceID
    /// The settings in force.
    public var settings: AccessibilitySettings
    /// Whether BounceKeys' value was set live (else it is the configuration's).
    public var bounceKeysLive: Bool
    /// Whether SlowKeys' value was set live.
    public var slowKeysLive: Bool
    /// Whether the device has keyboard keys (without them the filters do nothing).
    public var hasKeys: Bool
}
