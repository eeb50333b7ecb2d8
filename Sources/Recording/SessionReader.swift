#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif
import FileReading
import InputModel

/// Reads session recordings (`# EVFLOW SESSION 1`): device blocks, then a timeline of `add:`,
/// `E:` and `remove:` lines. See docs/formats/session.md for the grammar, the time model, the
/// ids and the errors.
///
/// Like the other readers it returns everything or throws a `RecordingError` naming the file
/// and line; the file is read under `RecordingLimits.maxFileBytes` and may describe at most
/// `RecordingLimits.maxDevices` devices.
public enum SessionReader {
    /// The first line of every session file (the `1` is the format version).
    public static let magic = "# EVFLOW SESSION 1"
    /// What the first line starts with, whatever the version.
    static let magicPrefix = "# EVFLOW SESSION"
    /// Longest device id in a file, in bytes after decoding `%XX` escapes.
    public static let maxIDLength = 256

    /// Reads a session file.
    public static func read(contentsOf url: URL) throws(RecordingError) -> Session {
        try parse(RecordingLimits.read(url.path, limit: RecordingLimits.maxFileBytes), file: url.path)
    }

    /// Whether `bytes` start like a session file (first line `# EVFLOW SESSION`, any version):
    /// how `evflowd --replay` and `Recording.read` tell a session from other recordings.
    public static func looksLikeSession(_ bytes: [UInt8]) -> Bool {
        bytes.starts(with: magicPrefix.utf8)
    }

    /// Whether the file at `url` starts like a session file (reads its first bytes only);
    /// false when it cannot be read or is no regular file (the reader that reads it then says
    /// why). Never blocks: `--replay` given a FIFO must not hang here (issue #25).
    public static func isSessionFile(_ url: URL) -> Bool {
        guard let head = try? BoundedFile.readHead(url.path, count: magicPrefix.utf8.count) else { return false }
        return looksLikeSession(head)
    }

    /// Parses a session file already in memory; `file` names it in errors.
    public static func parse(_ bytes: [UInt8], file: String) throws(RecordingError) -> Session {
        try bytes.withUnsafeBufferPointer { (buffer) throws(RecordingError) -> Session in
            var parser = Parser(file: file, capacity: countNewlines(buffer) + 1)
            var cursor = ByteCursor(buffer, file: file)
            try parser.header(&cursor)
            while !cursor.atEnd {
                cursor.line += 1
                try parser.line(&cursor)
            }
            return try parser.finish(lines: cursor.line)
        }
    }

    /// The three kinds of timeline line.
    enum TimelineKind {
        case add, event, remove
    }

    /// The parse state: the device block being read, the devices, the timeline so far.
    struct Parser {
        let file: String
        var devices: [SessionDevice] = []
        /// Line of each device's `D:` line.
        var deviceLines: [Int] = []
        var handles: [String: Int] = [:]
        var ids: Set<DeviceID> = []
        /// The block being read: its handle, explicit id, line and description lines.
        var block: (handle: String, id: DeviceID?, line: Int, builder: DescriptionBuilder)?
        var timeline: [SessionEntry] = []
        var inTimeline = false
        var present: [Bool] = []
        var everAdded: [Bool] = []
        var base: Int64 = 0
        var previous: Int64 = 0

        init(file: String, capacity: Int) {
            self.file = file
            timeline.reserveCapacity(capacity)
        }

        /// Line 1: the magic line, version 1.
        mutating func header(_ cursor: inout ByteCursor) throws(RecordingError) {
            cursor.line = 1
            guard cursor.startsWith(SessionReader.magicPrefix) else {
                throw cursor.error(.badSession("the first line must be '\(SessionReader.magic)'"))
            }
            cursor.p += SessionReader.magicPrefix.utf8.count
            cursor.skipBlanks()
            let start = cursor.p
            guard cursor.startsWith("1"), cursor.p + 1 == cursor.end || {
                var after = cursor
                after.p += 1
                return after.atFieldEnd
            }() else {
                throw cursor.error(.badSession("unsupported session version '\(cursor.token(from: start))' (this reader reads 1)"))
            }
            cursor.p += 1
            try cursor.finishLine()
        }

        mutating func line(_ cursor: inout ByteCursor) throws(RecordingError) {
            if cursor.skipBlankOrCommentLine() { return }
            if cursor.startsWith("E:") {
                cursor.p += 2
                return try timelineLine(&cursor, kind: .event)
            }
            if cursor.startsWith("add:") {
                cursor.p += 4
                return try timelineLine(&cursor, kind: .add)
            }
            if cursor.startsWith("remove:") {
                cursor.p += 7
                return try timelineLine(&cursor, kind: .remove)
            }
            if cursor.startsWith("D:") {
                guard !inTimeline else {
                    throw cursor.error(.misplacedLine("D: line after the first timeline line (devices come first)"))
                }
                try finishBlock()
                cursor.p += 2
                return try deviceLine(&cursor)
            }
            let letter = try DescriptionBuilder.lineLetter(cursor)
            guard !inTimeline else {
                throw cursor.error(.misplacedLine("\(letter): line after the first timeline line"))
            }
            guard block != nil else {
                throw cursor.error(.misplacedLine("\(letter): line before the first D: line"))
            }
            cursor.p += 2
            try block!.builder.parseLine(letter, &cursor)
        }

        /// `D: <handle> [<id>]`: starts a device block.
        mutating func deviceLine(_ cursor: inout ByteCursor) throws(RecordingError) {
            guard devices.count < RecordingLimits.maxDevices else {
                throw cursor.error(.badSession(
                    "more than \(RecordingLimits.maxDevices) devices in one session (docs/reliability.md)"))
            }
            let handle = try readHandle(&cursor)
            guard handles[handle] == nil else {
                throw cursor.error(.badSession("second device with the handle '\(handle)'"))
            }
            cursor.skipBlanks()
            let id = cursor.atLineEnd ? nil : try readID(&cursor)
            let line = cursor.line
            try cursor.finishLine()
            block = (handle, id, line, DescriptionBuilder())
        }

        /// Ends the device block being read: its description must be complete.
        mutating func finishBlock() throws(RecordingError) {
            guard let (handle, explicitID, line, builder) = block else { return }
            block = nil
            try builder.requireComplete(file: file, line: line)
            let described = builder.build(events: [])
            var info = described.info
            // The name as an N: line holds it: a `\r` inside it (a blank in this format) is
            // read as the space SessionWriter writes for it, so what is read writes back the
            // same (found by fuzzing: `found-name-carriage-return.session`).
            let name = EvemuWriter.nameAsWritten(info.name)
            if name != info.name {
                info.name = name
                info.id = DeviceID(name: name, inputID: info.inputID, phys: nil, uniq: nil)
            }
            if let explicitID {
                info.id = explicitID
            } else {
                info.id = info.id.distinct(isTaken: ids.contains)
            }
            guard ids.insert(info.id).inserted else {
                throw RecordingError(file: file, line: line, reason: .badSession(
                    "device '\(handle)' has the id \(info.id) of an earlier device (ids must be distinct)"))
            }
            handles[handle] = devices.count
            devices.append(SessionDevice(handle: handle, info: info, ledStates: described.ledStates,
                                         switchStates: described.switchStates))
            deviceLines.append(line)
            present.append(false)
            everAdded.append(false)
        }

        /// `add: <time> <handle>`, `remove: <time> <handle>`, `E: <time> <handle> <type> <code> <value>`.
        mutating func timelineLine(_ cursor: inout ByteCursor, kind: TimelineKind) throws(RecordingError) {
            if !inTimeline {
                try finishBlock()
                guard !devices.isEmpty else {
                    throw cursor.error(.missingDescription("a timeline line before any D: device block"))
                }
                inTimeline = true
            }
            let raw = try cursor.timestamp()
            let handle = try readHandle(&cursor)
            guard let device = handles[handle] else {
                throw cursor.error(.badSession("unknown device '\(handle)' (no D: \(handle) block)"))
            }
            let action: SessionEntry.Action
            switch kind {
            case .event:
                let type = try cursor.hex("event type", max: 0xFFFF)
                let code = try cursor.hex("event code", max: 0xFFFF)
                let value = try cursor.int32("event value")
                action = .event(type: UInt16(type), code: UInt16(code), value: value)
            case .add:
                action = .add
            case .remove:
                action = .remove
            }
            try cursor.finishLine()
            let line = cursor.line
            func fail(_ reason: RecordingError.Reason) -> RecordingError {
                RecordingError(file: file, line: line, reason: reason)
            }
            if timeline.isEmpty {
                base = raw
                previous = raw
            } else if raw < previous {
                throw fail(.timeWentBackwards(previousMicroseconds: previous, microseconds: raw))
            }
            let offset = raw &- base
            guard offset <= EvemuReader.maxOffsetMicroseconds else {
                throw fail(.badNumber(field: RecordingLimits.timestampField, text: RecordingError.Reason.seconds(raw)))
            }
            previous = raw
            switch action {
            case .add:
                guard !present[device] else {
                    throw fail(.badSession("add: of '\(handle)', which is already present (remove: it first)"))
                }
                present[device] = true
                everAdded[device] = true
            case .event:
                guard present[device] else {
                    throw fail(.badSession("E: of '\(handle)', which is not present (add: it first)"))
                }
            case .remove:
                guard present[device] else {
                    throw fail(.badSession("remove: of '\(handle)', which is not present"))
                }
                present[device] = false
            }
            timeline.append(SessionEntry(time: offset &* 1000, device: device, action: action))
        }

        /// After the last line: every device must have been added at least once.
        mutating func finish(lines: Int) throws(RecordingError) -> Session {
            try finishBlock()
            guard !devices.isEmpty else {
                // The file's last line, as "no events" in a recording: line 0 is for a file that
                // could not be read (docs/formats).
                throw RecordingError(file: file, line: max(lines, 1), reason: .noEvents("the session describes no device (no D: line)"))
            }
            if let never = everAdded.firstIndex(of: false) {
                throw RecordingError(file: file, line: deviceLines[never], reason: .badSession(
                    "device '\(devices[never].handle)' is never added (no add: \(devices[never].handle) line)"))
            }
            return Session(devices: devices, timeline: timeline, startMicroseconds: base)
        }

        /// A handle field: 1–32 bytes of `A-Z a-z 0-9 _ . -`.
        func readHandle(_ cursor: inout ByteCursor) throws(RecordingError) -> String {
            cursor.skipBlanks()
            if cursor.atLineEnd { throw cursor.error(.truncatedLine(expected: "device handle")) }
            let start = cursor.p
            while !cursor.atFieldEnd, SessionDevice.isHandleByte(cursor.p.pointee) { cursor.p += 1 }
            let count = cursor.p - start
            guard cursor.atFieldEnd, count <= SessionDevice.maxHandleLength else {
                throw cursor.error(.badSession("bad device handle '\(cursor.token(from: start))' "
                    + "(1–\(SessionDevice.maxHandleLength) of A-Z a-z 0-9 _ . -)"))
            }
            return String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self)
        }

        /// A device id field: printable ASCII, with `%XX` for any other byte and for `%` and `#`.
        func readID(_ cursor: inout ByteCursor) throws(RecordingError) -> DeviceID {
            let start = cursor.p
            var bytes: [UInt8] = []
            while !cursor.atFieldEnd {
                let c = cursor.p.pointee
                if c == 0x25 {   // %
                    guard cursor.end - cursor.p >= 3, let high = hexDigit(cursor.p[1]), let low = hexDigit(cursor.p[2]) else {
                        throw cursor.error(.badSession("bad %XX escape in device id '\(cursor.token(from: start))'"))
                    }
                    bytes.append(high << 4 | low)
                    cursor.p += 3
                    continue
                }
                guard c > 0x20, c < 0x7F else {
                    throw cursor.error(.badSession("device id '\(cursor.token(from: start))' has a byte that must be written %XX"))
                }
                bytes.append(c)
                cursor.p += 1
            }
            guard bytes.count <= SessionReader.maxIDLength else {
                throw cursor.error(.badSession("device id longer than \(SessionReader.maxIDLength) bytes"))
            }
            return DeviceID(rawValue: String(decoding: bytes, as: UTF8.self))
        }

        func hexDigit(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x41...0x46: return c - 0x41 + 10
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
    }
}
