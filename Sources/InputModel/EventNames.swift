/// Names of event types, codes, values and input properties: libevdev's own names, kept as
/// Swift data (`EventNameTables.swift`, written by `scripts/event-names` from libevdev and
/// checked against it by InputModelTests), so that InputModel and the protocol clients that
/// import it link no C library.
///
/// The lists are laid out as arrays indexed by number once, on first use, so a lookup on a hot
/// path is an index into an array: O(1), no allocation.
///
/// Two kinds of forward lookups:
/// - `typeName`, `codeName`, `propertyName`, `valueName` return nil where libevdev has no name.
/// - `typeText`, `codeText`, `propertyText` always return text, falling back to a form that
///   keeps the number: `EV_0x1c` for a type, `EV_KEY:0x2ff` for a code, `INPUT_PROP_0x1f` for a
///   property. The reverse lookups accept these forms too, so every text round-trips.
public enum EventNames {
    // MARK: Forward lookups

    /// The name of an event type (`0x01` → `"EV_KEY"`), nil if libevdev has none.
    public static func typeName(_ type: UInt16) -> String? {
        let t = tables
        return Int(type) < t.typeNames.count ? t.typeNames[Int(type)] : nil
    }

    /// The name of a code (`(EV_KEY, 30)` → `"KEY_A"`), nil if libevdev has none.
    ///
    /// Codes with several names (`BTN_SOUTH` = `BTN_A`) get the one libevdev prints.
    public static func codeName(type: UInt16, code: UInt16) -> String? {
        let t = tables
        guard Int(type) < t.codeNames.count else { return nil }
        let names = t.codeNames[Int(type)]
        return Int(code) < names.count ? names[Int(code)] : nil
    }

    /// The name of an `INPUT_PROP_*` bit (`1` → `"INPUT_PROP_DIRECT"`), nil if libevdev has none.
    public static func propertyName(_ property: UInt16) -> String? {
        let t = tables
        return Int(property) < t.propertyNames.count ? t.propertyNames[Int(property)] : nil
    }

    /// The name of a value, where values have names (`ABS_MT_TOOL_TYPE` 1 → `"MT_TOOL_PEN"`).
    public static func valueName(type: UInt16, code: UInt16, value: Int32) -> String? {
        guard let names = valueTables[ValueKey(type: type, code: code)] else { return nil }
        return value >= 0 && Int(value) < names.count ? names[Int(value)] : nil
    }

    /// The type's name, or `EV_0x1c` for a type libevdev does not know.
    public static func typeText(_ type: UInt16) -> String {
        let t = tables
        return Int(type) < t.typeTexts.count ? t.typeTexts[Int(type)] : fallbackTypeText(type)
    }

    /// The code's name, or `TYPE:0xCODE` (`EV_KEY:0x2ff`) for a code libevdev does not name.
    public static func codeText(type: UInt16, code: UInt16) -> String {
        let t = tables
        if Int(type) < t.codeTexts.count {
            let texts = t.codeTexts[Int(type)]
            if Int(code) < texts.count { return texts[Int(code)] }
        }
        return fallbackCodeText(type: type, code: code)   // beyond the type's *_MAX: rare, allocates
    }

    /// The property's name, or `INPUT_PROP_0x1f` for a bit libevdev does not name.
    public static func propertyText(_ property: UInt16) -> String {
        propertyName(property) ?? "INPUT_PROP_0x" + hex(property)
    }

    /// The largest code of a type (`KEY_MAX` for `EV_KEY`), nil for a type without codes.
    public static func maxCode(type: UInt16) -> UInt16? {
        let t = tables
        guard Int(type) < t.codeNames.count, !t.codeNames[Int(type)].isEmpty else { return nil }
        return UInt16(t.codeNames[Int(type)].count - 1)
    }

    // MARK: Reverse lookups (configuration, wire protocol: not hot paths)

    /// The type a name stands for: `"EV_KEY"` → 1; also accepts the fallback form `"EV_0x1c"`.
    public static func type(named name: String) -> UInt16? {
        if let n = reverse.types[name] { return n }
        guard name.hasPrefix("EV_0x"), let v = UInt16(name.dropFirst(5), radix: 16), v <= EventType.max
        else { return nil }
        return v
    }

    /// The code a name stands for within a type: `("KEY_A", EV_KEY)` → 30. Accepts the aliases
    /// libevdev knows (`BTN_A` = `BTN_SOUTH`; not range markers such as `BTN_MOUSE`) and the
    /// fallback form (`"EV_KEY:0x2fe"`, whose type must match).
    public static func code(named name: String, type: UInt16) -> UInt16? {
        if let n = reverse.codes[name] { return n.type == type ? n.code : nil }
        guard let parsed = parseFallbackCode(name), parsed.type == type else { return nil }
        return parsed.code
    }

    /// The type and code a code name stands for: `"KEY_A"` → (EV_KEY, 30), `"SW_LID"` →
    /// (EV_SW, 0); also the fallback form `"EV_KEY:0x2ff"`.
    public static func code(named name: String) -> (type: UInt16, code: UInt16)? {
        reverse.codes[name] ?? parseFallbackCode(name)
    }

    /// The property bit a name stands for: `"INPUT_PROP_DIRECT"` → 1; also `"INPUT_PROP_0x1f"`.
    public static func property(named name: String) -> UInt16? {
        if let n = reverse.properties[name] { return n }
        guard name.hasPrefix("INPUT_PROP_0x"), let v = UInt16(name.dropFirst(13), radix: 16),
              Int(v) < tables.propertyNames.count else { return nil }
        return v
    }

    // MARK: Tables

    /// The lists of `EventNameTables.swift`, indexed by number.
    struct Tables: Sendable {
        var typeNames: [String?] = []
        var typeTexts: [String] = []
        /// Per type, one entry per code `0...max`; empty for types without codes.
        var codeNames: [[String?]] = []
        var codeTexts: [[String]] = []
        var propertyNames: [String?] = []
    }

    struct ValueKey: Hashable, Sendable {
        var type: UInt16
        var code: UInt16
    }

    /// Built on first use (Swift runs a global's initialiser once, thread-safely).
    static let tables: Tables = {
        var t = Tables()
        t.typeNames = Array(repeating: nil, count: Int(EventType.max) + 1)
        for (type, name) in typeNameList { t.typeNames[Int(type)] = name }
        t.typeTexts = (0...EventType.max).map { t.typeNames[Int($0)] ?? fallbackTypeText($0) }
        t.codeNames = Array(repeating: [], count: Int(EventType.max) + 1)
        for (type, max) in maxCodeList { t.codeNames[Int(type)] = Array(repeating: nil, count: Int(max) + 1) }
        for (type, code, name) in codeNameList { t.codeNames[Int(type)][Int(code)] = name }
        t.codeTexts = t.codeNames.enumerated().map { type, names in
            names.enumerated().map { code, name in name ?? t.typeTexts[type] + ":0x" + hex(UInt16(code)) }
        }
        // INPUT_PROP_MAX is 0x1f.
        t.propertyNames = Array(repeating: nil, count: 0x20)
        for (property, name) in propertyNameList { t.propertyNames[Int(property)] = name }
        return t
    }()

    /// Values with names, per type and code, for values `0..<valueTableSize`. Only codes that
    /// have at least one named value get an entry (today: `ABS_MT_TOOL_TYPE`).
    static let valueTables: [ValueKey: [String?]] = {
        var result: [ValueKey: [String?]] = [:]
        for (type, code, value, name) in valueNameList {
            result[ValueKey(type: type, code: code), default: Array(repeating: nil, count: valueTableSize)][Int(value)] = name
        }
        return result
    }()

    /// Name → number, for the reverse lookups: the forward names and the other names libevdev
    /// accepts (aliases).
    struct Reverse: Sendable {
        var types: [String: UInt16] = [:]
        var codes: [String: (type: UInt16, code: UInt16)] = [:]
        var properties: [String: UInt16] = [:]
    }

    static let reverse: Reverse = {
        var r = Reverse()
        for (type, name) in typeNameList { r.types[name] = type }
        for (name, type) in typeAliasList { r.types[name] = type }
        for (type, code, name) in codeNameList { r.codes[name] = (type, code) }
        for (name, type, code) in codeAliasList { r.codes[name] = (type, code) }
        for (property, name) in propertyNameList { r.properties[name] = property }
        for (name, property) in propertyAliasList { r.properties[name] = property }
        return r
    }()

    static let valueTableSize = 64

    // MARK: Fallback forms

    static func hex(_ v: UInt16) -> String { String(v, radix: 16) }

    static func fallbackTypeText(_ type: UInt16) -> String { "EV_0x" + hex(type) }

    static func fallbackCodeText(type: UInt16, code: UInt16) -> String {
        typeText(type) + ":0x" + hex(code)
    }

    /// `"EV_KEY:0x2ff"` → (1, 0x2ff).
    static func parseFallbackCode(_ name: String) -> (type: UInt16, code: UInt16)? {
        guard let colon = name.firstIndex(of: ":") else { return nil }
        let codePart = name[name.index(after: colon)...]
        guard codePart.hasPrefix("0x"), let code = UInt16(codePart.dropFirst(2), radix: 16),
              let type = type(named: String(name[..<colon]))
        else { return nil }
        return (type, code)
    }
}

extension InputEvent {
    /// The type's name (`"EV_KEY"`), or its fallback form; see `EventNames.typeText`.
    public var typeText: String { EventNames.typeText(type) }
    /// The code's name (`"KEY_A"`), or its fallback form; see `EventNames.codeText`.
    public var codeText: String { EventNames.codeText(type: type, code: code) }
}
