#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel

/// Reads evemu recordings (`# EVEMU 1.2` / `1.3`, and the older header-less form).
///
/// A file holds a device description (`N:`, `I:`, `P:`, `B:`, `A:`, `L:`, `S:` lines) followed
/// by events (`E: sec.usec type code value`); evemu-record can also write the description to a
/// separate `.desc` file and only events to the `.events` file. See docs/formats/evemu.md for
/// the exact grammar, the time model and the errors.
///
/// The `E:` path is a byte scanner over the file buffer with no allocation per line: a later
/// benchmark parses a million events and must stay well above 2M events/s with filtering.
public enum EvemuReader {
    /// Reads a file that holds both the description and the events (or only a description).
    public static func read(contentsOf url: URL) throws(RecordingError) -> Recording {
        try read(events: url, description: nil)
    }

    /// Reads an events file whose description is in `description` (a `.desc` file), or in the
    /// events file itself when `description` is nil.
    public static func read(events: URL, description: URL?) throws(RecordingError) -> Recording {
        let eventBytes = try loadFile(events)
        guard let description else {
            return try parse(eventBytes, file: events.path)
        }
        let descriptionBytes = try loadFile(description)
        return try parse(events: eventBytes, file: events.path,
                         description: descriptionBytes, descriptionFile: description.path)
    }

    /// Parses a complete evemu file already in memory; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(RecordingError) -> Recording {
        try parse(events: bytes, file: file, description: nil, descriptionFile: "")
    }

    /// Parses an events file plus, when given, its separate description file.
    public static func parse(events: [UInt8], file: String, description: [UInt8]?,
                             descriptionFile: String) throws(RecordingError) -> Recording {
        var builder = DescriptionBuilder()
        if let description {
            try description.withUnsafeBufferPointer { (buffer) throws(RecordingError) in
                try rejectForeignFormats(buffer, file: descriptionFile)
                var sink = EventSink(capacity: 0, output: nil)
                try scan(buffer, file: descriptionFile, role: .descriptionOnly,
                         builder: &builder, sink: &sink)
            }
            try builder.requireComplete(file: descriptionFile, line: 1)
        }
        let role: ScanRole = description == nil ? .combined : .eventsOnly(descriptionFile: descriptionFile)
        var caught: RecordingError?
        var firstEventLine = 0
        var timeRange: (first: Int64, last: Int64)?
        let parsedEvents = events.withUnsafeBufferPointer { buffer in
            // Every event is one line, so lines bound the count: allocate once, write in place.
            let capacity = countNewlines(buffer) + 1
            return [InputEvent](unsafeUninitializedCapacity: capacity) { storage, count in
                do throws(RecordingError) {
                    try rejectForeignFormats(buffer, file: file)
                    var sink = EventSink(capacity: capacity, output: storage.baseAddress)
                    try scan(buffer, file: file, role: role, builder: &builder, sink: &sink)
                    count = sink.count
                    firstEventLine = sink.firstLine
                    if sink.count > 0 { timeRange = (sink.base, sink.previous) }
                } catch {
                    caught = error
                    count = 0
                }
            }
        }
        if let caught { throw caught }
        if description == nil, firstEventLine == 0 {
            // No events: the description must still be there (checked at the first E: otherwise).
            try builder.requireComplete(file: file, line: 1)
        }
        let device = builder.build(events: parsedEvents)
        return Recording(devices: [device], startMicroseconds: timeRange?.first ?? 0,
                         timestampKind: .classify(first: timeRange?.first, last: timeRange?.last))
    }

    /// The `.desc` file that evemu-record wrote beside an events-only file, if there is one.
    ///
    /// Tries the events file's name with its extensions removed one at a time, so both
    /// `Mouse.events` → `Mouse.desc` and `Headset.buttons.events` → `Headset.desc` are found.
    public static func descriptionFile(forEvents url: URL) -> URL? {
        descriptionCandidates(forEvents: url).first { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The names `descriptionFile(forEvents:)` tries, in order.
    public static func descriptionCandidates(forEvents url: URL) -> [URL] {
        let directory = url.deletingLastPathComponent()
        var stem = url.lastPathComponent
        var candidates: [URL] = []
        while let dot = stem.lastIndex(of: "."), dot != stem.startIndex {
            stem = String(stem[..<dot])
            let candidate = directory.appendingPathComponent(stem + ".desc")
            if candidate.path != url.path { candidates.append(candidate) }
        }
        return candidates
    }

    // MARK: - Loading

    static func loadFile(_ url: URL, limit: Int = RecordingLimits.maxFileBytes) throws(RecordingError) -> [UInt8] {
        try RecordingLimits.read(url.path, limit: limit)
    }

    // MARK: - Scanning

    /// What a file may contain.
    enum ScanRole {
        /// Description then events, one file.
        case combined
        /// A `.desc` file: description only.
        case descriptionOnly
        /// An `.events` file whose description is elsewhere: events and comments only.
        case eventsOnly(descriptionFile: String)
    }

    /// Where parsed events go, plus the running time state.
    struct EventSink {
        let capacity: Int
        let output: UnsafeMutablePointer<InputEvent>?
        var count = 0
        /// Raw µs of the first event (the file's time base).
        var base: Int64 = 0
        /// Raw µs of the latest event.
        var previous: Int64 = 0
        /// Line of the first `E:` line (0: none yet).
        var firstLine = 0

        init(capacity: Int, output: UnsafeMutablePointer<InputEvent>?) {
            self.capacity = capacity
            self.output = output
        }
    }

    /// Latest event time, in µs after the first event (`RecordingLimits.maxTimeMicroseconds`).
    static let maxOffsetMicroseconds: Int64 = RecordingLimits.maxTimeMicroseconds

    /// Refuses hid-recorder files and libinput YAML before anything else is read, so the error
    /// says what the file is instead of complaining about its first odd line.
    static func rejectForeignFormats(_ buffer: UnsafeBufferPointer<UInt8>,
                                     file: String) throws(RecordingError) {
        var cursor = ByteCursor(buffer, file: file)
        var sawContent = false
        while !cursor.atEnd {
            cursor.line += 1
            if cursor.line == 1, cursor.startsWith("# HID") {
                throw cursor.error(.notAnEvdevRecording(
                    "hid-recorder file (raw HID reports, not evdev events)"))
            }
            if cursor.line == 1, cursor.startsWith(SessionReader.magicPrefix) {
                throw cursor.error(.notAnEvdevRecording(
                    "evflow session file (devices that come and go; docs/formats/session.md): "
                        + "replay it with evflowd --replay, or take one device out with evflowctl convert"))
            }
            if cursor.startsWith("E:") { return }   // the events start: description is over
            if cursor.startsWith("R:") || cursor.startsWith("D:") {
                throw cursor.error(.notAnEvdevRecording(
                    "hid-recorder file (R: report descriptor and D: lines carry raw HID reports)"))
            }
            if !sawContent, !cursor.startsWith("#") {
                var probe = cursor
                probe.skipBlanks()
                if !probe.atLineEnd {
                    sawContent = true
                    if probe.startsWith("version:") || probe.startsWith("ndevices:")
                        || probe.startsWith("---") {
                        throw cursor.error(.notAnEvdevRecording(
                            "libinput record YAML (read it with LibinputRecordReader)"))
                    }
                }
            }
            cursor.skipToNextLine()
        }
    }

    static func scan(_ buffer: UnsafeBufferPointer<UInt8>, file: String, role: ScanRole,
                     builder: inout DescriptionBuilder,
                     sink: inout EventSink) throws(RecordingError) {
        var cursor = ByteCursor(buffer, file: file)
        while cursor.p < cursor.end {
            cursor.line += 1
            let first = cursor.p.pointee
            // Hot path: an event line.
            if first == 0x45 /* E */, cursor.p + 1 < cursor.end, cursor.p[1] == ASCII.colon {
                guard let output = sink.output else {
                    throw cursor.error(.misplacedLine("E: line in a description file"))
                }
                cursor.p += 2
                let raw = try cursor.timestamp()
                let type = try cursor.hex("event type", max: 0xFFFF)
                let code = try cursor.hex("event code", max: 0xFFFF)
                let value = try cursor.int32("event value")
                try cursor.finishLine()
                if sink.count == 0 {
                    if case .combined = role {
                        try builder.requireComplete(file: file, line: cursor.line)
                    }
                    sink.base = raw
                    sink.previous = raw
                    sink.firstLine = cursor.line
                } else if raw < sink.previous {
                    throw cursor.error(.timeWentBackwards(previousMicroseconds: sink.previous,
                                                          microseconds: raw))
                }
                let offset = raw &- sink.base
                guard offset <= maxOffsetMicroseconds else {
                    throw cursor.error(.badNumber(field: RecordingLimits.timestampField,
                                                  text: RecordingError.Reason.seconds(raw)))
                }
                sink.previous = raw
                assert(sink.count < sink.capacity, "one event per line, and lines were counted")
                (output + sink.count).initialize(to: InputEvent(
                    time: offset &* 1000, type: UInt16(truncatingIfNeeded: type),
                    code: UInt16(truncatingIfNeeded: code), value: value))
                sink.count += 1
                continue
            }
            try scanOtherLine(&cursor, role: role, builder: &builder, eventsSoFar: sink.count)
        }
    }

    /// Comments, blank lines and description lines.
    static func scanOtherLine(_ cursor: inout ByteCursor, role: ScanRole,
                              builder: inout DescriptionBuilder,
                              eventsSoFar: Int) throws(RecordingError) {
        if cursor.line == 1, cursor.p.pointee == ASCII.hash {
            builder.parseVersion(cursor.restOfLine())
            cursor.skipToNextLine()
            return
        }
        if cursor.skipBlankOrCommentLine() { return }
        let letter = try DescriptionBuilder.lineLetter(cursor)
        switch role {
        case .eventsOnly(let descriptionFile):
            throw cursor.error(.misplacedLine(
                "\(letter): line in an events file whose description is \(descriptionFile)"))
        case .combined where eventsSoFar > 0:
            throw cursor.error(.misplacedLine("\(letter): line after the first E: line"))
        default:
            break
        }
        cursor.p += 2
        try builder.parseLine(letter, &cursor)
    }
}

/// Collects the description lines of an evemu file.
struct DescriptionBuilder {
    /// The letter of the description line at `cursor` (`N:`, `I:`, `P:`, `B:`, `A:`, `L:` or
    /// `S:`, in column 0 as evemu requires); anything else is an unknown prefix, named by what
    /// the line starts with.
    static func lineLetter(_ cursor: ByteCursor) throws(RecordingError) -> Character {
        let first = cursor.p.pointee
        let isPrefixed = cursor.p + 1 < cursor.end && cursor.p[1] == ASCII.colon
        guard isPrefixed, [0x4E, 0x49, 0x50, 0x42, 0x41, 0x4C, 0x53].contains(first) else {   // N I P B A L S
            var start = cursor
            start.skipBlanks()
            throw cursor.error(.unknownLinePrefix(cursor.token(from: start.p)))
        }
        return Character(UnicodeScalar(first))
    }

    var name: String?
    var inputID: InputID?
    var version: (major: Int, minor: Int)?
    var propertyBytes: [UInt8] = []
    /// Bitmask bytes per event type, in file order (consecutive `B:` lines of a type append).
    var typeBytes: [UInt16: [UInt8]] = [:]
    var absInfo: [UInt16: AbsInfo] = [:]
    var leds: [UInt16: Int32] = [:]
    var switches: [UInt16: Int32] = [:]

    /// `# EVEMU 1.3` on the first line; anything else means the header-less 1.0 format.
    mutating func parseVersion(_ comment: String) {
        let parts = comment.split(separator: " ")
        guard parts.count >= 3, parts[0] == "#", parts[1] == "EVEMU" else { return }
        let numbers = parts[2].split(separator: ".")
        if numbers.count == 2, let major = Int(numbers[0]), let minor = Int(numbers[1]) {
            version = (major, minor)
        }
    }

    mutating func parseLine(_ letter: Character, _ cursor: inout ByteCursor) throws(RecordingError) {
        switch letter {
        case "N":
            guard name == nil else { throw cursor.error(.misplacedLine("second N: line")) }
            // An empty name is a name: the kernel allows one, and EvemuWriter writes it as an
            // empty `N:` line (a libinput record of such a device did not round-trip; found
            // by fuzzing).
            name = cursor.restOfLine()
            cursor.skipToNextLine()
            return
        case "I":
            guard inputID == nil else { throw cursor.error(.misplacedLine("second I: line")) }
            let bus = try cursor.hex("bus type", max: 0xFFFF)
            let vendor = try cursor.hex("vendor", max: 0xFFFF)
            let product = try cursor.hex("product", max: 0xFFFF)
            let version = try cursor.hex("version", max: 0xFFFF)
            inputID = InputID(bustype: UInt16(bus), vendor: UInt16(vendor), product: UInt16(product),
                              version: UInt16(version))
        case "P":
            for index in 0..<8 {
                propertyBytes.append(UInt8(try cursor.hex("property byte \(index)", max: 0xFF)))
            }
        case "B":
            let type = UInt16(try cursor.hex("event type", max: UInt32(EventType.max)))
            var bytes = typeBytes[type] ?? []
            for index in 0..<8 {
                bytes.append(UInt8(try cursor.hex("bitmask byte \(index)", max: 0xFF)))
            }
            typeBytes[type] = bytes
        case "A":
            let code = UInt16(try cursor.hex("axis code", max: 0xFFFF))
            let minimum = try cursor.int32("axis minimum")
            let maximum = try cursor.int32("axis maximum")
            let fuzz = try cursor.int32("axis fuzz")
            let flat = try cursor.int32("axis flat")
            // Files before 1.2 have no resolution; accept both forms whatever the header says.
            cursor.skipBlanks()
            let resolution = cursor.atLineEnd ? 0 : try cursor.int32("axis resolution")
            let axis = AbsInfo(minimum: minimum, maximum: maximum, fuzz: fuzz, flat: flat, resolution: resolution)
            if let problem = axis.problem { throw cursor.error(.impossibleAxis(code: code, problem: problem)) }
            absInfo[code] = axis
        case "L":
            let code = UInt16(try cursor.hex("LED code", max: 0xFFFF))
            leds[code] = try cursor.int32("LED state")
        case "S":
            let code = UInt16(try cursor.hex("switch code", max: 0xFFFF))
            switches[code] = try cursor.int32("switch state")
        default:
            preconditionFailure("caller passes only description prefixes")
        }
        try cursor.finishLine()
    }

    /// Throws `missingDescription` unless the name and ids were given.
    func requireComplete(file: String, line: Int) throws(RecordingError) {
        if name == nil {
            throw RecordingError(file: file, line: line, reason: .missingDescription(
                "no N: line before the events (an events-only file needs its .desc file)"))
        }
        if inputID == nil {
            throw RecordingError(file: file, line: line, reason: .missingDescription("no I: line"))
        }
    }

    func build(events: [InputEvent]) -> RecordedDevice {
        var capabilities: [UInt16: Set<UInt16>] = [:]
        for (type, bytes) in typeBytes {
            let codes = Self.bits(bytes)
            if !codes.isEmpty { capabilities[type] = codes }   // evemu: a type with no codes is off
        }
        let properties = Self.bits(propertyBytes)
        let info = DeviceInfo(
            name: name ?? "", inputID: inputID ?? InputID(bustype: 0, vendor: 0, product: 0, version: 0),
            // Recordings have no udev: classify by udev's own rules so replay filters match live.
            classes: DeviceClassifier.classes(capabilities: capabilities, inputProperties: properties,
                                              bustype: inputID?.bustype ?? 0),
            capabilities: capabilities, absInfo: absInfo, inputProperties: properties)
        return RecordedDevice(info: info, events: events, ledStates: leds, switchStates: switches)
    }

    /// Bit numbers set in a little-endian byte mask (bit 0 of byte 0 is code 0).
    static func bits(_ bytes: [UInt8]) -> Set<UInt16> {
        var result: Set<UInt16> = []
        for (index, byte) in bytes.enumerated() where byte != 0 {
            for bit in 0..<8 where byte & (1 << bit) != 0 {
                result.insert(UInt16(index * 8 + bit))
            }
        }
        return result
    }
}
