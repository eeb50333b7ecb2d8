#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import InputModel
import Reactive

/// A parsed recording: one or more devices and their events on one shared time base.
///
/// Time model (see docs/formats/evemu.md): every file has one time base, the raw timestamp of
/// its earliest event. `InputEvent.time` is the event's offset from that base in nanoseconds,
/// so the earliest event of a file is always at 0 ns, whatever the file wrote (evemu-record
/// writes `0.000001`, older files wrote epoch seconds, hand-made files often write zeros).
/// Several devices of one libinput record file share that one base, so their events stay
/// correctly interleaved.
public struct Recording: Hashable, Sendable {
    /// The recorded devices, in file order.
    public var devices: [RecordedDevice]
    /// Raw timestamp (microseconds, as written in the file) that maps to time 0.
    public var startMicroseconds: Int64
    /// What kind of timestamps the file had.
    public var timestampKind: TimestampKind

    /// Creates a recording.
    public init(devices: [RecordedDevice], startMicroseconds: Int64 = 0,
                timestampKind: TimestampKind = .relative) {
        self.devices = devices
        self.startMicroseconds = startMicroseconds
        self.timestampKind = timestampKind
    }

    /// Total number of events of all devices (`SYN_REPORT`s included).
    public var eventCount: Int { devices.reduce(0) { $0 + $1.events.count } }
}

/// How a file wrote its timestamps. Informational only: the time model is the same for all.
public enum TimestampKind: String, Hashable, Sendable {
    /// Offsets from the start of the recording (evemu-record ≥ 2.0, libinput record).
    case relative
    /// Wall-clock times (`CLOCK_REALTIME` seconds since 1970), as old evemu-record wrote.
    case absolute
    /// Every event has the timestamp 0 (hand-written files); all events are at time 0.
    case allZero
    /// The file holds no events.
    case none

    /// Classifies a file by its first and last raw timestamps (µs); nil when it has no events.
    static func classify(first: Int64?, last: Int64?) -> TimestampKind {
        guard let first, let last else { return .none }
        if first == 0 && last == 0 { return .allZero }
        // 2001-09-09 in epoch seconds: no relative recording is 31 years long.
        return first >= 1_000_000_000 * 1_000_000 ? .absolute : .relative
    }
}

/// One device of a recording: its description, its events and its initial LED/switch state.
public struct RecordedDevice: Hashable, Sendable {
    /// Identity, classes and capabilities as recorded.
    public var info: DeviceInfo
    /// Every recorded event in file order, `SYN_REPORT`s included, times on the file's time base.
    public var events: [InputEvent]
    /// `L:` lines: LED code → state at the start of the recording (evemu writes only lit LEDs).
    public var ledStates: [UInt16: Int32]
    /// `S:` lines: switch code → state at the start of the recording (only non-zero ones).
    public var switchStates: [UInt16: Int32]
    /// Device node the recording was made from (`/dev/input/event5`), when the format says.
    public var recordedNode: String?

    /// Creates a recorded device.
    public init(info: DeviceInfo, events: [InputEvent], ledStates: [UInt16: Int32] = [:],
                switchStates: [UInt16: Int32] = [:], recordedNode: String? = nil) {
        self.info = info
        self.events = events
        self.ledStates = ledStates
        self.switchStates = switchStates
        self.recordedNode = recordedNode
    }

    /// The events grouped into frames (see `FramedEvents`).
    public func frames() -> FramedEvents { FramedEvents(grouping: events) }
}

/// Events grouped into `InputFrame`s, plus whatever followed the last `SYN_REPORT`.
///
/// The grouping is `FrameAssembler`'s, the live reader's: a frame is every event after the
/// previous frame up to (not including) the next `SYN_REPORT`, timed at that report; a
/// `SYN_DROPPED` discards the unfinished frame and is a frame of its own; `SYN_MT_REPORT`
/// stays inside its frame. A `SYN_REPORT` directly after another gives a frame with no
/// events: the kernel sent it, so it is kept. Events after the last frame (a recording cut
/// off mid-frame) are not a frame, because nothing says the hardware report was complete;
/// they are returned in `incompleteFrame` instead of being dropped silently, and the caller
/// decides (ReplaySource may deliver or drop them).
public struct FramedEvents: Hashable, Sendable {
    /// The complete frames, in order.
    public var frames: [InputFrame]
    /// Events after the last frame; empty when the events end on a frame boundary.
    public var incompleteFrame: [InputEvent]

    /// Groups `events` (in time order) into frames.
    public init(grouping events: [InputEvent]) {
        let table = FrameTable(grouping: events)
        frames = table.ends.indices.map { table.frame($0, shiftedBy: 0) }
        incompleteFrame = Array(events.suffix(table.incompleteEvents))
    }

    /// Creates a value from parts.
    public init(frames: [InputFrame], incompleteFrame: [InputEvent]) {
        self.frames = frames
        self.incompleteFrame = incompleteFrame
    }
}

extension Recording {
    /// Reads an evemu, evtest or libinput record file, whichever it is.
    ///
    /// libinput record files are recognised by their YAML start (`version:`, `ndevices:` or
    /// `---` on the first line that is not a comment); evtest output by its header or
    /// `Event: time` lines (`EvtestReader.looksLikeEvtest`); everything else is read as evemu.
    /// An events-only file gets its description from `description` (`--desc`: an evemu
    /// description, or for evtest events an evtest header, any file name) or else, for evemu,
    /// from the `.desc` file beside it (`EvemuReader.descriptionFile(forEvents:)`); when none is
    /// found the error lists the names tried. A file with a description but no events is an
    /// error (`noEvents`, at the file's last line), not a device that never sends. A file in
    /// none of the formats (text, an empty file) is `notARecording`, at its first line that is
    /// not blank or a comment (line 1 when it has none).
    public static func read(contentsOf url: URL, description: URL? = nil) throws(RecordingError) -> Recording {
        let bytes = try EvemuReader.loadFile(url)
        let recording = try readAny(bytes, url: url, description: description)
        if recording.devices.allSatisfy({ $0.events.isEmpty }) {
            // Line 0 is for a file that could not be read (docs/formats/evemu.md, "Errors"):
            // this one was read to its end, and that is where the events were missing.
            throw RecordingError(file: url.path, line: lineCount(bytes), reason: .noEvents(
                "the file describes a device but holds no events (a description file is not a recording)"))
        }
        return recording
    }

    private static func readAny(_ bytes: [UInt8], url: URL, description: URL?) throws(RecordingError) -> Recording {
        if looksLikeYAML(bytes) {
            if let description {
                throw RecordingError(file: url.path, line: firstContentLine(bytes)?.line ?? 1, reason: .misplacedLine(
                    "a libinput recording holds its own description; --desc is for evemu and evtest events"))
            }
            return try LibinputRecordReader.parse(bytes, file: url.path)
        }
        if EvtestReader.looksLikeEvtest(bytes) {
            guard let description else { return try EvtestReader.parse(bytes, file: url.path) }
            let descriptionBytes = try EvemuReader.loadFile(description)
            if EvtestReader.looksLikeEvtest(descriptionBytes) {
                return try EvtestReader.parse(bytes, file: url.path, description: descriptionBytes,
                                              descriptionFile: description.path)
            }
            // An evemu description for evtest events: read the description, then the events.
            let described = try EvemuReader.parse(events: [], file: description.path, description: descriptionBytes,
                                                  descriptionFile: description.path)
            let events = try EvtestReader.parse(bytes, file: url.path, description: evtestHeader(described.devices[0].info),
                                                descriptionFile: description.path)
            var device = described.devices[0]
            device.events = events.devices[0].events
            return Recording(devices: [device], startMicroseconds: events.startMicroseconds,
                             timestampKind: events.timestampKind)
        }
        try requireEvemu(bytes, file: url.path)
        if let description {
            let descriptionBytes = try EvemuReader.loadFile(description)
            if EvtestReader.looksLikeEvtest(descriptionBytes) {
                // Not the header's first line that is wrong: these events are evemu's.
                throw RecordingError(file: url.path, line: firstContentLine(bytes)?.line ?? 1, reason: .missingDescription(
                    "evemu events need an evemu description (N:, I:, B: lines); --desc names "
                        + "\(description.path), an evtest header, which describes evtest events"))
            }
            return try EvemuReader.parse(events: bytes, file: url.path, description: descriptionBytes,
                                         descriptionFile: description.path)
        }
        do {
            return try EvemuReader.parse(bytes, file: url.path)
        } catch {
            guard case .missingDescription(let why) = error.reason else { throw error }
            guard let found = EvemuReader.descriptionFile(forEvents: url) else {
                let tried = EvemuReader.descriptionCandidates(forEvents: url).map(\.lastPathComponent)
                throw RecordingError(file: error.file, line: error.line, reason: .missingDescription(
                    why + "; tried " + (tried.isEmpty ? "no name" : tried.joined(separator: ", "))
                        + " beside it; name one with --desc"))
            }
            return try EvemuReader.parse(events: bytes, file: url.path,
                                         description: try EvemuReader.loadFile(found),
                                         descriptionFile: found.path)
        }
    }

    /// The first line that is not blank or a comment: its 1-based number and its text.
    static func firstContentLine(_ bytes: [UInt8]) -> (line: Int, text: Substring)? {
        var line = 0
        var start = bytes.startIndex
        while start < bytes.endIndex {   // stops at the first such line: no pass over the file
            line += 1
            let end = bytes[start...].firstIndex(of: UInt8(ascii: "\n")) ?? bytes.endIndex
            let blank: (UInt8) -> Bool = { $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }   // space, tab, CR
            var text = bytes[start..<end]
            while let c = text.first, blank(c) { text = text.dropFirst() }
            while let c = text.last, blank(c) { text = text.dropLast() }
            if let c = text.first, c != UInt8(ascii: "#") { return (line, Substring(String(decoding: text, as: UTF8.self))) }
            start = end + 1
        }
        return nil
    }

    /// The number of the file's last line (1 for an empty file).
    static func lineCount(_ bytes: [UInt8]) -> Int {
        let breaks = bytes.reduce(0) { $0 + ($1 == UInt8(ascii: "\n") ? 1 : 0) }
        return max(1, bytes.last == UInt8(ascii: "\n") ? breaks : breaks + 1)
    }

    /// Refuses a file that is in none of the formats — text, an empty file — by name, instead
    /// of letting the evemu reader (the fallback) complain about a line prefix or a missing
    /// description. Called after the YAML and evtest checks. Files the evemu reader names
    /// itself (hid-recorder, sessions: `EvemuReader.rejectForeignFormats`) pass.
    static func requireEvemu(_ bytes: [UInt8], file: String) throws(RecordingError) {
        if bytes.starts(with: Array("# HID".utf8)) || bytes.starts(with: Array(SessionReader.magicPrefix.utf8)) { return }
        guard let (line, text) = firstContentLine(bytes) else {
            throw RecordingError(file: file, line: 1, reason: .notARecording(
                bytes.isEmpty ? "the file is empty" : "the file holds only blank lines and comments"))
        }
        // evemu's line prefixes (column 0), and hid-recorder's R: and D:, which the evemu
        // reader refuses by name.
        let prefixes: Set<Character> = ["N", "I", "P", "B", "A", "L", "S", "E", "R", "D"]
        if text.count >= 2, let first = text.first, prefixes.contains(first), text.dropFirst().first == ":" { return }
        throw RecordingError(file: file, line: line, reason: .notARecording(
            "line \(line) starts with '\(text.prefix(24))'"))
    }

    /// A minimal evtest header for `info` (so evtest events can use an evemu description).
    static func evtestHeader(_ info: DeviceInfo) -> [UInt8] {
        func hex(_ v: UInt16) -> String { "0x" + String(v, radix: 16) }
        let id = info.inputID
        return Array(("Input device ID: bus \(hex(id.bustype)) vendor \(hex(id.vendor)) product \(hex(id.product)) "
            + "version \(hex(id.version))\nInput device name: \"\(info.name)\"\n").utf8)
    }

    /// Whether the first line that is not a comment or blank starts a YAML document.
    static func looksLikeYAML(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBufferPointer { buffer in
            var cursor = ByteCursor(buffer, file: "")
            while !cursor.atEnd {
                cursor.skipBlanks()
                if cursor.atLineEnd {   // blank line or comment
                    cursor.skipToNextLine()
                    continue
                }
                return cursor.startsWith("version:") || cursor.startsWith("ndevices:")
                    || cursor.startsWith("---")
            }
            return false
        }
    }
}

/// One device's frames, stored flat: the events of every frame in order (no
/// `SYN_REPORT`s) and where each frame ends — `FrameAssembler`'s grouping, the live
/// reader's; `FramedEvents` is built from it. `ReplaySource` keeps frames this way and copies a frame's events into one
/// reused array when it plays it, so a replay holds no array per frame and frees none.
struct FrameTable {
    private(set) var events: [InputEvent] = []
    /// Per frame: its `SYN_REPORT`'s time and the end of its events in `events`.
    private(set) var ends: [(time: Int64, end: Int)] = []
    /// Events after the last frame (not a frame; not kept).
    private(set) var incompleteEvents = 0

    init() {}

    /// The frames of a recording's `events` (in time order), grouped by `FrameAssembler`'s rule.
    init(grouping all: [InputEvent]) {
        // Counted first, so both tables are made at their size and filled without a
        // capacity check per event (this runs once per replayed event). Every report and
        // every SYN_DROPPED ends a frame; the events table holds at most the rest.
        var frameCount = 0, reports = 0
        for event in all {
            switch FrameAssembler.step(event) {
            case .append: break
            case .report: frameCount += 1; reports += 1
            case .dropped: frameCount += 1
            }
        }
        var ends: [(time: Int64, end: Int)] = []
        ends.reserveCapacity(frameCount)
        var incomplete = 0
        events = Array(unsafeUninitializedCapacity: all.count - reports) { buffer, count in
            for event in all {
                switch FrameAssembler.step(event) {
                case .append:
                    (buffer.baseAddress! + count).initialize(to: event)
                    count += 1
                case .report:
                    ends.append((event.time, count))
                case .dropped:
                    // The unfinished frame is incomplete: its events go (trivial values,
                    // nothing to deinitialise); the SYN_DROPPED is a frame of its own.
                    count = ends.last?.end ?? 0
                    (buffer.baseAddress! + count).initialize(to: event)
                    count += 1
                    ends.append((event.time, count))
                }
            }
            let framed = ends.last?.end ?? 0
            incomplete = count - framed
            count = framed   // events are trivial values: nothing to deinitialise
        }
        self.ends = ends
        incompleteEvents = incomplete
    }

    /// The frames of `tables` one after the other in one table: table `t`'s frame `i` is frame
    /// `firstFrames[t] + i` here.
    /// Written straight into storage made at its size: `append(contentsOf:)` (with a mapped
    /// sequence for the ends) cost 2.5 M instructions on R1's input, what the join saves.
    init(joining tables: [FrameTable]) {
        events = Array(unsafeUninitializedCapacity: tables.reduce(0) { $0 + $1.events.count }) { buffer, count in
            for table in tables {
                table.events.withUnsafeBufferPointer { source in
                    guard let from = source.baseAddress else { return }
                    (buffer.baseAddress! + count).initialize(from: from, count: source.count)
                    count += source.count
                }
            }
        }
        ends = Array(unsafeUninitializedCapacity: tables.reduce(0) { $0 + $1.ends.count }) { buffer, count in
            var offset = 0
            for table in tables {
                for end in table.ends {
                    (buffer.baseAddress! + count).initialize(to: (end.time, end.end + offset))
                    count += 1
                }
                offset += table.events.count
            }
        }
        incompleteEvents = tables.reduce(0) { $0 + $1.incompleteEvents }
    }

    /// Where each of `tables`' frames start in `FrameTable(joining: tables)`.
    static func firstFrames(_ tables: [FrameTable]) -> [Int] {
        var first: [Int] = []
        first.reserveCapacity(tables.count)
        var n = 0
        for table in tables {
            first.append(n)
            n += table.ends.count
        }
        return first
    }

    /// Adds a frame.
    mutating func append(time: Int64, events frame: [InputEvent]) {
        events.append(contentsOf: frame)
        ends.append((time, events.count))
    }

    /// Frame `i`, its times (the frame's and its events') moved by `shift`.
    func frame(_ i: Int, shiftedBy shift: Int64) -> InputFrame {
        var buffer: [InputEvent] = []
        return frame(i, shiftedBy: shift, reusing: &buffer)
    }

    /// Frame `i`, its times moved by `shift`, with its events written into `buffer` (emptied
    /// first) and shared with the frame. A buffer whose last frame nobody kept keeps its
    /// storage, so a player that passes the same buffer for every frame allocates nothing
    /// per frame; one that is still held elsewhere is copied on write, as any array.
    @inline(__always)   // once per played frame: saves the call and its retain of the buffer
    func frame(_ i: Int, shiftedBy shift: Int64, reusing buffer: inout [InputEvent]) -> InputFrame {
        let start = i == 0 ? 0 : ends[i - 1].end, end = ends[i].end
        if buffer.count == end - start {
            // A frame as long as the last one (most of a device's frames): its events written
            // over the buffer's in place. `replaceSubrange` (and `removeAll` + `append`, which
            // measured worse) goes through the standard library's generic path, ~100
            // instructions a frame, and holds both tables across the call.
            events.withUnsafeBufferPointer { all in
                buffer.withUnsafeMutableBufferPointer { out in
                    for j in out.indices { out[j] = all[start + j] }
                }
            }
        } else {
            buffer.replaceSubrange(buffer.indices, with: events[start..<end])
        }
        if shift != 0 {
            buffer.withUnsafeMutableBufferPointer { events in
                // Saturating (issue #34): an event at 9223372036.854 s, replayed from a clock
                // not at 0, trapped here; parsed recordings now stop at 2⁶¹ ns, a built one
                // or a long loop may still reach the end of time.
                for j in events.indices { events[j].time = events[j].time.addingSaturated(shift) }
            }
        }
        return InputFrame(time: ends[i].time.addingSaturated(shift), events: buffer)
    }
}
