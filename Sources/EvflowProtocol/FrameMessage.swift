#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// A `FRAME` message (docs/protocol.md §5): one report of one device, on one stream.
///
/// `Codable` with the wire's shape, so a client decodes it with `JSONDecoder`. The server does
/// not encode frames this way: `MessageWriter.appendFrame` writes the same bytes by hand, with
/// cached names and no allocation, because FRAME is the one message sent per event — the
/// `P1` row of docs/benchmarks.md measures both encoders on the same frame in the same run.
/// Event types and codes are written as names from the `EventNaming` in the coder's
/// `userInfo[.eventNaming]` (`.standard` when absent).
public struct FrameMessage: Hashable, Sendable, Codable {
    /// The device.
    public var device: DeviceID
    /// Filtered or raw.
    public var stream: StreamKind
    /// The frame: its time and its (selected) events.
    public var frame: InputFrame

    /// Creates a message.
    public init(device: DeviceID, stream: StreamKind, frame: InputFrame) {
        self.device = device
        self.stream = stream
        self.frame = frame
    }

    private enum Key: String, CodingKey {
        case `class`, device, time, stream, events
    }

    private enum EventKey: String, CodingKey {
        case type, code, value, time
    }

    public func encode(to encoder: any Encoder) throws {
        let naming = encoder.userInfo[.eventNaming] as? EventNaming ?? .standard
        var c = encoder.container(keyedBy: Key.self)
        try c.encode("FRAME", forKey: .class)
        try c.encode(device.rawValue, forKey: .device)
        try c.encode(frame.time, forKey: .time)
        try c.encode(stream.rawValue, forKey: .stream)
        var events = c.nestedUnkeyedContainer(forKey: .events)
        for e in frame.events {
            var ec = events.nestedContainer(keyedBy: EventKey.self)
            if let name = naming.typeName(e.type) { try ec.encode(name, forKey: .type) } else { try ec.encode(e.type, forKey: .type) }
            if let name = naming.codeName(e.type, e.code) { try ec.encode(name, forKey: .code) } else { try ec.encode(e.code, forKey: .code) }
            try ec.encode(e.value, forKey: .value)
            if e.time != frame.time { try ec.encode(e.time, forKey: .time) }
        }
    }

    public init(from decoder: any Decoder) throws {
        let naming = decoder.userInfo[.eventNaming] as? EventNaming ?? .standard
        let c = try decoder.container(keyedBy: Key.self)
        device = DeviceID(rawValue: try c.decode(String.self, forKey: .device))
        let streamText = try c.decode(String.self, forKey: .stream)
        guard let stream = StreamKind(rawValue: streamText) else {
            throw DecodingError.dataCorruptedError(forKey: .stream, in: c, debugDescription: "unknown stream '\(streamText)'")
        }
        self.stream = stream
        let time = try c.decode(Int64.self, forKey: .time)
        var list = try c.nestedUnkeyedContainer(forKey: .events)
        var events: [InputEvent] = []
        while !list.isAtEnd {
            let ec = try list.nestedContainer(keyedBy: EventKey.self)
            let type: UInt16
            if let name = try? ec.decode(String.self, forKey: .type) {
                guard let t = naming.typeNumber(name) ?? UInt16(name) else {
                    throw DecodingError.dataCorruptedError(forKey: .type, in: ec, debugDescription: "unknown event type '\(name)'")
                }
                type = t
            } else {
                type = try ec.decode(UInt16.self, forKey: .type)
            }
            let code: UInt16
            if let name = try? ec.decode(String.self, forKey: .code) {
                guard let n = naming.codeNumber(name).flatMap({ $0.type == type ? $0.code : nil }) ?? UInt16(name) else {
                    throw DecodingError.dataCorruptedError(forKey: .code, in: ec, debugDescription: "unknown event code '\(name)'")
                }
                code = n
            } else {
                code = try ec.decode(UInt16.self, forKey: .code)
            }
            events.append(InputEvent(time: try ec.decodeIfPresent(Int64.self, forKey: .time) ?? time, type: type,
                                     code: code, value: try ec.decode(Int32.self, forKey: .value)))
        }
        frame = InputFrame(time: time, events: events)
    }
}

extension CodingUserInfoKey {
    /// The `EventNaming` a protocol type's `Codable` conformance writes and reads names with.
    public static let eventNaming = CodingUserInfoKey(rawValue: "evflow.eventNaming")!
}
