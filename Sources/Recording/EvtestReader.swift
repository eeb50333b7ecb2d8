#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// Reads the text `evtest` prints — what most bug reports paste: a header describing the
/// device, then one `Event:` line per event.
///
/// ```
/// Input driver version is 1.0.1
/// Input device ID: bus 0x3 vendor 0x46d product 0xc077 version 0x111
/// Input device name: "Logitech USB Optical Mouse"
/// Supported events:
///   Event type 1 (EV_KEY)
///     Event code 272 (BTN_LEFT)
///   Event type 3 (EV_ABS)
///     Event code 0 (ABS_X)
///       Value    512
///       Min        0
///       Max     1023
///       Fuzz       4
/// Properties:
///   Property type 0 (INPUT_PROP_POINTER)
/// Testing ... (interrupt to exit)
/// Event: time 1700000000.123456, type 1 (EV_KEY), code 272 (BTN_LEFT), value 1
/// Event: time 1700000000.123456, -------------- SYN_REPORT ------------
/// ```
///
/// Numbers are read, names ignored (evtest prints both). As evtest does, `MSC_SCAN` and
/// `MSC_RAW` values are hexadecimal. Event times become offsets from the first event, as
/// the evemu reader makes them, so the same stream gives the same frames in either form. A
/// time earlier than the one before is an error naming the line. Switch and LED states
/// (`Event code 0 (SW_LID) state 1`) become the initial states. Lines evtest does not print
/// for events (the `Key repeat handling:` block, `Testing ...`, blank lines) are skipped.
public enum EvtestReader {
    /// Whether `bytes` look like evtest output: the first line that is not blank starts with
    /// evtest's header or an `Event: time` line.
    public static func looksLikeEvtest(_ bytes: [UInt8]) -> Bool {
        let prefix = String(decoding: bytes.prefix(4096), as: UTF8.self)
        for line in prefix.split(separator: "\n", omittingEmptySubsequences: true) {
            let t = line.drop { $0 == " " || $0 == "\t" }
            if t.isEmpty { continue }
            return t.hasPrefix("Input driver version is") || t.hasPrefix("Input device ID:")
                || t.hasPrefix("Input device name:") || t.hasPrefix("Event: time ")
        }
        return false
    }

    /// Parses evtest output; `description`, when given, is another evtest output whose header
    /// describes the device (for a file of `Event:` lines only).
    public static func parse(_ bytes: [UInt8], file: String, description: [UInt8]? = nil,
                             descriptionFile: String = "") throws(RecordingError) -> Recording {
        var header = Header()
        if let description {
            try header.read(lines(description), file: descriptionFile, eventsAllowed: false)
        }
        let text = lines(bytes)
        var events: [InputEvent] = []
        var base: Int64?
        var previous: Int64 = 0
        for (index, line) in text.enumerated() {
            let number = index + 1
            let t = line.drop { $0 == " " || $0 == "\t" }
            guard t.hasPrefix("Event: time ") else {
                if description == nil || !t.isEmpty {
                    if events.isEmpty && description == nil {
                        try header.read([line], file: file, eventsAllowed: false, firstLine: number)
                    } else if !t.isEmpty && !t.hasPrefix("Testing") {
                        throw RecordingError(file: file, line: number, reason: .misplacedLine(
                            "evtest output: only Event: lines may follow the first event"))
                    }
                }
                continue
            }
            if !header.complete {
                throw RecordingError(file: file, line: number, reason: .missingDescription(
                    "no evtest header (Input device ID: and Input device name:) before the events; "
                        + "give the header with --desc"))
            }
            let event = try parseEvent(t, file: file, line: number)
            if base == nil { base = event.micros; previous = event.micros }
            if event.micros < previous {
                throw RecordingError(file: file, line: number, reason: .timeWentBackwards(
                    previousMicroseconds: previous, microseconds: event.micros))
            }
            // Event times are nanoseconds from the first event: a later event more than
            // Int64.max ns (292 years) after it cannot be held (found by fuzzing: it trapped),
            // and one past `RecordingLimits.maxTimeNanoseconds` overflows later sums.
            let offset = event.micros - base!
            guard offset <= EvemuReader.maxOffsetMicroseconds else {
                throw RecordingError(file: file, line: number, reason: .badNumber(
                    field: RecordingLimits.timestampField, text: RecordingError.Reason.seconds(event.micros)))
            }
            previous = event.micros
            events.append(InputEvent(time: offset * 1000, type: event.type, code: event.code, value: event.value))
        }
        if events.isEmpty {
            // At the end, where the events were missing (line 0 is for a file that could not be read).
            throw RecordingError(file: file, line: max(1, text.count), reason: .noEvents(
                "the file has no Event: lines (a description alone is not a recording)"))
        }
        let device = header.build(events: events)
        return Recording(devices: [device], startMicroseconds: base ?? 0,
                         timestampKind: .classify(first: base, last: previous))
    }

    static func lines(_ bytes: [UInt8]) -> [Substring] {
        String(decoding: bytes, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false)
            .map { $0.hasSuffix("\r") ? $0.dropLast() : $0 }
    }

    /// `Event: time 1700000000.123456, type 1 (EV_KEY), code 272 (BTN_LEFT), value 1` or
    /// `Event: time 1700000000.123456, -------------- SYN_REPORT ------------`.
    static func parseEvent(_ line: Substring, file: String, line number: Int) throws(RecordingError)
        -> (micros: Int64, type: UInt16, code: UInt16, value: Int32) {
        func fail(_ reason: RecordingError.Reason) -> RecordingError {
            RecordingError(file: file, line: number, reason: reason)
        }
        let rest = line.dropFirst("Event: time ".count)
        guard let comma = rest.firstIndex(of: ",") else { throw fail(.truncatedLine(expected: "', type'")) }
        let timeText = rest[..<comma]
        let parts = timeText.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let sec = Int64(parts[0]), let usec = Int64(parts[1]), parts[1].count == 6,
              sec >= 0, sec < 1 << 40 else {
            throw fail(.badNumber(field: "timestamp", text: String(timeText)))
        }
        let micros = sec * 1_000_000 + usec
        let body = rest[rest.index(after: comma)...].drop { $0 == " " }
        if body.hasPrefix("-") || body.hasPrefix("+") || body.hasPrefix(">") {
            let name = body.split(whereSeparator: { "-+<> ".contains($0) }).first.map(String.init) ?? ""
            guard let code = EventNames.code(named: name, type: EventType.syn) else {
                throw fail(.badNumber(field: "SYN code", text: name))
            }
            return (micros, EventType.syn, code, 0)
        }
        // type N (NAME), code N (NAME), value V
        let fields = body.split(separator: ",").map { $0.drop { $0 == " " } }
        guard fields.count == 3 else { throw fail(.truncatedLine(expected: "type, code and value")) }
        func after(_ field: Substring, _ key: String) throws(RecordingError) -> Substring {
            guard field.hasPrefix(key + " ") else { throw fail(.truncatedLine(expected: "'\(key)'")) }
            return field.dropFirst(key.count + 1).prefix { $0 != " " }
        }
        let typeText = try after(fields[0], "type"), codeText = try after(fields[1], "code")
        let valueText = try after(fields[2], "value")
        guard let type = UInt16(typeText) else { throw fail(.badNumber(field: "type", text: String(typeText))) }
        guard let code = UInt16(codeText) else { throw fail(.badNumber(field: "code", text: String(codeText))) }
        let value: Int32
        if type == EventType.msc && (code == 3 || code == 4) {   // MSC_RAW, MSC_SCAN: printed as %02x
            guard let v = UInt32(valueText, radix: 16) else { throw fail(.badHex(field: "value", text: String(valueText))) }
            value = Int32(bitPattern: v)
        } else {
            guard let v = Int32(valueText) else { throw fail(.badNumber(field: "value", text: String(valueText))) }
            value = v
        }
        return (micros, type, code, value)
    }

    /// The device as evtest's header describes it.
    struct Header {
        var name: String?
        var inputID: InputID?
        var capabilities: [UInt16: Set<UInt16>] = [:]
        var absInfo: [UInt16: AbsInfo] = [:]
        var properties: Set<UInt16> = []
        var switches: [UInt16: Int32] = [:]
        var leds: [UInt16: Int32] = [:]
        var type: UInt16?
        var code: UInt16?

        var complete: Bool { name != nil && inputID != nil }

        mutating func read(_ lines: [Substring], file: String, eventsAllowed: Bool, firstLine: Int = 1)
            throws(RecordingError) {
            for (i, line) in lines.enumerated() {
                let number = firstLine + i
                let t = line.drop { $0 == " " || $0 == "\t" }
                func hexField(_ key: String) -> UInt16? {
                    guard let r = t.firstRange(of: key + " 0x") else { return nil }
                    return UInt16(t[r.upperBound...].prefix { $0.isHexDigit }, radix: 16)
                }
                if t.hasPrefix("Input device ID:") {
                    guard let bus = hexField("bus"), let vendor = hexField("vendor"), let product = hexField("product"),
                          let version = hexField("version") else {
                        throw RecordingError(file: file, line: number, reason: .badHex(field: "Input device ID", text: String(t)))
                    }
                    inputID = InputID(bustype: bus, vendor: vendor, product: product, version: version)
                } else if t.hasPrefix("Input device name:") {
                    var n = t.dropFirst("Input device name:".count).drop { $0 == " " }
                    if n.hasPrefix("\""), n.hasSuffix("\""), n.count >= 2 { n = n.dropFirst().dropLast() }
                    name = String(n)
                } else if t.hasPrefix("Event type ") {
                    // An evdev type is at most EV_MAX; a bigger or unreadable one was ignored, so
                    // its codes went to the type before it, and a type > EV_MAX made a device
                    // EvemuWriter could not write readably (found by fuzzing).
                    let digits = t.dropFirst("Event type ".count).prefix { $0.isNumber }
                    guard let v = UInt16(digits), v <= EventType.max else {
                        throw RecordingError(file: file, line: number, reason: .badNumber(
                            field: "event type (at most \(EventType.max))", text: String(digits)))
                    }
                    type = v
                    code = nil
                    if capabilities[v] == nil && v != EventType.syn { capabilities[v] = [] }
                } else if t.hasPrefix("Event code "), let type {
                    guard let c = UInt16(t.dropFirst("Event code ".count).prefix { $0.isNumber }) else { continue }
                    code = c
                    capabilities[type, default: []].insert(c)
                    if let r = t.firstRange(of: " state "), let s = Int32(t[r.upperBound...].prefix { $0.isNumber }) {
                        if type == EventType.sw { switches[c] = s } else if type == EventType.led { leds[c] = s }
                    }
                } else if let type, type == EventType.abs, let code, let (key, value) = Self.absField(t) {
                    var info = absInfo[code] ?? AbsInfo(minimum: 0, maximum: 0)
                    switch key {
                    case "Value": info.value = value
                    case "Min": info.minimum = value
                    case "Max": info.maximum = value
                    case "Fuzz": info.fuzz = value
                    case "Flat": info.flat = value
                    case "Resolution": info.resolution = value
                    default: break
                    }
                    absInfo[code] = info
                } else if t.hasPrefix("Property type ") {
                    if let p = UInt16(t.dropFirst("Property type ".count).prefix { $0.isNumber }) { properties.insert(p) }
                } else if t.hasPrefix("Key repeat handling:") || t.hasPrefix("Properties:") {
                    type = nil
                    code = nil
                } else if t.hasPrefix("Event: time ") && !eventsAllowed {
                    throw RecordingError(file: file, line: number, reason: .misplacedLine(
                        "Event: line in a description"))
                }
            }
        }

        static func absField(_ t: Substring) -> (String, Int32)? {
            let parts = t.split(separator: " ", omittingEmptySubsequences: true)
            guard parts.count == 2, let v = Int32(parts[1]) else { return nil }
            return (String(parts[0]), v)
        }

        func build(events: [InputEvent]) -> RecordedDevice {
            // evtest lists EV_SYN with its codes; evemu's description does too (B: 00 ...).
            let caps = capabilities.filter { !$0.value.isEmpty }
            let inputID = inputID ?? InputID(bustype: 0, vendor: 0, product: 0, version: 0)
            let info = DeviceInfo(
                name: name ?? "", inputID: inputID,
                classes: DeviceClassifier.classes(capabilities: caps, inputProperties: properties,
                                                  bustype: inputID.bustype),
                capabilities: caps, absInfo: absInfo, inputProperties: properties)
            return RecordedDevice(info: info, events: events, ledStates: leds, switchStates: switches)
        }
    }
}
