import InputModel

/// One filter's value in an `ACCESSIBILITY` request (protocol 1.7): a time in milliseconds
/// (0 or `"off"`: off), or `"config"`: back to the configuration file's value.
public enum AccessibilityValue: Hashable, Sendable {
    /// Back to the configuration's value.
    case config
    /// This many milliseconds (0 = off), 0 ... `AccessibilityRequest.maxMilliseconds`.
    case milliseconds(Int64)
}

/// The parameters of an `ACCESSIBILITY` request: one device's BounceKeys and SlowKeys, read
/// (both nil) or changed live.
public struct AccessibilityRequest: Hashable, Sendable {
    /// The device: an id or an exact name, resolved by the server as `STATE` does.
    public var device: String
    /// BounceKeys' new value; nil: unchanged.
    public var bounceKeys: AccessibilityValue?
    /// SlowKeys' new value; nil: unchanged.
    public var slowKeys: AccessibilityValue?
    /// The longest time a request may set (a minute; a longer SlowKeys would make a keyboard
    /// that seems dead).
    public static let maxMilliseconds: Int64 = 60_000

    /// Creates the parameters.
    public init(device: String, bounceKeys: AccessibilityValue? = nil, slowKeys: AccessibilityValue? = nil) {
        self.device = device
        self.bounceKeys = bounceKeys
        self.slowKeys = slowKeys
    }
}

/// The `ACCESSIBILITY` response: what a device's filters are after the request.
public struct AccessibilityReport: Hashable, Sendable {
    /// The device's id.
    public var device: DeviceID
    /// BounceKeys' time in nanoseconds (0 = off).
    public var bounceKeys: Int64
    /// SlowKeys' time in nanoseconds (0 = off).
    public var slowKeys: Int64
    /// The filters whose value was set live (`"bounce_keys"`, `"slow_keys"`), not taken from
    /// the configuration.
    public var live: [String]
    /// Whether the device has keyboard keys (the filters act on nothing else).
    public var keys: Bool

    /// Creates a report.
    public init(device: DeviceID, bounceKeys: Int64, slowKeys: Int64, live: [String], keys: Bool) {
        self.device = device
        self.bounceKeys = bounceKeys
        self.slowKeys = slowKeys
        self.live = live
        self.keys = keys
    }
}

extension MessageWriter {
    /// `ACCESSIBILITY` response: times in milliseconds (a fraction when the configuration gave one).
    public mutating func appendAccessibility(_ report: AccessibilityReport, tag: RequestTag? = nil) {
        begin("ACCESSIBILITY")
        json.key("device"); json.string(report.device.rawValue)
        func ms(_ ns: Int64) {
            if ns % 1_000_000 == 0 { json.int(ns / 1_000_000) } else { json.double(Double(ns) / 1e6) }
        }
        json.key("bounce_keys"); ms(report.bounceKeys)
        json.key("slow_keys"); ms(report.slowKeys)
        json.key("live"); json.beginArray()
        for name in report.live { json.string(name) }
        json.endArray()
        json.key("keys"); json.bool(report.keys)
        writeTag(tag)
        endMessage()
    }

    /// The request's members after `class`.
    mutating func writeAccessibilityMembers(_ request: AccessibilityRequest) {
        json.key("device"); json.string(request.device)
        func value(_ v: AccessibilityValue) {
            switch v {
            case .config: json.string("config")
            case .milliseconds(let n): json.int(n)
            }
        }
        if let v = request.bounceKeys { json.key("bounce_keys"); value(v) }
        if let v = request.slowKeys { json.key("slow_keys"); value(v) }
    }
}

extension MessageDecoder {
    /// An `ACCESSIBILITY` response.
    func accessibility(_ o: Obj) throws(DecodingFailure) -> AccessibilityReport {
        func ns(_ key: String) throws(DecodingFailure) -> Int64 {
            switch try o.required(key) {
            case .integer(let n) where n >= 0 && n <= Int64.max / 1_000_000: return n * 1_000_000
            case .number(let d) where d >= 0 && d < 9.2e12: return Int64(d * 1e6)
            default: throw o.wrong(key)
            }
        }
        guard case .array(let list) = try o.required("live") else { throw o.wrong("live") }
        var live: [String] = []
        for item in list {
            guard case .string(let s) = item else { throw o.wrong("live") }
            live.append(s)
        }
        guard case .bool(let keys) = try o.required("keys") else { throw o.wrong("keys") }
        return AccessibilityReport(device: DeviceID(rawValue: try o.string("device")), bounceKeys: try ns("bounce_keys"),
                                   slowKeys: try ns("slow_keys"), live: live, keys: keys)
    }
}
