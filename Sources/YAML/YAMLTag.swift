/// YAML tags as full names, and the YAML 1.1 rules that give an untagged plain scalar its tag.
public enum YAMLTag {
    public static let str = "tag:yaml.org,2002:str"
    public static let int = "tag:yaml.org,2002:int"
    public static let float = "tag:yaml.org,2002:float"
    public static let bool = "tag:yaml.org,2002:bool"
    public static let null = "tag:yaml.org,2002:null"
    public static let merge = "tag:yaml.org,2002:merge"
    public static let timestamp = "tag:yaml.org,2002:timestamp"
    public static let value = "tag:yaml.org,2002:value"
    public static let map = "tag:yaml.org,2002:map"
    public static let seq = "tag:yaml.org,2002:seq"

    /// The tag of an untagged plain scalar with this text: the first of bool (`yes`, `No`,
    /// `TRUE`, `off`, … in the three spellings), int (`0b1_0`, `017`, `0o17`, `-42`, `0x1F`,
    /// `1:30`), float (`1.5`, `1e3`, `.5`, `1:30.5`, `.inf`, `.NaN`), merge (`<<`), null (`~`,
    /// `null`, `Null`, `NULL`, empty), timestamp (`2001-12-14`, `2001-12-14t21:59:43.10-05:00`)
    /// and value (`=`) whose YAML 1.1 pattern matches the whole text, else `str`. (Only mapping
    /// key equality depends on it: `1` and `"1"` are different keys, `a` and `"a"` the same.)
    public static func resolve(plain text: String) -> String {
        let bytes = Array(text.utf8)
        if ["yes", "Yes", "YES", "no", "No", "NO", "true", "True", "TRUE", "false", "False", "FALSE",
            "on", "On", "ON", "off", "Off", "OFF"].contains(text) { return bool }
        if isInt(bytes) { return int }
        if isFloat(bytes) { return float }
        if text == "<<" { return merge }
        if ["~", "null", "Null", "NULL", ""].contains(text) { return null }
        if isTimestamp(bytes) { return timestamp }
        if text == "=" { return value }
        return str
    }

    // Each matcher reads the whole text or fails; `Cursor` holds the position.
    private struct Cursor {
        let b: [UInt8]
        var i = 0
        init(_ b: [UInt8]) { self.b = b }
        var atEnd: Bool { i == b.count }
        var peek: UInt8? { i < b.count ? b[i] : nil }
        mutating func take(_ c: UInt8) -> Bool {
            guard peek == c else { return false }
            i += 1
            return true
        }
        mutating func take(where ok: (UInt8) -> Bool) -> Bool {
            guard let c = peek, ok(c) else { return false }
            i += 1
            return true
        }
        /// Consumes as many as match; returns how many.
        @discardableResult mutating func many(_ ok: (UInt8) -> Bool) -> Int {
            let start = i
            while let c = peek, ok(c) { i += 1 }
            return i - start
        }
        mutating func sign() { _ = take(where: { $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") }) }
        /// `(?::[0-5]?[0-9])+`
        mutating func sexagesimalGroups() -> Bool {
            var groups = 0
            while take(UInt8(ascii: ":")) {
                guard let d = peek, isDigit(d) else { return false }
                i += 1
                if d <= UInt8(ascii: "5"), let e = peek, isDigit(e) { i += 1 }
                groups += 1
            }
            return groups > 0
        }
    }

    private static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    private static func isDigitOr_(_ c: UInt8) -> Bool { isDigit(c) || c == UInt8(ascii: "_") }

    private static func isInt(_ b: [UInt8]) -> Bool {
        let zero = UInt8(ascii: "0")
        func attempt(_ body: (inout Cursor) -> Bool) -> Bool {
            var c = Cursor(b)
            c.sign()
            return body(&c) && c.atEnd
        }
        return attempt { c in   // [-+]?0b[0-1_]+
            c.take(zero) && c.take(UInt8(ascii: "b"))
                && c.many { $0 == zero || $0 == UInt8(ascii: "1") || $0 == UInt8(ascii: "_") } > 0
        } || attempt { c in     // [-+]?0o?[0-7_]+
            guard c.take(zero) else { return false }
            _ = c.take(UInt8(ascii: "o"))
            return c.many { ($0 >= zero && $0 <= UInt8(ascii: "7")) || $0 == UInt8(ascii: "_") } > 0
        } || attempt { c in     // [-+]?(?:0|[1-9][0-9_]*)
            if c.take(zero) { return true }
            guard c.take(where: { $0 > zero && isDigit($0) }) else { return false }
            c.many(isDigitOr_)
            return true
        } || attempt { c in     // [-+]?0x[0-9a-fA-F_]+
            c.take(zero) && c.take(UInt8(ascii: "x")) && c.many { c in
                isDigitOr_(c) || (c | 0x20 >= UInt8(ascii: "a") && c | 0x20 <= UInt8(ascii: "f"))
            } > 0
        } || attempt { c in     // [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+
            guard c.take(where: { $0 > zero && isDigit($0) }) else { return false }
            c.many(isDigitOr_)
            return c.sexagesimalGroups()
        }
    }

    private static func isFloat(_ b: [UInt8]) -> Bool {
        let dot = UInt8(ascii: "."), e = UInt8(ascii: "e"), E = UInt8(ascii: "E")
        func attempt(signed: Bool, _ body: (inout Cursor) -> Bool) -> Bool {
            var c = Cursor(b)
            if signed { c.sign() }
            return body(&c) && c.atEnd
        }
        func exponent(_ c: inout Cursor, signRequired: Bool) -> Bool {
            guard c.take(e) || c.take(E) else { return true }   // optional as a whole
            let hadSign = c.take(UInt8(ascii: "+")) || c.take(UInt8(ascii: "-"))
            return (hadSign || !signRequired) && c.many(isDigit) > 0
        }
        let text = String(decoding: b, as: UTF8.self)
        return attempt(signed: true) { c in   // [0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?
            guard c.take(where: isDigit) else { return false }
            c.many(isDigitOr_)
            if c.take(dot) { c.many(isDigitOr_) }
            return exponent(&c, signRequired: false)
        } || attempt(signed: false) { c in    // \.[0-9_]+(?:[eE][-+][0-9]+)?
            c.take(dot) && c.many(isDigitOr_) > 0 && exponent(&c, signRequired: true)
        } || attempt(signed: true) { c in     // [0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*
            guard c.take(where: isDigit) else { return false }
            c.many(isDigitOr_)
            guard c.sexagesimalGroups(), c.take(dot) else { return false }
            c.many(isDigitOr_)
            return true
        } || attempt(signed: true) { c in     // \.(?:inf|Inf|INF)
            let rest = String(decoding: c.b[c.i...], as: UTF8.self)
            c.i = c.b.count
            return [".inf", ".Inf", ".INF"].contains(rest)
        } || [".nan", ".NaN", ".NAN"].contains(text)
    }

    private static func isTimestamp(_ b: [UInt8]) -> Bool {
        var c = Cursor(b)
        func digits(_ c: inout Cursor, _ n: Int) -> Bool {
            for _ in 0..<n where !c.take(where: isDigit) { return false }
            return true
        }
        func oneOrTwo(_ c: inout Cursor) -> Bool {
            guard c.take(where: isDigit) else { return false }
            _ = c.take(where: isDigit)
            return true
        }
        let dash = UInt8(ascii: "-"), colon = UInt8(ascii: ":")
        guard digits(&c, 4), c.take(dash) else { return false }
        // Date only: [0-9]{4}-[0-9]{2}-[0-9]{2}
        var dateOnly = c
        if digits(&dateOnly, 2), dateOnly.take(dash), digits(&dateOnly, 2), dateOnly.atEnd { return true }
        // Date and time: month and day of one or two digits.
        guard oneOrTwo(&c), c.take(dash), oneOrTwo(&c) else { return false }
        if !(c.take(UInt8(ascii: "T")) || c.take(UInt8(ascii: "t"))) {
            guard c.many({ $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }) > 0 else { return false }
        }
        guard oneOrTwo(&c), c.take(colon), digits(&c, 2), c.take(colon), digits(&c, 2) else { return false }
        if c.take(UInt8(ascii: ".")) { c.many(isDigit) }
        if c.atEnd { return true }
        c.many { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
        if c.take(UInt8(ascii: "Z")) { return c.atEnd }
        guard c.take(UInt8(ascii: "+")) || c.take(dash), oneOrTwo(&c) else { return false }
        if c.take(colon) { guard digits(&c, 2) else { return false } }
        return c.atEnd
    }
}
