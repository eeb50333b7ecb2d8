import InputModel

/// Encodes every server message of docs/protocol.md, one line each, into a reusable buffer.
///
/// Use one writer per connection or per encoding thread: `reset()`, append one or more
/// messages, hand `bytes` to the socket (e.g. `ByteBuffer.writeBytes(writer.bytes)` in a NIO
/// handler), repeat. Every `append…` writes exactly one complete line ending in `\n`, so
/// several messages can be batched in one write and a receiver never sees a partial object.
/// Optional members are left out when nil (§3), so writers never emit `null` for them.
public struct MessageWriter: Sendable {
    /// The encoded messages so far.
    public internal(set) var json: JSONWriter
    /// Names of types and codes.
    public let names: EventNameCache

    /// Creates a writer.
    public init(names: EventNameCache = .standard, capacity: Int = 4096) {
        json = JSONWriter(capacity: capacity)
        self.names = names
    }

    /// The bytes of the messages appended since the last `reset()`.
    public var bytes: [UInt8] { json.bytes }

    /// Forgets the messages, keeping the buffer's storage.
    public mutating func reset() { json.reset() }

    // The responses and notices are in MessageWriter+Responses.swift, the members several of
    // them share (a device, code values, counts) in MessageWriter+DeviceMembers.swift, and the
    // sensor messages in SensorMessages.swift; here: requests, FRAME and the line's pieces.

    // MARK: - Requests (what a client sends)

    /// A request line: `Request.parse` reads it back as an equal `Request` (the parser's
    /// normal form; a `DeviceSelector.name` spelt like an id or a class name reads back as
    /// that id or class, as it would from any client).
    public mutating func appendRequest(_ request: Request) {
        json.beginObject()
        json.key("class"); json.string(request.requestClass)
        switch request.kind {
        case .devices, .stats, .unwatch, .ping, .metrics, .latency: break
        case .state(let device): json.key("device"); json.string(device)
        case .watch(let watch): writeWatchMembers(watch)
        case .accessibility(let request): writeAccessibilityMembers(request)
        }
        writeTag(request.tag)
        endMessage()
    }

    // MARK: - Stream messages (hot path)

    /// `FRAME`: the events of `frame` that `selection` passes, key codes hidden when `keys`
    /// is `.hidden` (`KeyPrivacy.redacted`). Writes nothing and returns false when no event
    /// is left (an empty frame is not sent).
    @discardableResult
    public mutating func appendFrame(device: DeviceID, stream: StreamKind, frame: InputFrame,
                                     selection: EventSelection = .all, keys: KeyVisibility = .visible) -> Bool {
        let mark = json.bytes.count
        begin("FRAME")
        json.key("device"); json.string(device.rawValue)
        json.key("time"); json.int(frame.time)
        json.key("stream"); json.string(stream.rawValue)
        json.key("events")
        json.beginArray()
        var any = false
        let hideKeys = keys == .hidden
        for event in frame.events where selection.matches(type: event.type, code: event.code) {
            guard let e = hideKeys ? KeyPrivacy.redacted(event) : event else { continue }
            any = true
            json.beginObject()
            json.key("type"); names.writeType(e.type, to: &json)
            json.key("code"); names.writeCode(type: e.type, code: e.code, to: &json)
            json.key("value"); json.int(Int64(e.value))
            if e.time != frame.time { json.key("time"); json.int(e.time) }
            json.endObject()
        }
        guard any else {
            json.bytes.removeSubrange(mark...)
            json.needsComma = false   // back at top level, as before `begin`
            return false
        }
        json.endArray()
        endMessage()
        return true
    }

    // MARK: - Pieces

    mutating func begin(_ cls: StaticString) {
        json.beginObject()
        json.key("class")
        json.bytes.append(UInt8(ascii: "\""))
        cls.withUTF8Buffer { json.bytes.append(contentsOf: $0) }
        json.bytes.append(UInt8(ascii: "\""))
        json.needsComma = true
    }

    mutating func endMessage() {
        json.endObject()
        json.endLine()
    }

    mutating func writeTag(_ tag: RequestTag?) {
        guard let tag else { return }
        json.key("id")
        writeTagValue(tag)
    }

    mutating func writeTagValue(_ tag: RequestTag) {
        switch tag {
        case .string(let s): json.string(s)
        case .integer(let n): json.int(n)
        }
    }
}
