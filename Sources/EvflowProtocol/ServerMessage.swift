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
    /// `ACCESSIBILITY` response (1.6).
    case accessibility(AccessibilityReport, tag: RequestTag?)
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
    /// `GESTURE`: one gesture of a key (1.5).
    case gesture(GestureMessage)
    /// `BATTERY`: a device's battery changed (1.8).
    case battery(BatteryMessage)
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
        case .accessibility: return .accessibility
        case .error: return .error
        case .close: return .close
        case .frame: return .frame
        case .device: return .device
        case .sample: return .sample
        case .sensor: return .sensor
        case .gesture: return .gesture
        case .battery: return .battery
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
