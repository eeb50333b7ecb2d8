#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import EvflowProtocol
import InputModel
import Pipeline
import Recording

/// An input that broke a fuzz target's invariant: what was expected and what happened.
public struct InvariantFailure: Error, CustomStringConvertible {
    /// The target whose invariant failed.
    public var target: FuzzTarget
    /// What went wrong.
    public var message: String

    public var description: String { "\(target.rawValue): invariant failed: \(message)" }
}

/// The parsers evflow fuzzes (docs/reliability.md), each with the invariant it checks.
///
/// `check` is what both the libFuzzer driver (`Fuzz/evflow-fuzz`, built by `scripts/fuzz`)
/// and the regression-corpus test (`Tests/FuzzRegressionTests`) run on one input, so every
/// input a fuzz run found becomes a file the normal `swift test` replays.
public enum FuzzTarget: String, CaseIterable, Sendable {
    /// `EvemuReader.parse`; a parsed recording round-trips through `EvemuWriter`.
    case evemu
    /// `EvtestReader.parse(_:file:)`; a parsed recording round-trips through `EvemuWriter`.
    case evtest
    /// `LibinputRecordReader.parse`; every device with events round-trips through `EvemuWriter`.
    case libinputRecord = "libinput-record"
    /// `LineFramer` + `Request.parse`: a byte stream split at input-chosen points frames like
    /// the whole stream; a request that parses re-encodes and parses to an equal value.
    case request
    /// `FilterConfig.parse(yaml:)`: a rejected configuration's error names a line or a key;
    /// an accepted one builds and runs every probe device's filters (`checkConfigBuilds`).
    case filterConfig = "filter-config"
    /// `SessionReader.parse`: a parsed session round-trips through `SessionWriter` (parse →
    /// write → parse gives the same value, writing again the same bytes), and every device's
    /// part converts to an evemu file that round-trips through `EvemuWriter`.
    case session
    /// `FilterConfig.parse(yaml:)` with every number a rate, window or timeout can take
    /// (subnormal, huge, negative, NaN, infinite, any text) at every place that takes one, and
    /// any text as an `output`, a `match` glob or a `panic_chord` key: a ConfigError naming
    /// file, line and key, or a configuration whose filters build and run.
    case configValues = "config-values"
    /// evflowd's and evflowctl's numeric option values (`OptionValues`, what their
    /// ArgumentParser options call): a reason, or a value in range whose derived times hold.
    case options
    /// `SensorRecording.parse` (`# EVFLOW SENSORS 1`, issue #34): a parsed recording
    /// round-trips through `written()`, and its samples run through the noise analysis and the
    /// sensor filters at a late clock (`checkSensorRecording`).
    case sensors
    /// The configuration's `sensors:` section (issue #34): a ConfigError naming a line or a
    /// key, or settings in their documented ranges whose filters run (`checkSensorConfig`).
    case sensorConfig = "sensor-config"

    /// The file name errors are expected to carry.
    static let fileName = "fuzz-input"

    /// Runs the target on one input; throws when its invariant does not hold.
    public func check(_ bytes: [UInt8]) throws(InvariantFailure) {
        switch self {
        case .evemu:
            try checkRecording(bytes) { (b) throws(RecordingError) in try EvemuReader.parse(b, file: Self.fileName) }
        case .evtest:
            try checkRecording(bytes) { (b) throws(RecordingError) in try EvtestReader.parse(b, file: Self.fileName) }
        case .libinputRecord:
            try checkRecording(bytes) { (b) throws(RecordingError) in try LibinputRecordReader.parse(b, file: Self.fileName) }
        case .request:
            try checkRequests(bytes)
        case .filterConfig:
            try checkFilterConfig(bytes)
        case .session:
            try checkSession(bytes)
        case .configValues:
            try checkConfigValues(bytes)
        case .options:
            try checkOptions(bytes)
        case .sensors:
            try checkSensorRecording(bytes)
        case .sensorConfig:
            try checkSensorConfig(bytes)
        }
    }

    func fail(_ message: String) -> InvariantFailure {
        InvariantFailure(target: self, message: message)
    }

    // MARK: recordings

    private func checkRecording(_ bytes: [UInt8],
                                parse: ([UInt8]) throws(RecordingError) -> Recording) throws(InvariantFailure) {
        let recording: Recording
        do {
            recording = try parse(bytes)
        } catch {
            // A rejection names the file and a line that exists (1-based; the line after the
            // last one for "the file ended too early"); line 0 only for `unreadable`
            // (docs/formats/evemu.md, "Errors").
            try checkRejection(error, lines: self == .libinputRecord ? Self.yamlLineCount(bytes) : Self.lineCount(bytes))
            return
        }
        for device in recording.devices where !device.events.isEmpty {
            try checkEvemuRoundTrip(device, startMicroseconds: recording.startMicroseconds)
        }
    }

    /// A rejected input's error names the file and a line it has (`lines`; the one after the
    /// last for "ended too early"). Line 0 is for a file that could not be read (`unreadable`:
    /// here only a YAML text over its size limit); "no events" names the file's last line.
    func checkRejection(_ error: RecordingError, lines: Int) throws(InvariantFailure) {
        guard error.file == Self.fileName else { throw fail("error names file '\(error.file)': \(error)") }
        let unreadable: Bool
        if case .unreadable = error.reason { unreadable = true } else { unreadable = false }
        guard (unreadable && error.line == 0) || (error.line >= 1 && error.line <= lines + 1) else {
            throw fail("error line \(error.line) outside 1...\(lines + 1): \(error)")
        }
    }

    /// Lines as `\n` counts them (1 + the number of `\n`s).
    static func lineCount(_ bytes: [UInt8]) -> Int {
        bytes.reduce(1) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
    }

    /// Lines as YAML counts them: a line break is `\n`, `\r\n` or a lone `\r` (YAML 1.1 §5.4),
    /// so libyaml's line numbers may exceed the count of `\n`s. At least the `\n` count too: an
    /// error line counted either way is a line the file has.
    static func yamlLineCount(_ bytes: [UInt8]) -> Int {
        var lines = 1, lf = 1
        for (i, b) in bytes.enumerated() {
            if b == UInt8(ascii: "\n") {
                lf += 1
                if i == 0 || bytes[i - 1] != UInt8(ascii: "\r") { lines += 1 }
            } else if b == UInt8(ascii: "\r") {
                lines += 1
            }
        }
        return max(lines, lf)
    }

    /// Writing `device` as evemu and reading it back gives the same device, up to what the
    /// format cannot hold (`EvemuWriter`'s documented limits).
    private func checkEvemuRoundTrip(_ device: RecordedDevice, startMicroseconds: Int64) throws(InvariantFailure) {
        let written = EvemuWriter.write(device, startMicroseconds: startMicroseconds)
        let reread: Recording
        do {
            reread = try EvemuReader.parse(written, file: "rewritten")
        } catch {
            throw fail("EvemuWriter output does not parse: \(error)\n" + String(decoding: written, as: UTF8.self))
        }
        guard reread.devices.count == 1 else { throw fail("rewritten file has \(reread.devices.count) devices") }
        // Compared on absolute times: an evemu file starts its clock at its first event, so
        // a device whose first event is not at the recording's start (libinput record:
        // several devices on one clock) comes back with the offset moved into its start.
        let expected = Self.evemuView(device, startMicroseconds: startMicroseconds)
        let got = Self.evemuView(reread.devices[0], startMicroseconds: reread.startMicroseconds)
        guard got == expected else {
            throw fail("round trip through EvemuWriter changed the device:\n  before \(expected)\n  after  \(got)")
        }
        let again = EvemuWriter.write(reread.devices[0], startMicroseconds: reread.startMicroseconds)
        guard again == written else { throw fail("writing the re-read device again gives other bytes") }
    }

    /// The part of a device an evemu file holds (see `EvemuWriter`): the name as written, no
    /// `phys`, `uniq`, udev properties or node, no `AbsInfo.value`, no event type without codes, and
    /// each event's `time` replaced by its absolute time in **microseconds** (`startMicroseconds`
    /// plus the time floored to the µs, the sum `EvemuWriter` writes). Kept in µs, not ns: an
    /// absolute time in ns can overflow Int64 where the µs one does not (found by fuzzing:
    /// `evtest/found-view-overflow.evtest`, a recording 485 years long starting in 2023).
    static func evemuView(_ device: RecordedDevice, startMicroseconds: Int64 = 0) -> RecordedDevice {
        let info = device.info
        var absInfo = info.absInfo
        for code in absInfo.keys { absInfo[code]!.value = 0 }
        let name = EvemuWriter.nameAsWritten(info.name)
        let view = DeviceInfo(name: name, inputID: info.inputID,
                              capabilities: info.capabilities.filter { !$0.value.isEmpty },
                              absInfo: absInfo, inputProperties: info.inputProperties)
        let events = device.events.map { event in
            var e = event
            e.time = startMicroseconds + (event.time >= 0 ? event.time / 1000 : -((-event.time + 999) / 1000))
            return e
        }
        return RecordedDevice(info: view, events: events, ledStates: device.ledStates,
                              switchStates: device.switchStates)
    }

    // MARK: sessions

    private func checkSession(_ bytes: [UInt8]) throws(InvariantFailure) {
        let session: Session
        do {
            session = try SessionReader.parse(bytes, file: Self.fileName)
        } catch {
            // As for recordings: the file and a line it has (line 0 only for an unreadable file).
            try checkRejection(error, lines: Self.lineCount(bytes))
            return
        }
        let written = SessionWriter.write(session)
        let reread: Session
        do {
            reread = try SessionReader.parse(written, file: "rewritten")
        } catch {
            throw fail("SessionWriter output does not parse: \(error)\n" + String(decoding: written, as: UTF8.self))
        }
        guard reread == session else {
            throw fail("round trip through SessionWriter changed the session:\n  before \(session)\n  after  \(reread)")
        }
        guard SessionWriter.write(reread) == written else { throw fail("writing the re-read session again gives other bytes") }
        for device in session.devices.indices {
            guard let part = session.recordedDevice(device) else { throw fail("device \(device) has no part") }
            if !part.events.isEmpty { try checkEvemuRoundTrip(part, startMicroseconds: session.startMicroseconds) }
        }
    }

    // MARK: requests

    /// The input's first two bytes seed the split points; the rest is the byte stream.
    private func checkRequests(_ bytes: [UInt8]) throws(InvariantFailure) {
        guard bytes.count >= 2 else { return }
        var seed = UInt32(bytes[0]) << 8 | UInt32(bytes[1]) | 1
        let stream = bytes[2...]
        // A small limit, so the over-long paths are reached by short inputs too.
        for limit in [16, ProtocolConstants.maxRequestLineLength] {
            // Bytes go in as the server hands them over (`append(_: UnsafeRawBufferPointer)`),
            // which is also the framer's specialized path (the generic one, called from
            // another module, was most of this target's time).
            var whole = LineFramer(maxLineLength: limit)
            stream.withUnsafeBytes { whole.append($0) }
            let expected = Self.drain(&whole)
            var pieces = LineFramer(maxLineLength: limit)
            var got: [LineFramer.Item] = []
            var rest = stream
            while !rest.isEmpty {
                seed ^= seed << 13; seed ^= seed >> 17; seed ^= seed << 5
                let n = min(rest.count, Int(seed % 24))
                rest.prefix(n).withUnsafeBytes { pieces.append($0) }
                rest = rest.dropFirst(n)
                got += Self.drain(&pieces)
                guard pieces.bufferedByteCount <= limit + 1 else {
                    throw fail("framer holds \(pieces.bufferedByteCount) bytes with limit \(limit)")
                }
            }
            guard got == expected else { throw fail("split stream framed as \(got), whole stream as \(expected)") }
            let reference = Self.referenceFraming(stream, limit: limit)
            guard got == reference else { throw fail("framed as \(got), expected \(reference)") }
            guard pieces.isDiscarding == whole.isDiscarding else { throw fail("discarding state differs") }
        }
        var framer = LineFramer()
        stream.withUnsafeBytes { framer.append($0) }
        while let item = framer.next() {
            guard case .line(let line) = item else { continue }
            try checkRequestLine(line)
        }
    }

    private static func drain(_ framer: inout LineFramer) -> [LineFramer.Item] {
        var items: [LineFramer.Item] = []
        while let item = framer.next() {
            // Compare contents only: slices of different buffers with equal bytes are equal lines.
            if case .line(let l) = item { items.append(.line(ArraySlice(Array(l)))) } else { items.append(item) }
        }
        return items
    }

    /// Framing as docs/protocol.md states it: lines end at `\n`, a `\r` before it is dropped,
    /// a line longer than the limit is one `.overlong`; an unfinished tail is reported
    /// `.overlong` once it is over `limit` bytes without a possible `\r\n` rescue.
    static func referenceFraming(_ stream: ArraySlice<UInt8>, limit: Int) -> [LineFramer.Item] {
        var items: [LineFramer.Item] = []
        var parts = stream.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        let tail = parts.removeLast()
        for part in parts {
            var line = part
            if line.last == UInt8(ascii: "\r") { line = line.dropLast() }
            items.append(line.count > limit ? .overlong : .line(ArraySlice(Array(line))))
        }
        if tail.count > limit + 1 || (tail.count == limit + 1 && tail.last != UInt8(ascii: "\r")) {
            items.append(.overlong)
        }
        return items
    }

    private func checkRequestLine(_ line: ArraySlice<UInt8>) throws(InvariantFailure) {
        let request: Request
        do {
            request = try Request.parse(line)
        } catch {
            guard !error.message.isEmpty else { throw fail("empty error message for \(error)") }
            switch error.kind {
            case .lineTooLong, .notJSON, .notAnObject, .numberOutOfRange(field: nil): break   // the line as a whole
            default:
                // The field as the request spelt it (an empty JSON key is the field "").
                guard error.field != nil else { throw fail("error names no field: \(error)") }
            }
            return
        }
        var encoded = request.encoded()
        guard encoded.last == UInt8(ascii: "\n") else { throw fail("encoded request does not end in a newline") }
        encoded.removeLast()
        guard !encoded.contains(UInt8(ascii: "\n")) else { throw fail("encoded request spans lines") }
        let reparsed: Request
        do {
            reparsed = try Request.parse(encoded[...])
        } catch {
            throw fail("re-encoded request \(String(decoding: encoded, as: UTF8.self)) does not parse: \(error)")
        }
        guard reparsed == request else {
            throw fail("request \(request) re-encoded as \(String(decoding: encoded, as: UTF8.self)) parses as \(reparsed)")
        }
    }

    // MARK: configuration

    private func checkFilterConfig(_ bytes: [UInt8]) throws(InvariantFailure) {
        let text = String(decoding: bytes, as: UTF8.self)
        let config: FilterConfig
        do {
            config = try FilterConfig.parse(yaml: text, file: Self.fileName)
        } catch {
            guard error.file == Self.fileName else { throw fail("error names file \(String(describing: error.file))") }
            guard error.line != nil || !error.key.isEmpty else { throw fail("error names no line or key: \(error)") }
            if let line = error.line {
                let lines = Self.yamlLineCount(bytes)
                guard line >= 1, line <= lines + 1 else { throw fail("error line \(line) outside 1...\(lines + 1): \(error)") }
            }
            return
        }
        // Parsing is a function of the text: the same text gives the same configuration.
        let again = try? FilterConfig.parse(yaml: text, file: Self.fileName)
        guard again == config else { throw fail("parsing the same text twice gave different configurations") }
        // What --check-config accepts, a reload applies: the filters build and run.
        try checkConfigBuilds(config, what: "the configuration")
        try checkReload(config, what: "the configuration")
    }
}
