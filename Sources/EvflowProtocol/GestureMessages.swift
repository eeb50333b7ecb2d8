import InputModel

/// `GESTURE`: one gesture of a key of a watched device (1.5, docs/protocol.md §5 and
/// docs/gestures.md), to watchers of the `gestures` stream.
public struct GestureMessage: Hashable, Sendable {
    /// The device's id.
    public var device: DeviceID
    /// The gesture (its time, key code, kind and count).
    public var event: GestureEvent

    /// A gesture message.
    public init(device: DeviceID, event: GestureEvent) {
        self.device = device
        self.event = event
    }
}

extension MessageWriter {
    /// `GESTURE`: `{"class":"GESTURE","device":…,"time":…,"code":"KEY_F13","gesture":"double","count":2}`.
    /// For a client that gets keys hidden, a key's code is `KEY_UNKNOWN` as in `FRAME`, but
    /// for non-text keys (`KeyPrivacy.hidesGesture`); buttons stay.
    public mutating func appendGesture(device: DeviceID, _ g: GestureEvent, keys: KeyVisibility = .visible) {
        json.beginObject()
        json.key("class"); json.string("GESTURE")
        json.key("device"); json.string(device.rawValue)
        json.key("time"); json.int(g.time)
        let hidden = keys == .hidden && KeyPrivacy.hidesGesture(code: g.code)
        json.key("code"); names.writeCode(type: EventType.key, code: hidden ? KeyPrivacy.placeholder : g.code, to: &json)
        json.key("gesture"); json.string(g.gesture.rawValue)
        json.key("count"); json.int(Int64(g.count))
        json.endObject()
        json.endLine()
    }

    /// A device summary's `gestures` member (1.5): the codes and the gestures computed for them.
    mutating func writeGestures(_ g: DeviceGestures) {
        json.key("gestures")
        json.beginObject()
        json.key("codes")
        json.beginArray()
        for code in g.codes { names.writeCode(type: EventType.key, code: code, to: &json) }
        json.endArray()
        json.key("kinds")
        json.beginArray()
        for k in g.kinds { json.string(k.rawValue) }
        json.endArray()
        json.endObject()
    }
}

extension MessageDecoder {
    func gesture(_ o: Obj) throws(DecodingFailure) -> GestureMessage {
        guard let kind = GestureKind(rawValue: try o.string("gesture")) else { throw o.wrong("gesture") }
        let event = GestureEvent(time: try o.int("time"), code: try code(try o.required("code"), type: EventType.key),
                                 gesture: kind, count: Int(try o.int("count")))
        return GestureMessage(device: DeviceID(rawValue: try o.string("device")), event: event)
    }

    func gestures(_ value: JSONValue) throws(DecodingFailure) -> DeviceGestures {
        let o = try Obj(value, in: "gestures")
        let codes = try o.array("codes").map { v throws(DecodingFailure) in try code(v, type: EventType.key) }
        var kinds: [GestureKind] = []
        for v in try o.array("kinds") {
            // A gesture this client does not know is left out, as unknown classes are.
            if case .string(let s) = v, let k = GestureKind(rawValue: s) { kinds.append(k) }
        }
        return DeviceGestures(codes: codes, kinds: kinds)
    }
}
