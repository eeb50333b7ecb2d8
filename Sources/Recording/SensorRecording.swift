#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import FileReading
import InputModel

/// A recording of sensor streams (docs/formats/sensors.md): each sensor's description, then
/// its samples in time order, on one time base.
public struct SensorRecording: Hashable, Sendable {
    /// One sample line: which sensor, when (ns from the first sample line), the values.
    public struct Entry: Hashable, Sendable {
        /// Index into `sensors`.
        public var sensor: Int
        /// The sample, its time relative to the first sample line of the file.
        public var sample: SensorSample

        /// An entry.
        public init(sensor: Int, sample: SensorSample) {
            self.sensor = sensor
            self.sample = sample
        }
    }

    /// The first line of every sensor recording.
    public static let magic = "# EVFLOW SENSORS 1"

    /// The sensors, in file order.
    public var sensors: [SensorInfo]
    /// Every sample, in time order.
    public var entries: [Entry]

    /// A recording.
    public init(sensors: [SensorInfo], entries: [Entry]) {
        self.sensors = sensors
        self.entries = entries
    }

    /// Whether `bytes` start like a sensor recording.
    public static func looks(_ bytes: [UInt8]) -> Bool { bytes.starts(with: Array(magic.utf8)) }

    /// Whether the file at `path` starts like a sensor recording (false when unreadable).
    public static func isSensorRecording(path: String) -> Bool {
        guard let head = try? BoundedFile.readHead(path, count: magic.utf8.count) else { return false }
        return looks(head)
    }

    /// Reads the file at `path`.
    public static func read(path: String) throws(RecordingError) -> SensorRecording {
        let bytes: [UInt8]
        do {
            bytes = try BoundedFile.read(path, limit: RecordingLimits.maxFileBytes)
        } catch {
            throw RecordingError(file: path, line: 0, reason: .unreadable("\(error)"))
        }
        return try parse(bytes, file: path)
    }

    /// Parses a sensor recording; an error names its line.
    public static func parse(_ bytes: [UInt8], file: String) throws(RecordingError) -> SensorRecording {
        // Lines and fields are cut at bytes, not Characters: "\r\n" is one Character, so a name
        // ending in "\r" would join its line to the next when written back (a fuzz finding).
        var lines = bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { $0.last == UInt8(ascii: "\r") ? $0.dropLast() : $0 }
        if lines.last?.isEmpty == true { lines.removeLast() }
        func fail(_ line: Int, _ reason: RecordingError.Reason) -> RecordingError {
            RecordingError(file: file, line: line, reason: reason)
        }
        guard let first = lines.first, first.elementsEqual(magic.utf8) else {
            throw fail(1, .badSession("the first line must be '\(magic)'"))
        }
        var sensors: [SensorInfo] = []
        var handles: [String: Int] = [:]
        var blockLines: [Int] = []
        var entries: [Entry] = []
        var base: Int64?
        var previous: Int64?
        for (index, rawLine) in lines.enumerated().dropFirst() {
            let number = index + 1
            let line = rawLine.prefix { $0 != UInt8(ascii: "#") }
            let fields = line.split(whereSeparator: Self.isBlank).map { String(decoding: $0, as: UTF8.self) }
            guard let prefix = fields.first else { continue }
            switch prefix {
            case "S:":
                guard entries.isEmpty else { throw fail(number, .misplacedLine("S: line after the first V: line (sensors come first)")) }
                guard fields.count >= 4 else { throw fail(number, .truncatedLine(expected: ["handle", "sysname", "reading"][max(0, fields.count - 1)])) }
                guard fields.count <= 5 else { throw fail(number, .trailingText(fields[5])) }
                guard handles[fields[1]] == nil else { throw fail(number, .badSession("second sensor with the handle '\(fields[1])'")) }
                let buffered: Bool
                switch fields[3] {
                case "buffered": buffered = true
                case "polled": buffered = false
                default: throw fail(number, .badSession("reading must be 'buffered' or 'polled', not '\(fields[3])'"))
                }
                handles[fields[1]] = sensors.count
                blockLines.append(number)
                let id = fields.count == 5 ? fields[4] : "iio-\(fields[2])"
                sensors.append(SensorInfo(id: DeviceID(rawValue: id), name: fields[1], sysname: fields[2],
                                          channels: [], buffered: buffered))
            case "N:":
                guard entries.isEmpty, !sensors.isEmpty else { throw fail(number, .misplacedLine("N: line outside a sensor block")) }
                let name = line.drop { $0 != UInt8(ascii: ":") }.dropFirst().drop(while: Self.isBlank)
                sensors[sensors.count - 1].name = String(decoding: name.reversed().drop(while: Self.isBlank).reversed(), as: UTF8.self)
            case "C:":
                guard entries.isEmpty, !sensors.isEmpty else { throw fail(number, .misplacedLine("C: line outside a sensor block")) }
                guard fields.count >= 3 else { throw fail(number, .truncatedLine(expected: fields.count == 1 ? "channel" : "quantity")) }
                guard fields.count == 3 else { throw fail(number, .trailingText(fields[3])) }
                guard let quantity = SensorQuantity(rawValue: fields[2]) else {
                    throw fail(number, .badSession("unknown quantity '\(fields[2])'"))
                }
                // Issue #34: a second channel of one name made SAMPLE, STATE and MQTT documents
                // hold the key twice (`"values":{"x":1,"x":999}`).
                guard !sensors[sensors.count - 1].channels.contains(where: { $0.name == fields[1] }) else {
                    throw fail(number, .badSession("second channel named '\(fields[1])' in sensor '\(sensors[sensors.count - 1].name)'"))
                }
                sensors[sensors.count - 1].channels.append(SensorChannel(name: fields[1], quantity: quantity))
            case "V:":
                guard fields.count >= 3 else { throw fail(number, .truncatedLine(expected: fields.count == 1 ? "time" : "handle")) }
                guard let micros = Self.microseconds(fields[1]) else { throw fail(number, .badNumber(field: "time", text: fields[1])) }
                guard let s = handles[fields[2]] else { throw fail(number, .badSession("unknown sensor '\(fields[2])' (no S: \(fields[2]) line)")) }
                let channels = sensors[s].channels
                guard fields.count >= 3 + channels.count else {
                    throw fail(number, .truncatedLine(expected: "a value for \(channels[fields.count - 3].name)"))
                }
                guard fields.count == 3 + channels.count else { throw fail(number, .trailingText(fields[3 + channels.count])) }
                var values: [Double] = []
                for (i, text) in fields[3...].enumerated() {
                    guard let v = Double(text) else { throw fail(number, .badNumber(field: channels[i].name, text: text)) }
                    values.append(v)
                }
                if let previous, micros < previous { throw fail(number, .timeWentBackwards(previousMicroseconds: previous, microseconds: micros)) }
                previous = micros
                let origin = base ?? micros
                base = origin
                // Issue #34: a later time trapped here (`* 1000`) or in a replay's sums.
                guard micros - origin <= RecordingLimits.maxTimeMicroseconds else {
                    throw fail(number, .badNumber(field: RecordingLimits.timestampField, text: fields[1]))
                }
                entries.append(Entry(sensor: s, sample: SensorSample(time: (micros - origin) * 1000, values: values)))
            default:
                throw fail(number, .unknownLinePrefix(prefix))
            }
        }
        if sensors.isEmpty { throw fail(max(1, lines.count), .noEvents("the recording describes no sensor (no S: line)")) }
        for (i, sensor) in sensors.enumerated() where sensor.channels.isEmpty {
            throw fail(blockLines[i], .missingDescription("sensor '\(sensor.name)' has no C: channel line"))
        }
        return SensorRecording(sensors: sensors, entries: entries)
    }

    /// A field separator: space, tab or carriage return (a name cannot end in "\r": the
    /// writer's line would then end in "\r\n", which the reader takes for a Windows line end).
    private static func isBlank(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: " ") || byte == UInt8(ascii: "\t") || byte == UInt8(ascii: "\r")
    }

    /// `sec.usec` (exactly six fraction digits) as microseconds.
    static func microseconds(_ text: String) -> Int64? {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1].count == 6, !parts[0].isEmpty,
              parts[0].allSatisfy(\.isASCII), let sec = Int64(parts[0]), sec >= 0,
              parts[1].allSatisfy({ $0.isASCII && $0.isNumber }), let usec = Int64(parts[1]) else { return nil }
        let (m, o1) = sec.multipliedReportingOverflow(by: 1_000_000)
        let (t, o2) = m.addingReportingOverflow(usec)
        return o1 || o2 ? nil : t
    }

    /// The recording as text, which `parse` reads back to an equal value (handles `s1`, `s2`, …;
    /// udev properties and devnodes are not recorded). Times are written relative to the first
    /// sample, in whole microseconds.
    public func written() -> String {
        var out = Self.magic + "\n"
        out += "# Written by evflow: \(sensors.count) sensor(s), \(entries.count) sample(s); format: docs/formats/sensors.md\n"
        for (i, s) in sensors.enumerated() {
            out += "\nS: s\(i + 1) \(s.sysname) \(s.buffered ? "buffered" : "polled") \(s.id.rawValue)\n"
            out += "N: \(s.name)\n"
            for c in s.channels { out += "C: \(c.name) \(c.quantity.rawValue)\n" }
        }
        out += "\n"
        for e in entries {
            let micros = e.sample.time / 1000
            let fraction = String(micros % 1_000_000)
            out += "V: \(micros / 1_000_000).\(String(repeating: "0", count: 6 - fraction.count))\(fraction) s\(e.sensor + 1)"
            for v in e.sample.values { out += " \(v)" }
            out += "\n"
        }
        return out
    }
}

/// Builds a `SensorRecording` from a watch's samples (`evflowctl record --sensors`): the
/// sensors as `DEVICES` described them, then each `SAMPLE` as it arrives, times as evflowd
/// stamped them. A sample of a sensor not described is not recorded (counted), and one whose
/// time goes back is moved forward to the previous sample's time, so the file stays readable.
public struct SensorRecorder: Sendable {
    /// The recording so far.
    public private(set) var recording: SensorRecording
    /// Samples of sensors that were not described, left out.
    public private(set) var unknownSamples = 0
    private var index: [DeviceID: Int] = [:]

    /// A recorder of `sensors`.
    public init(sensors: [SensorInfo]) {
        recording = SensorRecording(sensors: sensors, entries: [])
        for (i, s) in sensors.enumerated() { index[s.id] = i }
    }

    /// The number of samples recorded.
    public var sampleCount: Int { recording.entries.count }

    /// Records a sample of `sensor` at `time` (CLOCK_MONOTONIC ns) with values by channel name.
    public mutating func sample(of sensor: DeviceID, time: Int64, values: [String: Double]) {
        guard let i = index[sensor] else {
            unknownSamples += 1
            return
        }
        let t = max(time, recording.entries.last?.sample.time ?? time)
        recording.entries.append(.init(sensor: i, sample: SensorSample(time: t, values: recording.sensors[i].channels.map { values[$0.name] ?? .nan })))
    }
}
