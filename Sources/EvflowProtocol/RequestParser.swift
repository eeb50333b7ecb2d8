#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

extension Request {
    /// Parses one request line (without its terminator); see docs/protocol.md §4 and §6.
    ///
    /// Checks, in this order: length, JSON, object, `class`, `id`, unknown members, then the
    /// members of the class. The first problem found is thrown; the error carries the
    /// request's class and `id` as soon as they are known, so the `ERROR` reply can name them.
    public static func parse(_ line: ArraySlice<UInt8>, naming: EventNaming = .standard) throws(ProtocolError) -> Request {
        guard line.count <= ProtocolConstants.maxRequestLineLength else {
            throw ProtocolError(.lineTooLong(limit: ProtocolConstants.maxRequestLineLength))
        }
        let value: JSONValue
        do {
            value = try JSONDecoder().decode(JSONValue.self, from: Data(line))
        } catch {
            if case .numberOutOfRange(let field)? = JSONLineScan.scan(line) {
                throw ProtocolError(.numberOutOfRange(field: field))
            }
            throw ProtocolError(.notJSON)
        }
        guard case .object(let object) = value else { throw ProtocolError(.notAnObject) }
        // The decoder keeps one of a repeated member silently: refused, naming it.
        if case .duplicate(let name)? = JSONLineScan.scan(line) {
            let parser = RequestParser(object: object, naming: naming)
            let cls: String? = if case .string(let c)? = object["class"], membersByClass[c] != nil { c } else { nil }
            throw ProtocolError(.duplicateField(name), requestClass: cls, tag: try? parser.parseTag())
        }
        return try parse(object: object, naming: naming)
    }

    /// Parses a decoded request object (also how a client reads a `WATCH` response back).
    static func parse(object: [String: JSONValue], naming: EventNaming) throws(ProtocolError) -> Request {
        var parser = RequestParser(object: object, naming: naming)
        return try parser.parse()
    }

    /// Parses one request line given as text (for tests and tools).
    public static func parse(_ line: String, naming: EventNaming = .standard) throws(ProtocolError) -> Request {
        try parse(Array(line.utf8)[...], naming: naming)
    }

    /// Whether a line holds nothing but spaces and tabs: such lines are ignored, not answered.
    public static func isBlank(_ line: ArraySlice<UInt8>) -> Bool {
        line.allSatisfy { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
    }
}

/// The members each request class may have (besides `class` and `id`).
private let membersByClass: [String: Set<String>] = [
    "DEVICES": [], "STATE": ["device"], "STATS": [],
    "WATCH": ["devices", "types", "codes", "stream", "max_rate", "sensors"],
    "UNWATCH": [], "PING": [], "METRICS": [], "LATENCY": [],
    "ACCESSIBILITY": ["device", "bounce_keys", "slow_keys"],
]

/// Classes only the server sends: every wire class that is not a request's.
private let serverOnlyClasses = Set(MessageClass.allCases.map(\.rawValue)).subtracting(membersByClass.keys)

/// Validates a decoded object member by member.
private struct RequestParser {
    let object: [String: JSONValue]
    let naming: EventNaming
    var requestClass: String?
    var tag: RequestTag?

    init(object: [String: JSONValue], naming: EventNaming) {
        self.object = object
        self.naming = naming
    }

    func fail(_ kind: ProtocolError.Kind) -> ProtocolError {
        ProtocolError(kind, requestClass: requestClass, tag: tag)
    }

    /// A member, with `null` treated as absent (optional members may be sent as null).
    func member(_ name: String) -> JSONValue? {
        switch object[name] {
        case nil, .null?: return nil
        case let v?: return v
        }
    }

    mutating func parse() throws(ProtocolError) -> Request {
        // Read the tag first so even an error about `class` can carry it; a bad tag is
        // reported once the class is known.
        let parsedTag = Result { () throws(ProtocolError) in try parseTag() }
        tag = try? parsedTag.get()
        guard let classValue = member("class") else { throw fail(.missingField("class")) }
        guard case .string(let cls) = classValue else { throw fail(.wrongType(field: "class", expected: "a string")) }
        guard let members = membersByClass[cls] else {
            throw fail(serverOnlyClasses.contains(cls) ? .notARequest(cls) : .unknownClass(cls))
        }
        requestClass = cls
        do { tag = try parsedTag.get() } catch { throw fail(error.kind) }   // now with the class
        for key in object.keys.sorted() where key != "class" && key != "id" && !members.contains(key) {
            throw fail(.unknownField(key))
        }
        let kind: Request.Kind
        switch cls {
        case "DEVICES": kind = .devices
        case "STATE": kind = .state(device: try requiredNonEmptyString("device"))
        case "STATS": kind = .stats
        case "WATCH": kind = .watch(try parseWatch())
        case "UNWATCH": kind = .unwatch
        case "METRICS": kind = .metrics
        case "LATENCY": kind = .latency
        case "ACCESSIBILITY":
            kind = .accessibility(AccessibilityRequest(device: try requiredNonEmptyString("device"),
                                                       bounceKeys: try accessibilityValue("bounce_keys"),
                                                       slowKeys: try accessibilityValue("slow_keys")))
        default: kind = .ping
        }
        return Request(kind, tag: tag)
    }

    func parseTag() throws(ProtocolError) -> RequestTag? {
        switch member("id") {
        case nil: return nil
        case .string(let s)? where s.utf8.count <= ProtocolConstants.maxTagLength: return .string(s)
        case .integer(let n)?: return .integer(n)
        default: throw fail(.invalidTag)
        }
    }

    func requiredNonEmptyString(_ name: String) throws(ProtocolError) -> String {
        guard let v = member(name) else { throw fail(.missingField(name)) }
        guard case .string(let s) = v else { throw fail(.wrongType(field: name, expected: "a string")) }
        guard !s.isEmpty else { throw fail(.emptyValue(field: name)) }
        return s
    }

    /// An `ACCESSIBILITY` filter's value: whole milliseconds 0 ... 60000, `"off"` or
    /// `"config"`; nil when absent.
    func accessibilityValue(_ name: String) throws(ProtocolError) -> AccessibilityValue? {
        let expected = "an integer number of milliseconds from 0 to \(AccessibilityRequest.maxMilliseconds), \"off\" or \"config\""
        switch member(name) {
        case nil: return nil
        case .integer(let n)? where n >= 0 && n <= AccessibilityRequest.maxMilliseconds: return .milliseconds(n)
        case .string("off")?: return .milliseconds(0)
        case .string("config")?: return .config
        default: throw fail(.wrongType(field: name, expected: expected))
        }
    }

    func parseWatch() throws(ProtocolError) -> WatchRequest {
        var watch = WatchRequest()
        if let v = member("devices") {
            guard case .array(let items) = v else { throw fail(.wrongType(field: "devices", expected: "an array of strings")) }
            var seen = Set<String>()
            for item in items {
                guard case .string(let s) = item else { throw fail(.wrongType(field: "devices", expected: "an array of strings")) }
                guard !s.isEmpty else { throw fail(.emptyValue(field: "devices")) }
                if seen.insert(s).inserted { watch.devices.append(DeviceSelector(parsing: s)) }
            }
        }
        var types: [UInt16] = []
        if let v = member("types") {
            let expected = "an array of strings or integers"
            guard case .array(let items) = v else { throw fail(.wrongType(field: "types", expected: expected)) }
            for item in items {
                switch item {
                case .string(let s): types.append(try typeNumber(s, field: "types"))
                case .integer(let n): types.append(try typeNumber(n, field: "types"))
                default: throw fail(.wrongType(field: "types", expected: expected))
                }
            }
        }
        var codes: [EventCode] = []
        if let v = member("codes") {
            guard case .array(let items) = v else { throw fail(.wrongType(field: "codes", expected: "an array of strings")) }
            for item in items {
                guard case .string(let s) = item else { throw fail(.wrongType(field: "codes", expected: "an array of strings")) }
                codes.append(try eventCode(s))
            }
        }
        watch.events = EventSelection(types: types, codes: codes)
        if let v = member("stream") {
            guard case .string(let s) = v, let kind = StreamKind(rawValue: s) else { throw fail(.invalidStream) }
            watch.stream = kind
        }
        if let v = member("max_rate") {
            let rate: Double
            switch v {
            case .integer(let n): rate = Double(n)
            case .number(let d): rate = d
            default: throw fail(.invalidMaxRate)
            }
            guard rate > 0, rate <= ProtocolConstants.maxRateLimit else { throw fail(.invalidMaxRate) }
            watch.maxRate = rate
        }
        if let v = member("sensors") {
            guard case .array(let items) = v else { throw fail(.wrongType(field: "sensors", expected: "an array of strings")) }
            for item in items {
                guard case .string(let s) = item else { throw fail(.wrongType(field: "sensors", expected: "an array of strings")) }
                guard !s.isEmpty else { throw fail(.emptyValue(field: "sensors")) }
                if !watch.sensors.contains(s) { watch.sensors.append(s) }
            }
        }
        return watch
    }

    func typeNumber(_ name: String, field: String) throws(ProtocolError) -> UInt16 {
        guard !name.isEmpty else { throw fail(.emptyValue(field: field)) }
        guard let t = naming.typeNumber(name) else { throw fail(.unknownEventType(name, field: field)) }
        return t
    }

    func typeNumber(_ n: Int64, field: String) throws(ProtocolError) -> UInt16 {
        guard n >= 0, n <= Int64(EventType.max) else { throw fail(.eventTypeOutOfRange(n, field: field)) }
        return UInt16(n)
    }

    /// `"KEY_A"`, or `"TYPE:CODE"`: the type a name or a decimal number, the code a name
    /// of that type, a decimal number or `0x` hex.
    func eventCode(_ text: String) throws(ProtocolError) -> EventCode {
        guard !text.isEmpty else { throw fail(.emptyValue(field: "codes")) }
        guard let colon = text.firstIndex(of: ":") else {
            guard let c = naming.codeNumber(text) else { throw fail(.unknownEventCode(text, field: "codes")) }
            return c
        }
        let typePart = String(text[..<colon])
        let codePart = String(text[text.index(after: colon)...])
        guard !typePart.isEmpty, !codePart.isEmpty else { throw fail(.unknownEventCode(text, field: "codes")) }
        let type: UInt16
        if let n = decimal(typePart) {
            type = try typeNumber(n, field: "codes")
        } else {
            type = try typeNumber(typePart, field: "codes")
        }
        if let n = decimal(codePart) ?? hexadecimal(codePart) {
            let max = naming.maxCode(type)
            guard n >= 0, n <= Int64(max) else {
                throw fail(.eventCodeOutOfRange(n, type: naming.typeName(type) ?? String(type), max: max, field: "codes"))
            }
            return EventCode(type: type, code: UInt16(n))
        }
        guard let c = naming.codeNumber(codePart), c.type == type else {
            throw fail(.unknownEventCode(text, field: "codes"))
        }
        return c
    }

    /// `0x` followed by hex digits (the form `EventNames` writes for unnamed codes).
    func hexadecimal(_ s: String) -> Int64? {
        guard s.hasPrefix("0x"), s.count > 2, s.count <= 18 else { return nil }
        return Int64(s.dropFirst(2), radix: 16)
    }

    /// A decimal integer (optionally negative), nil for anything else, including overflow
    /// (which then reads as an unknown name, never as a wrapped number).
    func decimal(_ s: String) -> Int64? {
        let digits = s.hasPrefix("-") ? s.dropFirst() : s[...]
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int64(s)
    }
}

/// A JSON value as decoded, keeping integers apart from other numbers and booleans apart
/// from numbers (so `"max_rate":true` is a type error, not a rate of 1).
enum JSONValue: Decodable, Hashable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null; return }
        if let b = try? c.decode(Bool.self) { self = .bool(b); return }
        if let i = try? c.decode(Int64.self) { self = .integer(i); return }
        if let d = try? c.decode(Double.self) { self = .number(d); return }
        if let s = try? c.decode(String.self) { self = .string(s); return }
        if let a = try? c.decode([JSONValue].self) { self = .array(a); return }
        self = .object(try c.decode([String: JSONValue].self))
    }
}
