import EvflowProtocol

/// A JSON value with ordered object members, written deterministically (no whitespace): the
/// documents the bridge publishes are compared byte for byte to skip unchanged republishing.
/// The text comes from the protocol's `JSONWriter`, so a device name is escaped exactly as
/// the socket escapes it.
public indirect enum JSON: Hashable, Sendable {
    case string(String)
    case int(Int64)
    /// A number that may have a fraction (a sensor value); a value JSON cannot hold is `null`.
    case number(Double)
    case bool(Bool)
    case array([JSON])
    /// Members in the order given.
    case object([(String, JSON)])

    public static func == (a: JSON, b: JSON) -> Bool { a.bytes == b.bytes }
    public func hash(into h: inout Hasher) { h.combine(bytes) }

    /// The value as UTF-8 JSON text.
    public var bytes: [UInt8] {
        var w = JSONWriter(capacity: 256)
        write(to: &w)
        return w.bytes
    }

    /// The value as text.
    public var text: String { String(decoding: bytes, as: UTF8.self) }

    func write(to w: inout JSONWriter) {
        switch self {
        case .string(let s): w.string(s)
        case .int(let n): w.int(n)
        case .number(let d): w.double(d)
        case .bool(let b): w.bool(b)
        case .array(let items):
            w.beginArray()
            for v in items { v.write(to: &w) }
            w.endArray()
        case .object(let members):
            w.beginObject()
            for (k, v) in members {
                w.key(k)
                v.write(to: &w)
            }
            w.endObject()
        }
    }
}
