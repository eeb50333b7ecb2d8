#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// Writes `# EVEMU 1.3` files that evemu-play, evemu-device and `EvemuReader` read.
///
/// Event lines look exactly like evemu-record's, comment included (`# EV_KEY / KEY_A  1`).
///
/// Reading what this writes gives back an equal `RecordedDevice`, with three limits of the
/// format: times are kept to the microsecond (truncated), `AbsInfo.value` is not written (the
/// `A:` line has no field for it; readers give 0), and an event type listed in `capabilities`
/// with no codes is not written (evemu turns a type on only through its codes). `phys`, `uniq`,
/// `properties` and `recordedNode` have no line in the format and are dropped; a line break in
/// the device name would end the `N:` line, so it is written as a space, and blanks at either
/// end of the name are not kept (`nameAsWritten`).
public enum EvemuWriter {
    /// The event types evemu-record always writes a `B:` block for, with their sizes in bytes
    /// (from the kernel's `*_CNT`, rounded up to whole 8-byte lines).
    static let standardMasks: [(type: UInt16, bytes: Int)] = [
        (0x00, 8),    // EV_SYN: SYN_CNT 0x10
        (0x01, 96),   // EV_KEY: KEY_CNT 0x300
        (0x02, 8),    // EV_REL: REL_CNT 0x10
        (0x03, 8),    // EV_ABS: ABS_CNT 0x40
        (0x04, 8),    // EV_MSC: MSC_CNT 0x08
        (0x05, 8),    // EV_SW: SW_CNT 0x11
        (0x11, 8),    // EV_LED: LED_CNT 0x10
        (0x12, 8),    // EV_SND: SND_CNT 0x08
        (0x14, 8),    // EV_REP: REP_CNT 0x02
        (0x15, 16),   // EV_FF: FF_CNT 0x80
    ]

    /// The file for `device`; event times are written as `startMicroseconds + time / 1000`.
    ///
    /// Times must not be negative after adding `startMicroseconds`: such a time is written with
    /// a minus sign, which no evemu reader (ours included) accepts.
    /// The device name as an `N:` line holds it: line breaks become spaces, and blanks
    /// (space, tab) at either end are dropped, as readers drop them (found by fuzzing: a name
    /// ending in a tab did not survive the round trip).
    public static func nameAsWritten(_ name: String) -> String {
        // By Unicode scalar, so the `\r` and `\n` of a CRLF (one Character) both become spaces.
        var scalars = String.UnicodeScalarView()
        for scalar in name.unicodeScalars { scalars.append(scalar == "\n" || scalar == "\r" ? " " : scalar) }
        // Blanks are trimmed by scalar too, as the reader trims bytes: a space that begins a
        // grapheme cluster (a space + a combining mark is one Character) is still a leading
        // blank to the reader (found by fuzzing).
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" }
        var trimmed = Substring.UnicodeScalarView(scalars[...])
        while let first = trimmed.first, blank(first) { trimmed.removeFirst() }
        while let last = trimmed.last, blank(last) { trimmed.removeLast() }
        return String(trimmed)
    }

    public static func write(_ device: RecordedDevice, startMicroseconds: Int64 = 0) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(4096 + device.events.count * 28)
        let info = device.info
        let name = Self.nameAsWritten(info.name)
        out.append(text: "# EVEMU 1.3\n")
        out.append(text: "# Written by evflow\n")
        out.append(text: "# Input device name: \"\(name)\"\n")
        out.append(text: "# Input device ID: bus 0x\(String(info.inputID.bustype, radix: 16)) "
            + "vendor 0x\(String(info.inputID.vendor, radix: 16)) "
            + "product 0x\(String(info.inputID.product, radix: 16)) "
            + "version 0x\(String(info.inputID.version, radix: 16))\n")
        appendDescription(device, to: &out)
        var lastSynMillis: Int64 = 0
        for event in device.events {
            appendEvent(event, startMicroseconds: startMicroseconds, to: &out)
            out.removeLast()   // the newline: a comment follows
            appendComment(event, startMicroseconds: startMicroseconds, lastSynMillis: &lastSynMillis,
                          to: &out)
        }
        return out
    }

    /// The description lines of `device`, `N:` to `S:`, as `write` writes them (shared with
    /// `SessionWriter`, whose device blocks are these lines).
    static func appendDescription(_ device: RecordedDevice, to out: inout [UInt8]) {
        let info = device.info
        out.append(text: "N: \(nameAsWritten(info.name))\n")
        out.append(text: "I: ")
        out.appendHex(info.inputID.bustype, digits: 4)
        out.append(ASCII.space)
        out.appendHex(info.inputID.vendor, digits: 4)
        out.append(ASCII.space)
        out.appendHex(info.inputID.product, digits: 4)
        out.append(ASCII.space)
        out.appendHex(info.inputID.version, digits: 4)
        out.append(ASCII.newline)

        // INPUT_PROP_CNT is 0x20: one 8-byte line unless a property number is higher.
        for line in maskLines(info.inputProperties, minimumBytes: 8) {
            out.append(text: "P:")
            for byte in line { out.append(ASCII.space); out.appendHex(UInt16(byte), digits: 2) }
            out.append(ASCII.newline)
        }
        var types = Dictionary(uniqueKeysWithValues: standardMasks.map { ($0.type, $0.bytes) })
        for type in info.capabilities.keys where types[type] == nil { types[type] = 8 }
        for type in types.keys.sorted() {
            for line in maskLines(info.capabilities[type] ?? [], minimumBytes: types[type]!) {
                out.append(text: "B: ")
                out.appendHex(type, digits: 2)
                for byte in line { out.append(ASCII.space); out.appendHex(UInt16(byte), digits: 2) }
                out.append(ASCII.newline)
            }
        }
        for code in info.absInfo.keys.sorted() {
            let abs = info.absInfo[code]!
            out.append(text: "A: ")
            out.appendHex(code, digits: 2)
            for field in [abs.minimum, abs.maximum, abs.fuzz, abs.flat, abs.resolution] {
                out.append(ASCII.space)
                out.appendDecimal(Int64(field), width: 0)
            }
            out.append(ASCII.newline)
        }
        for (prefix, states) in [("L: ", device.ledStates), ("S: ", device.switchStates)] {
            for code in states.keys.sorted() {
                out.append(text: prefix)
                out.appendHex(code, digits: 2)
                out.append(ASCII.space)
                out.appendDecimal(Int64(states[code]!), width: 0)
                out.append(ASCII.newline)
            }
        }
    }

    /// Writes `device` to `url` (replacing the file).
    public static func write(_ device: RecordedDevice, to url: URL,
                             startMicroseconds: Int64 = 0) throws {
        try Data(write(device, startMicroseconds: startMicroseconds)).write(to: url, options: .atomic)
    }

    /// `E: sec.usec tttt cccc value`, as evemu-record writes it (value padded as `%04d`).
    static func appendEvent(_ event: InputEvent, startMicroseconds: Int64, to out: inout [UInt8]) {
        // Floor division, so a time of -1 ns is the microsecond before, not after, zero.
        let micros = startMicroseconds
            + (event.time >= 0 ? event.time / 1000 : -((-event.time + 999) / 1000))
        out.append(text: "E: ")
        appendTime(micros, to: &out)
        out.append(ASCII.space)
        out.appendHex(event.type, digits: 4)
        out.append(ASCII.space)
        out.appendHex(event.code, digits: 4)
        out.append(ASCII.space)
        out.appendDecimal(Int64(event.value), width: 4)   // "-013", "0001": printf's %04d
        out.append(ASCII.newline)
    }

    /// `sec.usec` with six fraction digits (a minus sign before a negative time).
    static func appendTime(_ micros: Int64, to out: inout [UInt8]) {
        if micros < 0 { out.append(ASCII.minus) }
        out.appendDecimal(Int64(micros.magnitude / 1_000_000), width: 0)
        out.append(ASCII.dot)
        out.appendDecimal(Int64(micros.magnitude % 1_000_000), width: 6)
    }

    /// evemu-record's comment after an event: names from libevdev (`EventNames`), and for each
    /// `SYN_REPORT` the milliseconds since the previous one, so people can read the file.
    static func appendComment(_ event: InputEvent, startMicroseconds: Int64, lastSynMillis: inout Int64,
                              to out: inout [UInt8]) {
        out.append(ASCII.tab)
        if event.type == EventType.syn && event.code == SynCode.mtReport {
            out.append(text: "# ++++++++++++ \(EventNames.codeText(type: event.type, code: event.code)) "
                + "(\(event.value)) ++++++++++\n")
        } else if event.type == EventType.syn {
            let micros = startMicroseconds + event.time / 1000
            let millis = micros / 1_000_000 * 1000 + micros % 1_000_000 / 1000
            let delta = millis - lastSynMillis
            lastSynMillis = millis
            out.append(text: "# ------------ \(EventNames.codeText(type: event.type, code: event.code)) "
                + "(\(event.value)) ---------- \(delta >= 0 ? "+" : "")\(delta)ms\n")
        } else {
            let code = EventNames.codeText(type: event.type, code: event.code)
            let padded = code.count < 20 ? code + String(repeating: " ", count: 20 - code.count) : code
            out.append(text: "# \(EventNames.typeText(event.type)) / \(padded) \(event.value)\n")
        }
    }

    /// The bitmask of `bits` as 8-byte lines, at least `minimumBytes` long.
    static func maskLines(_ bits: Set<UInt16>, minimumBytes: Int) -> [[UInt8]] {
        let needed = (Int(bits.max() ?? 0) / 8) + 1
        let count = (max(minimumBytes, needed) + 7) / 8 * 8
        var bytes = [UInt8](repeating: 0, count: count)
        for bit in bits { bytes[Int(bit) / 8] |= 1 << (bit % 8) }
        return stride(from: 0, to: count, by: 8).map { Array(bytes[$0..<$0 + 8]) }
    }
}

extension [UInt8] {
    mutating func append(text: String) {
        append(contentsOf: text.utf8)
    }

    /// Lower-case hex, at least `digits` wide (4 when the value needs it).
    mutating func appendHex(_ value: UInt16, digits: Int) {
        var shift = (Swift.max(digits, value > 0xFF ? 4 : 2) - 1) * 4
        while shift >= 0 {
            let nibble = UInt8((value >> UInt16(shift)) & 0xF)
            append(nibble < 10 ? ASCII.zero + nibble : 0x61 + nibble - 10)
            shift -= 4
        }
    }

    /// Decimal, zero-padded to `width` characters including a minus sign (printf's `%0*d`).
    mutating func appendDecimal(_ value: Int64, width: Int) {
        var magnitude = value.magnitude
        var digits = 0
        var scratch: (UInt64, UInt64, UInt64) = (0, 0, 0)   // 24 bytes: room for 20 digits
        Swift.withUnsafeMutableBytes(of: &scratch) { buffer in
            repeat {
                buffer[23 - digits] = UInt8(magnitude % 10) + ASCII.zero
                magnitude /= 10
                digits += 1
            } while magnitude > 0
        }
        if value < 0 { append(ASCII.minus) }
        let pad = width - digits - (value < 0 ? 1 : 0)
        if pad > 0 { append(contentsOf: repeatElement(ASCII.zero, count: pad)) }
        Swift.withUnsafeBytes(of: &scratch) { buffer in
            append(contentsOf: buffer[(24 - digits)...])
        }
    }
}
