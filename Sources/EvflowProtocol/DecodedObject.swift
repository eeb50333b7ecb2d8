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
