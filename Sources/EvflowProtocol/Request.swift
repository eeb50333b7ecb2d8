import InputModel

/// The client's tag for a request (`"id"`), copied into the response.
public enum RequestTag: Hashable, Sendable {
    /// A string of at most `ProtocolConstants.maxTagLength` UTF-8 bytes.
    case string(String)
    /// An integer.
    case integer(Int64)
}

/// Which stream a watcher wants.
public enum StreamKind: String, Hashable, Sendable {
    /// Events after the noise filters (the default).
    case filtered
    /// Events as read from the device.
    case raw
    /// The gestures of the devices' keys, from the filtered events (1.5, docs/gestures.md).
    case gestures
}

/// One request from a client, parsed from one line (docs/protocol.md §4).
public struct Request: Hashable, Sendable {
    /// What is asked for.
    public enum Kind: Hashable, Sendable {
        /// `DEVICES`: list devices.
        case devices
        /// `STATE`: one device's state; `device` is an id or an exact name, resolved by the server.
        case state(device: String)
        /// `STATS`: server statistics.
        case stats
        /// `WATCH`: start or replace the client's subscription.
        case watch(WatchRequest)
        /// `UNWATCH`: stop streaming.
        case unwatch
        /// `PING`: liveness check.
        case ping
        /// `METRICS`: counters and gauges in Prometheus' text exposition format (1.1).
        case metrics
        /// `LATENCY`: frame ages per stage and device (1.1).
        case latency
        /// `ACCESSIBILITY`: read or change one device's BounceKeys and SlowKeys live (1.6).
        case accessibility(AccessibilityRequest)
    }

    /// What is asked for.
    public var kind: Kind
    /// The client's `id` tag, if any.
    public var tag: RequestTag?

    /// Creates a request.
    public init(_ kind: Kind, tag: RequestTag? = nil) {
        self.kind = kind
        self.tag = tag
    }

    /// The request's wire class, also the class of its response.
    public var wireClass: MessageClass {
        switch kind {
        case .devices: return .devices
        case .state: return .state
        case .stats: return .stats
        case .watch: return .watch
        case .unwatch: return .unwatch
        case .ping: return .ping
        case .metrics: return .metrics
        case .latency: return .latency
        case .accessibility: return .accessibility
        }
    }

    /// The request's wire class as sent (`"DEVICES"`, ...).
    public var requestClass: String { wireClass.rawValue }
}

/// The parameters of a `WATCH` request.
public struct WatchRequest: Hashable, Sendable {
    /// Devices to watch; empty means all.
    public var devices: [DeviceSelector]
    /// Events to pass.
    public var events: EventSelection
    /// Filtered or raw events.
    public var stream: StreamKind
    /// At most this many stream messages per second, if set.
    public var maxRate: Double?
    /// Sensors to stream `SAMPLE`s of (1.4): `all`, ids, names or quantities; empty means none.
    public var sensors: [String]

    /// Creates watch parameters; the defaults watch every event of every device, filtered,
    /// and no sensor.
    public init(devices: [DeviceSelector] = [], events: EventSelection = .all,
                stream: StreamKind = .filtered, maxRate: Double? = nil, sensors: [String] = []) {
        self.devices = devices
        self.events = events
        self.stream = stream
        self.maxRate = maxRate
        self.sensors = sensors
    }

    /// Whether the device is selected (no selectors: every device).
    public func selects(_ device: DeviceInfo) -> Bool {
        devices.isEmpty || devices.contains { $0.matches(device) }
    }

    /// The selection with each entry of `devices` read against the devices evflowd has now
    /// (`present`), as `STATE` reads its `device`: the id of one of them first — whatever it
    /// looks like: `…#2`, a session's own id — then a class name, then the exact name of one
    /// of them. An entry that is none of these would select nothing and is refused
    /// (`unmatchedDevice`, `field` `devices`): a client asking for a device it cannot have
    /// gets an `ERROR`, not a stream that stays empty. The entries' text is unchanged, so
    /// the response still writes them as sent.
    public func resolved(among present: [DeviceInfo]) throws(ProtocolError) -> WatchRequest {
        var out = self
        let ids = Set(present.map(\.id.rawValue))
        let names = Set(present.map(\.name))
        out.devices = []
        for selector in devices {
            let text = selector.text
            if ids.contains(text) {
                out.devices.append(.id(DeviceID(rawValue: text)))
            } else if let c = DeviceClass(rawValue: text) {
                out.devices.append(.deviceClass(c))
            } else if names.contains(text) {
                out.devices.append(.name(text))
            } else {
                throw ProtocolError(.unmatchedDevice(text), requestClass: "WATCH")
            }
        }
        return out
    }
}

/// One entry of `WATCH`'s `devices`: an id, a udev class, or an exact name. Parsing classifies
/// by syntax alone; the server reads the entry again against its devices
/// (`WatchRequest.resolved(among:)`), so an id of any form selects its device.
public enum DeviceSelector: Hashable, Sendable {
    /// A stable device id (`bus:vendor:product-hash`).
    case id(DeviceID)
    /// Every device of a udev class.
    case deviceClass(DeviceClass)
    /// Devices with exactly this name.
    case name(String)

    /// Classifies one entry: id syntax first, then class names, otherwise a name.
    public init(parsing text: String) {
        if Self.looksLikeDeviceID(text) {
            self = .id(DeviceID(rawValue: text))
        } else if let c = DeviceClass(rawValue: text) {
            self = .deviceClass(c)
        } else {
            self = .name(text)
        }
    }

    /// Whether `device` is selected.
    public func matches(_ device: DeviceInfo) -> Bool {
        switch self {
        case .id(let id): return device.id == id
        case .deviceClass(let c): return device.classes.contains(c)
        case .name(let n): return device.name == n
        }
    }

    /// The entry as written on the wire.
    public var text: String {
        switch self {
        case .id(let id): return id.rawValue
        case .deviceClass(let c): return c.rawValue
        case .name(let n): return n
        }
    }

    /// `hhhh:hhhh:hhhh-hhhhhhhh`, lowercase hex, as `DeviceID` produces.
    static func looksLikeDeviceID(_ s: String) -> Bool {
        let u = Array(s.utf8)
        guard u.count == 23 else { return false }
        for (i, c) in u.enumerated() {
            switch i {
            case 4, 9: if c != UInt8(ascii: ":") { return false }
            case 14: if c != UInt8(ascii: "-") { return false }
            default:
                let hex = (c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9")) || (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "f"))
                if !hex { return false }
            }
        }
        return true
    }
}

/// The event types and codes a watcher selected (docs/protocol.md §4 WATCH).
///
/// An event passes when nothing was selected, or when its type is selected, or when its
/// type and code are. `matches` is on the hot path: a bit mask and a set lookup.
public struct EventSelection: Hashable, Sendable {
    /// One bit per selected type (types are `0...EV_MAX` = 0...31).
    public private(set) var typeMask: UInt32
    /// Selected (type, code) pairs as `type << 16 | code`.
    public private(set) var codeKeys: Set<UInt32>

    /// Every event.
    public static let all = EventSelection(types: [], codes: [])

    /// Creates a selection; types above `EV_MAX` are ignored.
    public init(types: some Sequence<UInt16>, codes: some Sequence<EventCode>) {
        var mask: UInt32 = 0
        for t in types where t <= EventType.max { mask |= 1 << UInt32(t) }
        typeMask = mask
        codeKeys = Set(codes.map(\.key))
    }

    /// Whether every event passes.
    public var isAll: Bool { typeMask == 0 && codeKeys.isEmpty }

    /// Selected types, ascending.
    public var types: [UInt16] { (0...EventType.max).filter { typeMask & (1 << UInt32($0)) != 0 } }

    /// Selected codes, ascending by type then code.
    public var codes: [EventCode] { codeKeys.sorted().map { EventCode(key: $0) } }

    /// Whether an event of this type and code passes.
    @inlinable
    public func matches(type: UInt16, code: UInt16) -> Bool {
        if typeMask == 0 && codeKeys.isEmpty { return true }
        if type <= EventType.max && typeMask & (1 << UInt32(type)) != 0 { return true }
        return !codeKeys.isEmpty && codeKeys.contains(UInt32(type) << 16 | UInt32(code))
    }
}

/// An event code together with its type (code numbers are only unique within a type).
public struct EventCode: Hashable, Sendable, Comparable {
    /// Event type (`EV_KEY`, ...).
    public var type: UInt16
    /// Code within the type.
    public var code: UInt16

    /// Creates a code.
    public init(type: UInt16, code: UInt16) {
        self.type = type
        self.code = code
    }

    init(key: UInt32) {
        type = UInt16(key >> 16)
        code = UInt16(key & 0xffff)
    }

    var key: UInt32 { UInt32(type) << 16 | UInt32(code) }

    public static func < (a: EventCode, b: EventCode) -> Bool { a.key < b.key }
}

extension Request {
    /// The request as one line, `\n` included: what a client sends (see
    /// `MessageWriter.appendRequest`).
    public func encoded(names: EventNameCache = .standard) -> [UInt8] {
        var w = MessageWriter(names: names, capacity: 256)
        w.appendRequest(self)
        return w.bytes
    }
}

extension WatchRequest {
    /// A selection from a client's words, checked as the server checks a `WATCH` (same
    /// errors): `devices` are ids, class names or device names; `types` names or decimal
    /// numbers; `codes` as in the request's `codes`; `maxRate` in (0, 100000]. Whether a
    /// `devices` entry names a device evflowd has only the server can tell
    /// (`resolved(among:)`).
    public static func checked(devices: [String] = [], types: [String] = [], codes: [String] = [],
                               stream: StreamKind = .filtered, maxRate: Double? = nil,
                               naming: EventNaming = .standard) throws(ProtocolError) -> WatchRequest {
        var object: [String: JSONValue] = ["class": .string("WATCH"), "stream": .string(stream.rawValue)]
        if !devices.isEmpty { object["devices"] = .array(devices.map { .string($0) }) }
        if !types.isEmpty {
            object["types"] = .array(types.map { t in
                if let n = Int64(t), t.allSatisfy({ $0.isASCII && $0.isNumber }) { return .integer(n) }
                return .string(t)
            })
        }
        if !codes.isEmpty { object["codes"] = .array(codes.map { .string($0) }) }
        if let maxRate { object["max_rate"] = .number(maxRate) }
        guard case .watch(let watch) = try Request.parse(object: object, naming: naming).kind else {
            preconditionFailure("a WATCH object parses as a WATCH")
        }
        return watch
    }
}
