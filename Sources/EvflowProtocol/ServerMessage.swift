#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// A server message (docs/protocol.md §2, §4–§6) as a client reads it: the same types the
/// server's `MessageWriter` encodes, decoded back from one line.
///
/// `decode` is the inverse of the writer for everything the wire carries: a message encoded
/// by `MessageWriter` and decoded here compares equal to what was encoded (the protocol tests
/// check this per class), except that a `DEVICES` entry carries only the summary members.
/// Unknown classes decode to `.other` and unknown members are ignored, as §3 asks of clients.
public enum ServerMessage: Hashable, Sendable {
    /// `VERSION`: the greeting; `keys` is nil from a server older than 1.2 (or a value this
    /// client does not know).
    case version(release: String, protoMajor: Int, protoMinor: Int, keys: KeyVisibility?)
    /// `DEVICES` response: device summaries, and the sensors (1.4).
    case devices([DeviceInfo], sensors: [SensorInfo] = [], tag: RequestTag?)
    /// `STATE` response.
    case state(DeviceStateReport, tag: RequestTag?)
    /// `STATE` response for a sensor (1.4).
    case sensorState(SensorStateReport, tag: RequestTag?)
    /// `STATS` response.
    case stats(ServerStats, tag: RequestTag?)
    /// `WATCH` response: the selection as the server understood it, and the matching devices.
    case watch(WatchRequest, matched: [DeviceID], tag: RequestTag?)
    /// `UNWATCH` response.
    case unwatch(tag: RequestTag?)
    /// `PING` response.
    case ping(now: Int64, tag: RequestTag?)
    /// `METRICS` response: the exposition text and its format.
    case metrics(text: String, format: String, tag: RequestTag?)
    /// `LATENCY` response.
    case latency(LatencyReport, tag: RequestTag?)
    /// `ERROR`.
    case error(ErrorReply)
    /// `CLOSE`: the last message before the server closes the connection.
    case close(CloseNotice)
    /// `FRAME`: one report from a device.
    case frame(FrameMessage)
    /// `DEVICE`: a device was added, removed, or could not be opened.
    case device(DeviceChange)
    /// `SAMPLE`: one sample of a sensor (1.4).
    case sample(SampleMessage)
    /// `SENSOR`: a watched sensor came or went (1.4).
    case sensor(SensorChange)
    /// A class this client does not know (a later minor version's).
    case other(class: String)

    /// The message's wire class; nil for a class this client does not know.
    public var wireClass: MessageClass? {
        switch self {
        case .version: return .version
        case .devices: return .devices
        case .state, .sensorState: return .state
        case .stats: return .stats
        case .watch: return .watch
        case .unwatch: return .unwatch
        case .ping: return .ping
        case .metrics: return .metrics
        case .latency: return .latency
        case .error: return .error
        case .close: return .close
        case .frame: return .frame
        case .device: return .device
        case .sample: return .sample
        case .sensor: return .sensor
        case .other: return nil
        }
    }

    /// The message's `class`.
    public var messageClass: String {
        if case .other(let c) = self { return c }
        return wireClass?.rawValue ?? ""
    }

    /// Decodes one line (without its terminator).
    public static func decode(_ line: some Collection<UInt8>, naming: EventNaming = .standard) throws(DecodingFailure) -> ServerMessage {
        let data = Data(line)
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw DecodingFailure("not valid JSON")
        }
        guard case .object(let o) = value else { throw DecodingFailure("not a JSON object") }
        if case .string("FRAME")? = o["class"] {
            // The one message a watcher gets per event: its own Codable type.
            let decoder = JSONDecoder()
            decoder.userInfo[.eventNaming] = naming
            do {
                return .frame(try decoder.decode(FrameMessage.self, from: data))
            } catch {
                throw DecodingFailure("FRAME: \(error)")
            }
        }
        var d = MessageDecoder(object: o, naming: naming)
        return try d.decode()
    }

    /// Decodes one line given as text.
    public static func decode(_ line: String, naming: EventNaming = .standard) throws(DecodingFailure) -> ServerMessage {
        try decode(Array(line.utf8), naming: naming)
    }
}

/// Why a server line could not be decoded.
public struct DecodingFailure: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong, for people.
    public var description: String
    /// Creates a failure.
    public init(_ description: String) { self.description = description }
}

/// An `ERROR` as it is on the wire (the server's `ProtocolError`, less what only it knows).
public struct ErrorReply: Hashable, Sendable {
    /// The text for people.
    public var message: String
    /// The failed request's class, when it had a valid one.
    public var requestClass: String?
    /// The request member at fault.
    public var field: String?
    /// The failed request's `id`.
    public var tag: RequestTag?

    /// Creates an error reply.
    public init(message: String, requestClass: String? = nil, field: String? = nil, tag: RequestTag? = nil) {
        self.message = message
        self.requestClass = requestClass
        self.field = field
        self.tag = tag
    }

    /// The reply the server sends for `error`.
    public init(_ error: ProtocolError) {
        self.init(message: error.message, requestClass: error.requestClass, field: error.field, tag: error.tag)
    }
}

/// A `CLOSE` as it is on the wire.
public struct CloseNotice: Hashable, Sendable {
    /// The reason as sent (`slow-consumer`, `idle`, ...).
    public var reasonText: String
    /// What the server says about it.
    public var message: String

    /// Creates a notice.
    public init(reason: CloseReason, message: String) {
        reasonText = reason.rawValue
        self.message = message
    }

    /// Creates a notice with a reason this client may not know.
    public init(reasonText: String, message: String) {
        self.reasonText = reasonText
        self.message = message
    }

    /// The reason, nil for one this client does not know.
    public var reason: CloseReason? { CloseReason(rawValue: reasonText) }
}

/// Reads the members of one decoded server message.
struct MessageDecoder {
    let object: [String: JSONValue]
    let naming: EventNaming

    mutating func decode() throws(DecodingFailure) -> ServerMessage {
        guard case .string(let cls)? = object["class"] else { throw DecodingFailure("no string member 'class'") }
        let o = Obj(object, in: cls)
        switch cls {
        case "VERSION":
            return .version(release: try o.string("release"), protoMajor: Int(try o.int("proto_major")),
                            protoMinor: Int(try o.int("proto_minor")),
                            keys: try o.optionalString("keys").flatMap { KeyVisibility(rawValue: $0) })
        case "DEVICES":
            return .devices(try o.array("devices").map { v throws(DecodingFailure) in try device(v, detail: false) },
                            sensors: try (o.optionalArray("sensors") ?? []).map { v throws(DecodingFailure) in try sensor(v, detail: false) },
                            tag: try tag(o))
        case "STATE":
            if o.value("sensor") != nil { return .sensorState(try sensorState(o), tag: try tag(o)) }
            return .state(try stateReport(o), tag: try tag(o))
        case "SAMPLE":
            return .sample(try sample(o))
        case "SENSOR":
            return .sensor(try sensorNotice(o))
        case "STATS":
            return .stats(try stats(o), tag: try tag(o))
        case "WATCH":
            return try watch(o)
        case "UNWATCH":
            return .unwatch(tag: try tag(o))
        case "PING":
            return .ping(now: try o.int("now"), tag: try tag(o))
        case "METRICS":
            return .metrics(text: try o.string("text"), format: try o.string("format"), tag: try tag(o))
        case "LATENCY":
            return .latency(try latency(o), tag: try tag(o))
        case "ERROR":
            return .error(ErrorReply(message: try o.string("message"), requestClass: try o.optionalString("request_class"),
                                     field: try o.optionalString("field"), tag: try tag(o)))
        case "CLOSE":
            return .close(CloseNotice(reasonText: try o.string("reason"), message: try o.string("message")))
        case "DEVICE":
            let info = try device(try o.required("device"), detail: false)
            switch try o.string("action") {
            case "added": return .device(.added(info))
            case "removed": return .device(.removed(info))
            case "inaccessible": return .device(.inaccessible(info, reason: try o.optionalString("reason") ?? ""))
            case let a: throw DecodingFailure("DEVICE: unknown action '\(a)'")
            }
        default:
            return .other(class: cls)
        }
    }

    func tag(_ o: Obj) throws(DecodingFailure) -> RequestTag? {
        switch o.object["id"] {
        case nil, .null?: return nil
        case .string(let s)?: return .string(s)
        case .integer(let n)?: return .integer(n)
        default: throw o.wrong("id")
        }
    }

    func output(_ value: JSONValue) throws(DecodingFailure) -> DeviceOutputStatus {
        let o = try Obj(value, in: "output")
        guard let mode = OutputMode(rawValue: try o.string("mode")) else { throw o.wrong("mode") }
        guard let grab = DeviceOutputStatus.Grab(rawValue: try o.string("grab")) else { throw o.wrong("grab") }
        return DeviceOutputStatus(mode: mode, virtualNode: try o.optionalString("virtual_node"), grab: grab,
                                  reason: try o.optionalString("reason"))
    }

    func device(_ value: JSONValue, detail: Bool) throws(DecodingFailure) -> DeviceInfo {
        let o = try Obj(value, in: "device")
        func hex(_ k: String) throws(DecodingFailure) -> UInt16 {
            guard let v = UInt16(try o.string(k), radix: 16) else { throw o.wrong(k) }
            return v
        }
        let inputID = InputID(bustype: try hex("bus"), vendor: try hex("vendor"), product: try hex("product"),
                              version: try hex("version"))
        var classes = Set<DeviceClass>()
        for c in try o.array("classes") {
            guard case .string(let s) = c else { throw o.wrong("classes") }
            if let cls = DeviceClass(rawValue: s) { classes.insert(cls) }   // unknown classes: ignored
        }
        var info = DeviceInfo(name: try o.string("name"), inputID: inputID, phys: try o.optionalString("phys"),
                              uniq: try o.optionalString("uniq"), devnode: try o.optionalString("devnode"),
                              classes: classes, id: DeviceID(rawValue: try o.string("id")))
        if let v = o.object["output"] { info.output = try output(v) }
        guard detail else { return info }
        for (typeKey, codes) in try o.optionalObject("capabilities") ?? [:] {
            let type = try typeNumber(typeKey)
            guard case .array(let list) = codes else { throw o.wrong("capabilities") }
            info.capabilities[type] = Set(try list.map { v throws(DecodingFailure) in try code(v, type: type) })
        }
        for (codeKey, v) in try o.optionalObject("abs_info") ?? [:] {
            let a = try Obj(v, in: "abs_info")
            func i(_ k: String) throws(DecodingFailure) -> Int32 { Int32(truncatingIfNeeded: try a.int(k)) }
            info.absInfo[try code(.string(codeKey), type: EventType.abs)] =
                AbsInfo(value: try i("value"), minimum: try i("min"), maximum: try i("max"), fuzz: try i("fuzz"),
                        flat: try i("flat"), resolution: try i("resolution"))
        }
        for p in try o.optionalArray("props") ?? [] {
            switch p {
            case .integer(let n): info.inputProperties.insert(UInt16(truncatingIfNeeded: n))
            case .string(let s):
                guard let n = EventNames.property(named: s) ?? UInt16(s) else { throw o.wrong("props") }
                info.inputProperties.insert(n)
            default: throw o.wrong("props")
            }
        }
        for (k, v) in try o.optionalObject("udev") ?? [:] {
            guard case .string(let s) = v else { throw o.wrong("udev") }
            info.properties[k] = s
        }
        return info
    }

    func typeNumber(_ text: String) throws(DecodingFailure) -> UInt16 {
        guard let t = naming.typeNumber(text) ?? UInt16(text) else { throw DecodingFailure("unknown event type '\(text)'") }
        return t
    }

    /// A type as sent in an event: a name or an integer.
    func type(_ value: JSONValue) throws(DecodingFailure) -> UInt16 {
        switch value {
        case .string(let s): return try typeNumber(s)
        case .integer(let n) where n >= 0 && n <= Int64(UInt16.max): return UInt16(n)
        default: throw DecodingFailure("bad event type \(value)")
        }
    }

    /// A code of `type`: its name, an integer, or (as an object key) its decimal digits.
    func code(_ value: JSONValue, type: UInt16) throws(DecodingFailure) -> UInt16 {
        switch value {
        case .string(let s):
            if let c = naming.codeNumber(s), c.type == type { return c.code }
            if let n = UInt16(s) { return n }
            throw DecodingFailure("unknown event code '\(s)'")
        case .integer(let n) where n >= 0 && n <= Int64(UInt16.max): return UInt16(n)
        default: throw DecodingFailure("bad event code \(value)")
        }
    }

    func codeValues(_ o: Obj, _ key: String, type: UInt16) throws(DecodingFailure) -> [UInt16: Int32] {
        var out: [UInt16: Int32] = [:]
        for (k, v) in try o.optionalObject(key) ?? [:] {
            guard case .integer(let n) = v else { throw o.wrong(key) }
            out[try code(.string(k), type: type)] = Int32(truncatingIfNeeded: n)
        }
        return out
    }

    func counts(_ o: Obj, _ key: String) throws(DecodingFailure) -> [String: UInt64] {
        var out: [String: UInt64] = [:]
        for (k, v) in try o.optionalObject(key) ?? [:] {
            guard case .integer(let n) = v, n >= 0 else { throw o.wrong(key) }
            out[k] = UInt64(n)
        }
        return out
    }

    func stateReport(_ o: Obj) throws(DecodingFailure) -> DeviceStateReport {
        var r = DeviceStateReport(device: try device(try o.required("device"), detail: true))
        r.keysDown = try o.array("keys_down").map { v throws(DecodingFailure) in try code(v, type: EventType.key) }
        r.abs = try codeValues(o, "abs", type: EventType.abs)
        r.switches = try codeValues(o, "switches", type: EventType.sw)
        r.leds = try codeValues(o, "leds", type: EventType.led)
        r.lastEventTime = try o.optionalInt("last_event")
        let c = try Obj(try o.required("counters"), in: "counters")
        func u(_ k: String) throws(DecodingFailure) -> UInt64 { UInt64(clamping: try c.int(k)) }
        r.counters = DeviceCounters(framesIn: try u("frames_in"), eventsIn: try u("events_in"),
                                    framesOut: try u("frames_out"), eventsOut: try u("events_out"),
                                    synDropped: try u("syn_dropped"),
                                    mscDropped: UInt64(clamping: try c.optionalInt("msc_dropped") ?? 0),
                                    droppedByFilter: try counts(c, "dropped"))
        return r
    }

    func latency(_ o: Obj) throws(DecodingFailure) -> LatencyReport {
        guard let clock = LatencyClock(rawValue: try o.string("clock")) else { throw o.wrong("clock") }
        func stages(_ v: JSONValue, _ context: String) throws(DecodingFailure) -> [LatencyStage: LatencySummary] {
            let s = try Obj(v, in: context)
            var out: [LatencyStage: LatencySummary] = [:]
            for (name, value) in s.object {
                guard let stage = LatencyStage(rawValue: name) else { continue }   // a later version's
                let m = try Obj(value, in: "\(context).\(name)")
                func u(_ k: String) throws(DecodingFailure) -> UInt64 { UInt64(clamping: try m.int(k)) }
                out[stage] = LatencySummary(count: try u("count"), p50: try u("p50"), p90: try u("p90"),
                                            p99: try u("p99"), p999: try u("p99_9"), max: try u("max"))
            }
            return out
        }
        var report = LatencyReport(clock: clock, total: try stages(try o.required("total"), "total"))
        for (id, v) in try o.optionalObject("devices") ?? [:] {
            report.devices[DeviceID(rawValue: id)] = try stages(v, "devices")
        }
        return report
    }

    func stats(_ o: Obj) throws(DecodingFailure) -> ServerStats {
        var closed: [CloseReason: UInt64] = [:]
        for (k, n) in try counts(o, "closed") {
            if let reason = CloseReason(rawValue: k) { closed[reason] = n }
        }
        var list: [ClientStats] = []
        for v in try o.array("client_list") {
            let c = try Obj(v, in: "client_list")
            let watching = try c.optionalBool("watching") ?? false
            var stream: StreamKind?
            if watching, let s = try c.optionalString("stream") {
                guard let k = StreamKind(rawValue: s) else { throw c.wrong("stream") }
                stream = k
            }
            list.append(ClientStats(
                client: UInt64(clamping: try c.int("client")),
                pid: try c.optionalInt("pid").map { Int32(truncatingIfNeeded: $0) },
                uid: try c.optionalInt("uid").map { UInt32(truncatingIfNeeded: $0) },
                tag: try tag(c), stream: stream, sent: UInt64(clamping: try c.int("sent")),
                dropped: UInt64(clamping: try c.int("dropped")), buffered: Int(try c.int("buffered"))))
        }
        var s = ServerStats(release: try o.string("release"), uptime: try o.number("uptime"), now: try o.int("now"),
                            devices: Int(try o.int("devices")), clients: Int(try o.int("clients")),
                            watchers: Int(try o.int("watchers")), liveResources: Int(try o.int("live_resources")),
                            droppedByFilter: try counts(o, "dropped"), closed: closed, clientList: list)
        for (id, v) in try o.optionalObject("device_dropped") ?? [:] {
            s.deviceDropped[DeviceID(rawValue: id)] = try counts(Obj([id: v], in: "device_dropped"), id)
        }
        for (id, v) in try o.optionalObject("device_output") ?? [:] {
            let c = try Obj(v, in: "device_output")
            s.deviceOutput[DeviceID(rawValue: id)] = DeviceOutputCounters(framesWritten: Int(try c.int("frames_written")),
                                                                          writeErrors: Int(try c.int("write_errors")))
        }
        return s
    }

    func watch(_ o: Obj) throws(DecodingFailure) -> ServerMessage {
        // The response less `matched` is a WATCH request for the same selection (§4): read
        // it with the request parser, so both sides agree on the selection's syntax.
        var request = object
        let matchedValue = request.removeValue(forKey: "matched")
        let parsed: Request
        do {
            parsed = try Request.parse(object: request, naming: naming)
        } catch {
            throw DecodingFailure("WATCH response: \(error.message)")
        }
        guard case .watch(let w) = parsed.kind else { throw DecodingFailure("WATCH response is not a WATCH") }
        var matched: [DeviceID] = []
        if let matchedValue {
            guard case .array(let ids) = matchedValue else { throw o.wrong("matched") }
            for id in ids {
                guard case .string(let s) = id else { throw o.wrong("matched") }
                matched.append(DeviceID(rawValue: s))
            }
        }
        return .watch(w, matched: matched, tag: parsed.tag)
    }
}

/// Typed access to the members of one JSON object, with errors that name the member.
struct Obj {
    let object: [String: JSONValue]
    let context: String

    init(_ object: [String: JSONValue], in context: String) {
        self.object = object
        self.context = context
    }

    init(_ value: JSONValue, in context: String) throws(DecodingFailure) {
        guard case .object(let o) = value else { throw DecodingFailure("\(context): not an object") }
        self.init(o, in: context)
    }

    func wrong(_ key: String) -> DecodingFailure { DecodingFailure("\(context): bad member '\(key)'") }

    func value(_ key: String) -> JSONValue? {
        switch object[key] {
        case nil, .null?: return nil
        case let v?: return v
        }
    }

    func required(_ key: String) throws(DecodingFailure) -> JSONValue {
        guard let v = value(key) else { throw DecodingFailure("\(context): missing member '\(key)'") }
        return v
    }

    /// The member as `T` (by `extract`), nil when it is absent or null; a member of another
    /// type is wrong. Every typed accessor below is this or `required(_:_:)`.
    func optional<T>(_ key: String, _ extract: (JSONValue) -> T?) throws(DecodingFailure) -> T? {
        guard let v = value(key) else { return nil }
        guard let t = extract(v) else { throw wrong(key) }
        return t
    }

    /// The member as `T`: missing when absent or null, wrong when of another type.
    func required<T>(_ key: String, _ extract: (JSONValue) -> T?) throws(DecodingFailure) -> T {
        guard let t = try extract(required(key)) else { throw wrong(key) }
        return t
    }

    func string(_ key: String) throws(DecodingFailure) -> String { try required(key, \.stringValue) }
    func optionalString(_ key: String) throws(DecodingFailure) -> String? { try optional(key, \.stringValue) }
    func int(_ key: String) throws(DecodingFailure) -> Int64 { try required(key, \.integerValue) }
    func optionalInt(_ key: String) throws(DecodingFailure) -> Int64? { try optional(key, \.integerValue) }
    func number(_ key: String) throws(DecodingFailure) -> Double { try required(key, \.numberValue) }
    func optionalBool(_ key: String) throws(DecodingFailure) -> Bool? { try optional(key, \.boolValue) }
    func array(_ key: String) throws(DecodingFailure) -> [JSONValue] { try required(key, \.arrayValue) }
    func optionalArray(_ key: String) throws(DecodingFailure) -> [JSONValue]? { try optional(key, \.arrayValue) }
    func optionalObject(_ key: String) throws(DecodingFailure) -> [String: JSONValue]? { try optional(key, \.objectValue) }
}

/// A value's payload when it is of the kind asked for (an integer is a number too).
extension JSONValue {
    var stringValue: String? { if case .string(let s) = self { s } else { nil } }
    var integerValue: Int64? { if case .integer(let n) = self { n } else { nil } }
    var numberValue: Double? {
        switch self {
        case .integer(let n): Double(n)
        case .number(let d): d
        default: nil
        }
    }
    var boolValue: Bool? { if case .bool(let b) = self { b } else { nil } }
    var arrayValue: [JSONValue]? { if case .array(let a) = self { a } else { nil } }
    var objectValue: [String: JSONValue]? { if case .object(let o) = self { o } else { nil } }
}
