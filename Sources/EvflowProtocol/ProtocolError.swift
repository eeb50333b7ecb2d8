import InputModel

/// Why a request could not be acted on: sent to the client as an `ERROR` message.
///
/// `message` is the human-readable text of docs/protocol.md §6; `field` names the request
/// member at fault (nil when the line as a whole is wrong); `requestClass` is the request's
/// class when it had a valid one; `tag` is the request's `id`, copied into the reply.
public struct ProtocolError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// The line exceeded the limit (bytes).
        case lineTooLong(limit: Int)
        /// Not valid JSON (or not valid UTF-8).
        case notJSON
        /// Valid JSON, but not an object.
        case notAnObject
        /// A required member is missing (`class`, `STATE`'s `device`).
        case missingField(String)
        /// A member has the wrong JSON type; `expected` completes "must be ...".
        case wrongType(field: String, expected: String)
        /// `class` names no request.
        case unknownClass(String)
        /// `class` names a server message (`VERSION`, `FRAME`, ...), not a request.
        case notARequest(String)
        /// A member the request class does not have.
        case unknownField(String)
        /// A string that must name something is empty.
        case emptyValue(field: String)
        /// An event type name that does not exist.
        case unknownEventType(String, field: String)
        /// An event code name that does not exist (or not for the given type).
        case unknownEventCode(String, field: String)
        /// An event type number outside `0...EV_MAX`.
        case eventTypeOutOfRange(Int64, field: String)
        /// An event code number outside the type's range.
        case eventCodeOutOfRange(Int64, type: String, max: Int, field: String)
        /// `stream` is neither `"filtered"` nor `"raw"`.
        case invalidStream
        /// `max_rate` is not a number in `(0, 100000]`.
        case invalidMaxRate
        /// `id` is neither a short string nor an integer.
        case invalidTag
        /// `STATE` named a device that is not there (reported by the server, not the parser).
        case unknownDevice(String)
        /// `STATE` named a device by a name several devices share.
        case ambiguousDevice(String)
        /// An entry of `WATCH`'s `devices` that is neither the id or exact name of a device
        /// evflowd has nor a class name: it would select nothing (reported by the server).
        case unmatchedDevice(String)
        /// `WATCH` selected a code that names a key, and this client may not see keys (§7).
        case hiddenKeyCode(String)
        /// A member is given more than once in one object.
        case duplicateField(String)
        /// A number too large for any member (beyond a double's range); `field` nil at the top level.
        case numberOutOfRange(field: String?)
        /// The client may not change what it asked to change (`ACCESSIBILITY`: only clients that
        /// see key codes may, 1.6); the field that asked.
        case notPermitted(field: String)
    }

    /// What was wrong.
    public var kind: Kind
    /// The request's class, when it had a valid one.
    public var requestClass: String?
    /// The request's `id`, when it had a usable one.
    public var tag: RequestTag?

    /// Creates an error.
    public init(_ kind: Kind, requestClass: String? = nil, tag: RequestTag? = nil) {
        self.kind = kind
        self.requestClass = requestClass
        self.tag = tag
    }

    /// The request member at fault, or nil when the line as a whole is wrong.
    public var field: String? {
        switch kind {
        case .lineTooLong, .notJSON, .notAnObject: return nil
        case .duplicateField(let f): return f
        case .numberOutOfRange(let f): return f
        case .missingField(let f), .wrongType(let f, _), .unknownField(let f), .emptyValue(let f):
            return f
        case .unknownClass, .notARequest: return "class"
        case .unknownEventType(_, let f), .unknownEventCode(_, let f), .eventTypeOutOfRange(_, let f),
             .eventCodeOutOfRange(_, _, _, let f):
            return f
        case .invalidStream: return "stream"
        case .invalidMaxRate: return "max_rate"
        case .invalidTag: return "id"
        case .unknownDevice, .ambiguousDevice: return "device"
        case .unmatchedDevice: return "devices"
        case .hiddenKeyCode: return "codes"
        case .notPermitted(let f): return f
        }
    }

    /// The text for people, as listed in docs/protocol.md §6.
    public var message: String {
        switch kind {
        case .lineTooLong(let limit): return "request line longer than \(limit) bytes"
        case .notJSON: return "request is not valid JSON"
        case .notAnObject: return "request must be a JSON object"
        case .missingField(let f): return "missing field '\(f)'"
        case .wrongType(let f, let expected): return "field '\(f)' must be \(expected)"
        case .unknownClass(let c): return "unknown request class '\(c)'"
        case .notARequest(let c): return "'\(c)' is not a request"
        case .unknownField(let f):
            return requestClass.map { "unknown field '\(f)' for \($0)" } ?? "unknown field '\(f)'"
        case .emptyValue(let f): return "field '\(f)' must not be empty"
        case .unknownEventType(let name, _): return "unknown event type '\(name)'"
        case .unknownEventCode(let name, _): return "unknown event code '\(name)'"
        case .eventTypeOutOfRange(let n, _): return "event type \(n) is out of range 0...\(EventType.max)"
        case .eventCodeOutOfRange(let n, let type, let max, _):
            return max < 0 ? "event code \(n) is out of range: \(type) has no codes"
                           : "event code \(n) is out of range 0...\(max) for \(type)"
        case .invalidStream: return "field 'stream' must be \"filtered\", \"raw\" or \"gestures\""
        case .invalidMaxRate:
            return "field 'max_rate' must be a number greater than 0 and at most \(Int(ProtocolConstants.maxRateLimit))"
        case .invalidTag:
            return "field 'id' must be a string of at most \(ProtocolConstants.maxTagLength) bytes or an integer"
        case .unknownDevice(let d): return "no device '\(d)'"
        case .ambiguousDevice(let d): return "several devices are named '\(d)'; use the id"
        case .unmatchedDevice(let d): return "no device '\(d)' (an id or exact name of a device evflowd has, or a class)"
        case .hiddenKeyCode(let c):
            return "key codes are hidden from this client: '\(c)' cannot be selected (select its type to get every key, code hidden)"
        case .duplicateField(let f): return "field '\(f)' is given more than once"
        case .numberOutOfRange(let f?): return "the number in field '\(f)' is out of range"
        case .numberOutOfRange(nil): return "a number in the request is out of range"
        case .notPermitted(let f):
            return "this client may not change '\(f)' (root, evflowd's user and the key groups may: docs/protocol.md, ACCESSIBILITY)"
        }
    }

    public var description: String {
        var s = message
        if let field { s += " (field \(field))" }
        if let requestClass { s += " [\(requestClass)]" }
        return s
    }
}
