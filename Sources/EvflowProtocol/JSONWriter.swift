/// A small JSON writer that appends compact JSON to a reusable byte buffer.
///
/// It exists for the hot stream message (`FRAME`): no intermediate dictionaries,
/// no `Encodable` machinery, no allocation once `bytes` has grown to its working size
/// (`removeAll(keepingCapacity:)` between messages). Separators are tracked with one flag:
/// every value or key first writes a comma if a value came before it at this level.
/// Keys are `StaticString`s the caller guarantees need no escaping; dynamic text always goes
/// through `string(_:)`, which escapes per RFC 8259.
public struct JSONWriter: Sendable {
    /// The JSON written so far.
    public var bytes: [UInt8]
    /// Whether the next value or key at the current level needs a comma before it.
    @usableFromInline var needsComma = false

    /// Creates a writer with room for `capacity` bytes.
    public init(capacity: Int = 1024) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    /// Empties the buffer, keeping its storage for the next message.
    public mutating func reset() {
        bytes.removeAll(keepingCapacity: true)
        needsComma = false
    }

    @inlinable mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }

    /// Starts an object (`{`).
    @inlinable public mutating func beginObject() {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
    }

    /// Ends an object (`}`).
    @inlinable public mutating func endObject() {
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    /// Starts an array (`[`).
    @inlinable public mutating func beginArray() {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
    }

    /// Ends an array (`]`).
    @inlinable public mutating func endArray() {
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// Writes `"key":` for a key that needs no escaping.
    @inlinable public mutating func key(_ key: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        key.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(UInt8(ascii: "\""))
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes `"key":` for a dynamic key (escaped).
    public mutating func key(_ key: String) {
        string(key)
        bytes.append(UInt8(ascii: ":"))
        needsComma = false
    }

    /// Writes a string value, escaped.
    public mutating func string(_ value: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { appendEscaped($0) }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    /// Writes pre-encoded JSON (e.g. a cached, already escaped and quoted name) as one value.
    @inlinable public mutating func raw(_ json: [UInt8]) {
        separate()
        bytes.append(contentsOf: json)
        needsComma = true
    }

    /// Escapes UTF-8 text: `"` and `\` get a backslash, control characters below 0x20 use
    /// the short forms or `\u00XX`. Everything else (including non-ASCII) is copied as is.
    mutating func appendEscaped(_ utf8: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        for i in 0..<utf8.count {
            let c = utf8[i]
            guard c < 0x20 || c == UInt8(ascii: "\"") || c == UInt8(ascii: "\\") else { continue }
            if runStart < i { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart..<i])) }
            runStart = i + 1
            bytes.append(UInt8(ascii: "\\"))
            switch c {
            case UInt8(ascii: "\""): bytes.append(UInt8(ascii: "\""))
            case UInt8(ascii: "\\"): bytes.append(UInt8(ascii: "\\"))
            case 0x0a: bytes.append(UInt8(ascii: "n"))
            case 0x0d: bytes.append(UInt8(ascii: "r"))
            case 0x09: bytes.append(UInt8(ascii: "t"))
            case 0x08: bytes.append(UInt8(ascii: "b"))
            case 0x0c: bytes.append(UInt8(ascii: "f"))
            default:
                let hex: StaticString = "0123456789abcdef"
                bytes.append(contentsOf: [UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0")])
                hex.withUTF8Buffer { h in
                    bytes.append(h[Int(c >> 4)])
                    bytes.append(h[Int(c & 0xf)])
                }
            }
        }
        if runStart < utf8.count { bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[runStart...])) }
    }

    /// Writes an integer.
    @inlinable public mutating func int(_ value: Int64) {
        separate()
        if value < 0 {
            bytes.append(UInt8(ascii: "-"))
            appendDigits(value.magnitude)   // magnitude handles Int64.min
        } else {
            appendDigits(UInt64(value))
        }
        needsComma = true
    }

    /// Writes an integer.
    @inlinable public mutating func int(_ value: Int) { int(Int64(value)) }

    /// Writes an unsigned integer.
    @inlinable public mutating func uint(_ value: UInt64) {
        separate()
        appendDigits(value)
        needsComma = true
    }

    @inlinable mutating func appendDigits(_ value: UInt64) {
        // The digits are appended lowest first, then swapped into place within the array
        // (reversing `bytes[start...]` instead would copy the slice: one allocation per number).
        var v = value
        var low = bytes.count
        repeat {
            bytes.append(UInt8(ascii: "0") &+ UInt8(truncatingIfNeeded: v % 10))
            v /= 10
        } while v != 0
        var high = bytes.count - 1
        while low < high {
            bytes.swapAt(low, high)
            low += 1
            high -= 1
        }
    }

    /// Writes a number; non-finite values (which JSON cannot express) are written as `null`.
    public mutating func double(_ value: Double) {
        guard value.isFinite else { null(); return }
        separate()
        if value == value.rounded(.towardZero) && abs(value) < 1e15 {
            appendDigitsSigned(Int64(value))   // "60", not "60.0"
        } else {
            bytes.append(contentsOf: value.description.utf8)
        }
        needsComma = true
    }

    mutating func appendDigitsSigned(_ value: Int64) {
        if value < 0 { bytes.append(UInt8(ascii: "-")) }
        appendDigits(value.magnitude)
    }

    /// Writes `true` or `false`.
    public mutating func bool(_ value: Bool) {
        separate()
        bytes.append(contentsOf: (value ? "true" : "false").utf8)
        needsComma = true
    }

    /// Writes `null`.
    public mutating func null() {
        separate()
        bytes.append(contentsOf: "null".utf8)
        needsComma = true
    }

    /// Ends a message: a newline, and the writer is ready for the next top-level value.
    @inlinable public mutating func endLine() {
        bytes.append(UInt8(ascii: "\n"))
        needsComma = false
    }

    /// The JSON text of a string value, quoted and escaped (for caches of names).
    public static func encodedString(_ s: String) -> [UInt8] {
        var w = JSONWriter(capacity: s.utf8.count + 2)
        w.string(s)
        return w.bytes
    }
}
