#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel
import YAML

/// Reads `libinput record` files (YAML, `version: 1`), one or more devices per file.
///
/// The YAML itself is parsed by libyaml and composed by `YAMLComposer`; this type only walks
/// the document and checks its shape.
/// Keys it does not know are ignored (libinput adds new ones over time). All devices of a file
/// share one time base, so the earliest event of the file is at 0 ns and the others keep their
/// distance from it. See docs/formats/libinput-record.md.
public enum LibinputRecordReader {
    /// Reads and parses the file at `url`.
    public static func read(contentsOf url: URL) throws(RecordingError) -> Recording {
        let bytes = try EvemuReader.loadFile(url, limit: RecordingLimits.maxYAMLFileBytes)
        return try parse(bytes, file: url.path)
    }

    /// Parses a libinput record document held in memory; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(RecordingError) -> Recording {
        guard bytes.count <= RecordingLimits.maxYAMLFileBytes else {
            throw RecordingError(file: file, line: 0, reason: .unreadable(
                "larger than the \(RecordingLimits.maxYAMLFileBytes >> 20) MiB limit for a libinput recording (docs/reliability.md)"))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw RecordingError(file: file, line: 1, reason: .yaml("file is not UTF-8"))
        }
        if let (line, reason) = foreignFormat(text) {
            throw RecordingError(file: file, line: line, reason: reason)
        }
        let root: YAMLNode?
        do {
            root = try YAMLComposer.compose(text)
        } catch {
            throw yamlError(error, file: file)
        }
        if let root, YAMLLimits.expandsBeyond(root, limit: YAMLLimits.maxNodes(textBytes: bytes.count)) {
            throw RecordingError(file: file, line: 1, reason: .yaml(
                "the document expands to more than \(YAMLLimits.maxNodes(textBytes: bytes.count)) nodes (aliases used over and over)"))
        }
        var walker = Walker(file: file)
        return try walker.recording(root)
    }

    /// hid-recorder output (first line `# HID`, or `R:`/`D:` lines) or an evemu file, told
    /// apart by the first line that is not a comment; nil for anything that may be YAML.
    static func foreignFormat(_ text: String) -> (line: Int, reason: RecordingError.Reason)? {
        var number = 0
        for line in text.utf8.split(separator: ASCII.newline, omittingEmptySubsequences: false) {
            number += 1
            let line = Substring(line)
            if number == 1, line.hasPrefix("# HID") {
                return (1, .notAnEvdevRecording("hid-recorder file (raw HID reports, not evdev events)"))
            }
            if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) { continue }
            if line.hasPrefix("R:") || line.hasPrefix("D:") {
                return (number, .notAnEvdevRecording(
                    "hid-recorder file (R: report descriptor and D: lines carry raw HID reports)"))
            }
            if ["N:", "I:", "E:", "B:"].contains(where: { line.hasPrefix($0) }) {
                return (number, .badStructure("this is an evemu file (read it with EvemuReader)"))
            }
            return nil
        }
        return nil
    }

    /// A udev property's value without the double quotes udev puts around `UNIQ` and `PHYS`.
    static func unquoted(_ s: String) -> String {
        s.count >= 2 && s.hasPrefix("\"") && s.hasSuffix("\"") ? String(s.dropFirst().dropLast()) : s
    }

    /// The YAML error at its line: libyaml's problem and context, or the duplicated keys.
    static func yamlError(_ error: YAMLError, file: String) -> RecordingError {
        if !error.duplicateKeys.isEmpty {
            return RecordingError(file: file, line: max(error.mark.line, 1), reason: .yaml(
                "duplicate keys \(error.duplicateKeys.joined(separator: ", "))"))
        }
        return RecordingError(file: file, line: error.mark.line, reason: .yaml(error.message))
    }

    /// Walks the composed document, turning shape problems into errors at the node's line.
    struct Walker {
        let file: String
        /// Line of the last node looked at, for errors about a missing key.
        var line = 1

        func fail(_ node: YAMLNode?, _ reason: RecordingError.Reason) -> RecordingError {
            RecordingError(file: file, line: node?.mark.line ?? line, reason: reason)
        }

        mutating func mapping(_ node: YAMLNode?, _ what: String) throws(RecordingError) -> YAMLMapping {
            try collection(node, what, \.mapping, "a mapping")
        }

        mutating func sequence(_ node: YAMLNode?, _ what: String) throws(RecordingError) -> YAMLSequence {
            try collection(node, what, \.sequence, "a list")
        }

        /// `node` as the collection `kind` names (read with `view`); its line becomes the
        /// line errors name from here on.
        private mutating func collection<Value>(
            _ node: YAMLNode?, _ what: String, _ view: (YAMLNode) -> Value?, _ kind: String
        ) throws(RecordingError) -> Value {
            guard let node else { throw fail(nil, .badStructure("missing \(what)")) }
            line = node.mark.line
            guard let collection = view(node) else {
                throw fail(node, .badStructure("\(what) is not \(kind)"))
            }
            return collection
        }

        func string(_ node: YAMLNode?, _ what: String) throws(RecordingError) -> String {
            guard let node else { throw fail(nil, .badStructure("missing \(what)")) }
            guard let scalar = node.scalar else { throw fail(node, .badStructure("\(what) is not a value")) }
            return scalar.string
        }

        /// A decimal integer scalar within `range` (no YAML 0x/0o forms: libinput writes decimals).
        func integer(_ node: YAMLNode?, _ what: String, _ range: ClosedRange<Int64>) throws(RecordingError) -> Int64 {
            let text = try string(node, what)
            guard let value = Int64(text), range.contains(value) else {
                throw fail(node, .badNumber(field: what, text: text))
            }
            return value
        }

        func integers(_ node: YAMLNode, _ what: String, count: Int?,
                      _ range: ClosedRange<Int64>) throws(RecordingError) -> [Int64] {
            guard let sequence = node.sequence else {
                throw fail(node, .badStructure("\(what) is not a list"))
            }
            if let count, sequence.count != count {
                throw fail(node, sequence.count < count
                    ? .truncatedLine(expected: "\(count) numbers in \(what), found \(sequence.count)")
                    : .trailingText("\(sequence.count - count) extra numbers in \(what)"))
            }
            var values: [Int64] = []
            values.reserveCapacity(sequence.count)
            for item in sequence { values.append(try integer(item, what, range)) }
            return values
        }

        static let u16: ClosedRange<Int64> = 0...Int64(UInt16.max)
        static let i32: ClosedRange<Int64> = Int64(Int32.min)...Int64(Int32.max)

        mutating func recording(_ root: YAMLNode?) throws(RecordingError) -> Recording {
            let top = try mapping(root, "document")
            let version = try integer(top["version"], "version", Int64.min...Int64.max)
            guard version == 1 else {
                throw fail(top["version"], .badStructure("version \(version) (only version 1 is known)"))
            }
            let deviceNodes = try sequence(top["devices"], "devices")
            if deviceNodes.count > RecordingLimits.maxDevices {
                throw fail(deviceNodes[RecordingLimits.maxDevices], .badStructure(
                    "more than \(RecordingLimits.maxDevices) devices in one recording (docs/reliability.md)"))
            }
            if let declared = top["ndevices"] {
                let count = try integer(declared, "ndevices", 0...Int64(Int32.max))
                guard count == deviceNodes.count else {
                    throw fail(declared, .badStructure("ndevices is \(count) but \(deviceNodes.count) devices follow"))
                }
            }
            // Raw µs per device first, so the shared base (the file's earliest event) is known.
            var parsed: [(device: RecordedDevice, raw: [Int64], lines: [Int])] = []
            for node in deviceNodes { parsed.append(try device(node)) }
            let firsts = parsed.compactMap { $0.raw.first }
            let base = firsts.min() ?? 0
            let last = parsed.compactMap { $0.raw.last }.max()
            // Issue #34: the seconds stop at 2³² here, past `RecordingLimits.maxTimeNanoseconds`,
            // where a replay's sums overflow; refused at the file's first such event.
            var late: (line: Int, micros: Int64)?
            for (_, raw, lines) in parsed {
                guard let i = raw.firstIndex(where: { $0 - base > RecordingLimits.maxTimeMicroseconds }) else { continue }
                if late == nil || lines[i] < late!.line { late = (lines[i], raw[i]) }
            }
            if let late {
                throw RecordingError(file: file, line: late.line, reason: .badNumber(
                    field: RecordingLimits.timestampField, text: RecordingError.Reason.seconds(late.micros)))
            }
            var devices: [RecordedDevice] = []
            for (device, raw, _) in parsed {
                var device = device
                for index in device.events.indices {
                    device.events[index].time = (raw[index] - base) * 1000
                }
                devices.append(device)
            }
            return Recording(devices: devices, startMicroseconds: base,
                             timestampKind: .classify(first: firsts.isEmpty ? nil : base, last: last))
        }

        mutating func device(_ node: YAMLNode) throws(RecordingError) -> (RecordedDevice, [Int64], [Int]) {
            let entry = try mapping(node, "device")
            let evdev = try mapping(entry["evdev"], "evdev description")
            let name = try string(evdev["name"], "device name")
            guard let idNode = evdev["id"] else { throw fail(node, .badStructure("missing evdev id")) }
            let id = try integers(idNode, "evdev id", count: 4, Self.u16)
            var capabilities: [UInt16: Set<UInt16>] = [:]
            if let codes = evdev["codes"] {
                for (key, value) in try mapping(codes, "codes") {
                    let type = UInt16(try integer(key, "event type", 0...Int64(EventType.max)))
                    let list = try integers(value, "codes of type \(type)", count: nil, Self.u16)
                    if !list.isEmpty { capabilities[type] = Set(list.map { UInt16($0) }) }
                }
            }
            var absInfo: [UInt16: AbsInfo] = [:]
            if let absinfo = evdev["absinfo"] {
                for (key, value) in try mapping(absinfo, "absinfo") {
                    let code = UInt16(try integer(key, "axis code", Self.u16))
                    let v = try integers(value, "absinfo of axis \(code)", count: 5, Self.i32)
                    let axis = AbsInfo(minimum: Int32(v[0]), maximum: Int32(v[1]), fuzz: Int32(v[2]),
                                       flat: Int32(v[3]), resolution: Int32(v[4]))
                    if let problem = axis.problem { throw fail(value, .impossibleAxis(code: code, problem: problem)) }
                    absInfo[code] = axis
                }
            }
            var inputProperties: Set<UInt16> = []
            if let properties = evdev["properties"] {
                inputProperties = Set(try integers(properties, "properties", count: nil, Self.u16)
                    .map { UInt16($0) })
            }
            var udevProperties: [String: String] = [:]
            if let udev = entry["udev"], let list = try mapping(udev, "udev")["properties"] {
                for item in try sequence(list, "udev properties") {
                    let text = try string(item, "udev property")
                    guard let equals = text.firstIndex(of: "=") else {
                        throw fail(item, .badStructure("udev property '\(text)' has no '='"))
                    }
                    udevProperties[String(text[..<equals])] = String(text[text.index(after: equals)...])
                }
            }
            // udev's own verdict at recording time beats re-deriving it from capabilities.
            var classes = Set(DeviceClass.allCases.filter { udevProperties[$0.udevProperty] == "1" })
            if classes.isEmpty {
                classes = DeviceClassifier.classes(capabilities: capabilities, inputProperties: inputProperties,
                                                   bustype: UInt16(id[0]))
            }
            // `UNIQ` (udev's name for the input device's `uniq`, a Bluetooth device's address)
            // gives a replayed device the identity, and with `evflowd --sysfs` the battery, of
            // the device it stands for. libinput record does not keep it: hand-written.
            let uniq = udevProperties["UNIQ"].map(LibinputRecordReader.unquoted).flatMap { $0.isEmpty ? nil : $0 }
            let info = DeviceInfo(
                name: name,
                inputID: InputID(bustype: UInt16(id[0]), vendor: UInt16(id[1]), product: UInt16(id[2]),
                                 version: UInt16(id[3])),
                uniq: uniq,
                classes: classes, properties: udevProperties, capabilities: capabilities,
                absInfo: absInfo, inputProperties: inputProperties)

            var events: [InputEvent] = []
            var raw: [Int64] = []
            var lines: [Int] = []
            var previous: Int64 = .min
            if let eventList = entry["events"] {
                for frame in try sequence(eventList, "events") {
                    // Other entry kinds (`libinput:` from --with-libinput, ...) are not evdev data.
                    guard let frameMap = frame.mapping, let list = frameMap["evdev"] else { continue }
                    for item in try sequence(list, "evdev events") {
                        let v = try integers(item, "event", count: 5, Int64(Int32.min)...Int64(UInt32.max))
                        guard v[0] >= 0, v[0] < 1_000_000_000_000 else {
                            throw fail(item, .badNumber(field: "seconds", text: String(v[0])))
                        }
                        guard v[1] >= 0, v[1] < 1_000_000 else {
                            throw fail(item, .badNumber(field: "microseconds", text: String(v[1])))
                        }
                        guard Self.u16.contains(v[2]) else {
                            throw fail(item, .badNumber(field: "event type", text: String(v[2])))
                        }
                        guard Self.u16.contains(v[3]) else {
                            throw fail(item, .badNumber(field: "event code", text: String(v[3])))
                        }
                        guard Self.i32.contains(v[4]) else {
                            throw fail(item, .badNumber(field: "event value", text: String(v[4])))
                        }
                        let micros = v[0] * 1_000_000 + v[1]
                        guard micros >= previous else {
                            throw fail(item, .timeWentBackwards(previousMicroseconds: previous,
                                                                microseconds: micros))
                        }
                        previous = micros
                        raw.append(micros)
                        lines.append(item.mark.line)
                        events.append(InputEvent(time: 0, type: UInt16(v[2]), code: UInt16(v[3]),
                                                 value: Int32(v[4])))
                    }
                }
            }
            let device = RecordedDevice(info: info, events: events,
                                        recordedNode: try entry["node"].map { node throws(RecordingError) in
                                            try string(node, "node")
                                        })
            return (device, raw, lines)
        }
    }
}
