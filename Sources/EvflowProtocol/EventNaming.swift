import InputModel

/// How the protocol turns event types and codes into names and back.
///
/// The codec takes this as a parameter rather than calling a global table so tests can pin
/// behaviour with a small table of their own, and so the fallback is explicit. `.standard`
/// is the table the server uses (see its documentation for where the names come from).
public struct EventNaming: Sendable {
    /// The name of a type (`1` → `"EV_KEY"`), nil if it has none.
    public var typeName: @Sendable (UInt16) -> String?
    /// The name of a code of a type (`(1, 30)` → `"KEY_A"`), nil if it has none.
    public var codeName: @Sendable (_ type: UInt16, _ code: UInt16) -> String?
    /// The type a name stands for (`"EV_KEY"` → 1).
    public var typeNumber: @Sendable (String) -> UInt16?
    /// The type and code a code name stands for (`"KEY_A"` → (1, 30)).
    public var codeNumber: @Sendable (String) -> EventCode?
    /// The largest code of a type (`KEY_MAX` for `EV_KEY`), used to range-check numeric codes;
    /// -1 for a type without codes.
    public var maxCode: @Sendable (UInt16) -> Int
    /// The name of an `INPUT_PROP_*` bit, nil if it has none.
    public var propertyName: @Sendable (UInt16) -> String?

    /// Creates a naming from its functions.
    public init(typeName: @escaping @Sendable (UInt16) -> String?,
                codeName: @escaping @Sendable (UInt16, UInt16) -> String?,
                typeNumber: @escaping @Sendable (String) -> UInt16?,
                codeNumber: @escaping @Sendable (String) -> EventCode?,
                maxCode: @escaping @Sendable (UInt16) -> Int,
                propertyName: @escaping @Sendable (UInt16) -> String? = { _ in nil }) {
        self.typeName = typeName
        self.codeName = codeName
        self.typeNumber = typeNumber
        self.codeNumber = codeNumber
        self.maxCode = maxCode
        self.propertyName = propertyName
    }

    /// No names at all: every type and code is written and read as a number.
    public static let numeric = EventNaming(
        typeName: { _ in nil }, codeName: { _, _ in nil },
        typeNumber: { _ in nil }, codeNumber: { _ in nil },
        maxCode: { _ in Int(EventNaming.largestCodeMax) })

    /// `KEY_MAX`, the largest `*_MAX` of any type: the bound used when a table has no better one.
    public static let largestCodeMax: UInt16 = 0x2ff

    /// The text a selected code is written as in a `WATCH` response: its name, or
    /// `"TYPE:0xCODE"` (the form `EventNames` uses) with the type's name, or its decimal
    /// number when it has none. The parser reads both back.
    public func codeText(_ c: EventCode) -> String {
        if let name = codeName(c.type, c.code) { return name }
        return (typeName(c.type) ?? String(c.type)) + ":0x" + String(c.code, radix: 16)
    }
}
