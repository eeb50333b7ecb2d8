import CEvdev

/// Names of event types, codes, values and input properties, from libevdev's own tables.
///
/// This is the only file in InputModel that touches libevdev. Every table is copied into Swift
/// arrays once, on first use, so a lookup on a hot path is an index into an array: O(1), no
/// allocation, no C call.
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
        if value >= 0 && Int(value) < names.count { return names[Int(value)] }
        // Outside the cached range (no such value is named today): ask libevdev directly.
        return libevdev_event_value_get_name(UInt32(type), UInt32(code), value).map { String(cString: $0) }
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
        let n = libevdev_event_type_from_name(name)
        if n >= 0 { return UInt16(n) }
        guard name.hasPrefix("EV_0x"), let v = UInt16(name.dropFirst(5), radix: 16), v <= EventType.max
        else { return nil }
        return v
    }

    /// The code a name stands for within a type: `("KEY_A", EV_KEY)` → 30. Accepts the aliases
    /// libevdev knows (`BTN_A` = `BTN_SOUTH`; not range markers such as `BTN_MOUSE`) and the
    /// fallback form (`"EV_KEY:0x2fe"`, whose type must match).
    public static func code(named name: String, type: UInt16) -> UInt16? {
        let n = libevdev_event_code_from_name(UInt32(type), name)
        if n >= 0 { return UInt16(n) }
        guard let parsed = parseFallbackCode(name), parsed.type == type else { return nil }
        return parsed.code
    }

    /// The type and code a code name stands for: `"KEY_A"` → (EV_KEY, 30), `"SW_LID"` →
    /// (EV_SW, 0); also the fallback form `"EV_KEY:0x2ff"`.
    public static func code(named name: String) -> (type: UInt16, code: UInt16)? {
        let t = libevdev_event_type_from_code_name(name)
        let c = libevdev_event_code_from_code_name(name)
        if t >= 0 && c >= 0 { return (UInt16(t), UInt16(c)) }
        return parseFallbackCode(name)
    }

    /// The property bit a name stands for: `"INPUT_PROP_DIRECT"` → 1; also `"INPUT_PROP_0x1f"`.
    public static func property(named name: String) -> UInt16? {
        let n = libevdev_property_from_name(name)
        if n >= 0 { return UInt16(n) }
        guard name.hasPrefix("INPUT_PROP_0x"), let v = UInt16(name.dropFirst(13), radix: 16),
              Int(v) < tables.propertyNames.count else { return nil }
        return v
    }

    // MARK: Tables

    /// Everything copied out of libevdev, indexed by number.
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
        for type in 0...EventType.max {
            let typeName = libevdev_event_type_get_name(UInt32(type)).map { String(cString: $0) }
            t.typeNames.append(typeName)
            let typeText = typeName ?? fallbackTypeText(type)
            t.typeTexts.append(typeText)
            let max = libevdev_event_type_get_max(UInt32(type))
            var names: [String?] = []
            var texts: [String] = []
            if max >= 0 {
                names.reserveCapacity(Int(max) + 1)
                texts.reserveCapacity(Int(max) + 1)
                for code in 0...UInt16(max) {
                    var name = libevdev_event_code_get_name(UInt32(type), UInt32(code)).map { String(cString: $0) }
                    // libevdev's EV_FF table lists FF_STATUS_* (codes of EV_FF_STATUS) at 0 and 1;
                    // a name counts only if it leads back to this type and code.
                    if let n = name, libevdev_event_type_from_code_name(n) != Int32(type)
                        || libevdev_event_code_from_code_name(n) != Int32(code) {
                        name = nil
                    }
                    names.append(name)
                    texts.append(name ?? typeText + ":0x" + hex(code))
                }
            }
            t.codeNames.append(names)
            t.codeTexts.append(texts)
        }
        // INPUT_PROP_MAX is 0x1f; libevdev has no "max" call for properties.
        t.propertyNames = (0...UInt16(0x1f)).map { p in libevdev_property_get_name(UInt32(p)).map { String(cString: $0) } }
        return t
    }()

    /// Values with names, per type and code, for values `0..<valueTableSize`. Only codes for
    /// which libevdev names at least one such value get an entry (today: `ABS_MT_TOOL_TYPE`).
    static let valueTables: [ValueKey: [String?]] = {
        var result: [ValueKey: [String?]] = [:]
        for (type, names) in tables.codeNames.enumerated() where !names.isEmpty {
            for code in names.indices {
                let values: [String?] = (0..<Int32(valueTableSize)).map { v in
                    libevdev_event_value_get_name(UInt32(type), UInt32(code), v).map { String(cString: $0) }
                }
                if values.contains(where: { $0 != nil }) {
                    result[ValueKey(type: UInt16(type), code: UInt16(code))] = values
                }
            }
        }
        return result
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
