import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import Recording

/// Sessions (docs/formats/session.md): reading, writing, converting, recording.
@Suite("Session", .ownLiveResources)
struct SessionTests {
    static let keyboardFile = "keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events"
    static let coverFile = "misc/Microsoft Surface Type Cover.events"

    static func evemu(_ file: String) throws -> RecordedDevice {
        try Recording.read(contentsOf: Fixtures.evemu(file)).devices[0]
    }

    /// `events` moved by `offset` ns.
    static func shifted(_ events: [InputEvent], by offset: Int64) -> [InputEvent] {
        events.map { var e = $0; e.time += offset; return e }
    }

    /// Two real devices: the keyboard plugged in twice (the second time cut mid-frame), the
    /// type cover twice at once (two identical devices, distinct ids), all on one time base.
    static func sample() throws -> Session {
        let keyboard = try evemu(keyboardFile)
        let cover = try evemu(coverFile)
        let coverID = cover.info.id
        let devices = [
            SessionDevice(handle: "kbd", info: keyboard.info, ledStates: [1: 1]),
            SessionDevice(handle: "cover", info: cover.info),
            SessionDevice(handle: "cover-2", info: { var i = cover.info; i.id = DeviceID(rawValue: coverID.rawValue + "#2"); return i }()),
        ]
        let s: Int64 = 1_000_000_000
        let coverEvents = Array(cover.events.prefix(30))
        let appearances = [
            SessionAppearance(device: 0, added: 0, removed: 2 * s, events: keyboard.events),
            SessionAppearance(device: 1, added: 0, removed: nil, events: coverEvents),
            SessionAppearance(device: 2, added: s / 2, removed: 12 * s, events: shifted(coverEvents, by: s / 2)),
            // Plugged in again, then pulled out in the middle of a frame.
            SessionAppearance(device: 0, added: 3 * s, removed: 5 * s,
                              events: Array(shifted(keyboard.events, by: 3 * s).prefix(5))),
        ]
        return Session(devices: devices, appearances: appearances, startMicroseconds: 7)
    }

    @Test func aWrittenSessionReadsBackEqualAndWritesTheSameBytes() throws {
        let session = try Self.sample()
        let written = SessionWriter.write(session)
        #expect(written.starts(with: Array("# EVFLOW SESSION 1\n".utf8)))
        let reread = try SessionReader.parse(written, file: "written")
        #expect(reread.devices == session.devices)
        #expect(reread.timeline == session.timeline)
        #expect(reread.startMicroseconds == 7)
        #expect(reread == session)
        #expect(SessionWriter.write(reread) == written)
        // The shape of the timeline.
        let appearances = reread.appearances()
        #expect(appearances.map(\.device) == [0, 1, 2, 0])
        #expect(appearances.map(\.removed) == [2_000_000_000, nil, 12_000_000_000, 5_000_000_000])
        #expect(reread.appearances(of: 0).count == 2)
        #expect(reread.eventCount == session.eventCount)
    }

    @Test func theFileIsLineOrientedAndReadable() throws {
        let text = String(decoding: SessionWriter.write(try Self.sample()), as: UTF8.self)
        let lines = text.split(separator: "\n")
        #expect(lines.contains("D: kbd 0003:17ef:6047-96203807"))
        #expect(lines.contains { $0.hasPrefix("D: cover-2 ") && $0.hasSuffix("%232") }, "the # of an id is escaped")
        #expect(lines.contains("add: 0.000007 kbd\t# +++ Lenovo ThinkPad Compact USB Keyboard with TrackPoint"))
        #expect(lines.contains("E: 1.400000 kbd 0001 001d 0001\t# EV_KEY / KEY_LEFTCTRL         1"))
        #expect(lines.contains { $0.hasPrefix("remove: 2.000007 kbd") })
        #expect(lines.contains("L: 01 1"))
    }

    @Test func aHandWrittenSessionIsRead() throws {
        let text = """
            # EVFLOW SESSION 1\r
            # two identical buttons, no ids written: the second gets #2

            D: a
            N: Button
            I: 0003 0001 0002 0001
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 00 00 00 00 00 00 00 00
            B: 01 01 00 00 00 00 00 00 00
            D: b   # the same device model
            N: Button
            I: 0003 0001 0002 0001
            S: 00 1
            add: 100.000000 a
            add: 100.000000 b
            E: 100.500000 a 0001 0100 1   # BTN_0
            E: 100.500000 a 0000 0000 0
            remove: 101.000000 a
            add: 101.000000 a
            """
        let session = try SessionReader.parse(Array(text.utf8), file: "hand")
        #expect(session.devices.map(\.handle) == ["a", "b"])
        let derived = DeviceID(name: "Button", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                               phys: nil, uniq: nil)
        #expect(session.devices.map(\.info.id) == [derived, DeviceID(rawValue: derived.rawValue + "#2")])
        #expect(session.devices[0].info.capabilities[EventType.key] == [0x100])
        #expect(session.devices[1].switchStates == [0: 1])
        #expect(session.startMicroseconds == 100_000_000)
        #expect(session.timeline == [
            SessionEntry(time: 0, device: 0, action: .add),
            SessionEntry(time: 0, device: 1, action: .add),
            SessionEntry(time: 500_000_000, device: 0, action: .event(type: 1, code: 0x100, value: 1)),
            SessionEntry(time: 500_000_000, device: 0, action: .event(type: 0, code: 0, value: 0)),
            SessionEntry(time: 1_000_000_000, device: 0, action: .remove),
            SessionEntry(time: 1_000_000_000, device: 0, action: .add),
        ])
        #expect(session.appearances().map(\.removed) == [1_000_000_000, nil, nil])
    }

    /// Found by fuzzing (`fuzz-regressions/session/found-name-carriage-return.session`): a
    /// `\r` inside a name was kept by the reader and written as a space, so the second read
    /// differed from the first. It is read as a space, and the id derives from that name.
    @Test func aCarriageReturnInsideANameIsReadAsTheSpaceItIsWrittenAs() throws {
        let text = "# EVFLOW SESSION 1\nD: k\nN: Key\rBoard\u{0}\nI: 0003 0001 0002 0001\nadd: 0.000000 k\n"
        let session = try SessionReader.parse(Array(text.utf8), file: "cr")
        #expect(session.devices[0].info.name == "Key Board\u{0}")
        #expect(session.devices[0].info.id == DeviceID(name: "Key Board\u{0}", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                                                      phys: nil, uniq: nil))
        let again = try SessionReader.parse(SessionWriter.write(session), file: "again")
        #expect(again == session)
    }

    /// One broken session per rule, each pinned to its line and reason.
    static let header = "# EVFLOW SESSION 1\nD: k\nN: Key\nI: 0003 0001 0002 0001\n"
    static let malformed: [(text: String, line: Int, reason: RecordingError.Reason)] = [
        ("", 1, .badSession("the first line must be '# EVFLOW SESSION 1'")),
        ("# EVEMU 1.3\nN: x\n", 1, .badSession("the first line must be '# EVFLOW SESSION 1'")),
        ("# EVFLOW SESSION 2\n", 1, .badSession("unsupported session version '2' (this reader reads 1)")),
        ("# EVFLOW SESSION 1\n", 1, .noEvents("the session describes no device (no D: line)")),
        ("# EVFLOW SESSION 1\nN: x\n", 2, .misplacedLine("N: line before the first D: line")),
        ("# EVFLOW SESSION 1\nadd: 0.000000 k\n", 2, .missingDescription("a timeline line before any D: device block")),
        ("# EVFLOW SESSION 1\nD: k\nN: Key\nadd: 0.000000 k\n", 2, .missingDescription("no I: line")),
        (header + "D: k\n", 5, .badSession("second device with the handle 'k'")),
        (header + "D: k/2\n", 5, .badSession("bad device handle 'k/2' (1–32 of A-Z a-z 0-9 _ . -)")),
        (header + "D: j 0003%zz\n", 5, .badSession("bad %XX escape in device id '0003%zz'")),
        ("# EVFLOW SESSION 1\nD: a x\nN: A\nI: 1 2 3 4\nD: b x\nN: B\nI: 1 2 3 4\nadd: 0.000000 a\n", 5,
         .badSession("device 'b' has the id x of an earlier device (ids must be distinct)")),
        (header, 2, .badSession("device 'k' is never added (no add: k line)")),
        (header + "add: 0.000000 q\n", 5, .badSession("unknown device 'q' (no D: q block)")),
        (header + "add: 0.000000\n", 5, .truncatedLine(expected: "device handle")),
        (header + "add: 0.000000 k\nadd: 1.000000 k\n", 6,
         .badSession("add: of 'k', which is already present (remove: it first)")),
        (header + "add: 0.000000 k\nremove: 1.000000 k\nE: 1.000000 k 0001 001e 1\n", 7,
         .badSession("E: of 'k', which is not present (add: it first)")),
        (header + "add: 0.000000 k\nremove: 1.000000 k\nremove: 2.000000 k\n", 7,
         .badSession("remove: of 'k', which is not present")),
        (header + "add: 2.000000 k\nE: 1.999999 k 0001 001e 1\n", 6,
         .timeWentBackwards(previousMicroseconds: 2_000_000, microseconds: 1_999_999)),
        (header + "add: 0.000000 k\nE: 0.100000 k 0001 001e\n", 6, .truncatedLine(expected: "event value")),
        (header + "add: 0.000000 k\nE: 0.100000 k 0001 001e 1 1\n", 6, .trailingText("1")),
        (header + "add: 0.000000 k\nE: 0.1 k 0001 001e 1\n", 6, .badNumber(field: "timestamp", text: "0.1")),
        (header + "add: 0.000000 k\nN: Late\n", 6, .misplacedLine("N: line after the first timeline line")),
        (header + "add: 0.000000 k\nD: j\n", 6, .misplacedLine("D: line after the first timeline line (devices come first)")),
        (header + "X: 1\n", 5, .unknownLinePrefix("X:")),
        (header + "A: 00 10 5 0 0 0\n", 5, .impossibleAxis(code: 0, problem: "minimum 10 above maximum 5")),
    ]

    @Test(arguments: malformed.indices)
    func aBrokenSessionNamesItsLine(_ index: Int) {
        let (text, line, reason) = Self.malformed[index]
        #expect(throws: RecordingError(file: "bad.session", line: line, reason: reason), "\(text)") {
            try SessionReader.parse(Array(text.utf8), file: "bad.session")
        }
    }

    @Test func moreDevicesThanTheLimitAreRefusedAtTheFirstOneTooMany() {
        var text = "# EVFLOW SESSION 1\n"
        for n in 0...RecordingLimits.maxDevices { text += "D: d\(n)\nN: x\nI: 1 2 3 \(String(n, radix: 16))\n" }
        #expect(throws: RecordingError(file: "many", line: 2 + 3 * RecordingLimits.maxDevices, reason: .badSession(
            "more than \(RecordingLimits.maxDevices) devices in one session (docs/reliability.md)"))) {
            try SessionReader.parse(Array(text.utf8), file: "many")
        }
    }

    @Test func otherReadersNameASessionFile() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("session-\(getpid()).session")
        defer { try? FileManager.default.removeItem(at: url) }
        try SessionWriter.write(try Self.sample(), to: url)
        #expect(SessionReader.isSessionFile(url))
        #expect(!SessionReader.isSessionFile(Fixtures.evemu(Self.coverFile)))
        #expect(try SessionReader.read(contentsOf: url) == (try Self.sample()))
        do {
            _ = try Recording.read(contentsOf: url)
            Issue.record("Recording.read accepted a session")
        } catch {
            #expect(error.line == 1)
            guard case .notAnEvdevRecording(let what) = error.reason else {
                Issue.record("\(error)")
                return
            }
            #expect(what.hasPrefix("evflow session file"))
        }
    }

    @Test func oneDevicesPartConvertsToAPlainEvemuFile() throws {
        let session = try Self.sample()
        let keyboard = try Self.evemu(Self.keyboardFile)
        // One appearance: its events exactly, on the session's time base.
        let second = try #require(session.recordedDevice(0, appearance: 1))
        #expect(second.events == Array(Self.shifted(keyboard.events, by: 3_000_000_000).prefix(5)))
        #expect(second.info == keyboard.info)
        #expect(second.ledStates == [1: 1])
        let evemu = try EvemuReader.parse(EvemuWriter.write(second, startMicroseconds: session.startMicroseconds),
                                          file: "converted")
        #expect(evemu.startMicroseconds == 3_000_007)
        #expect(evemu.devices[0].events.map(\.time) == second.events.map { $0.time - 3_000_000_000 })
        #expect(evemu.devices[0].info == keyboard.info)
        // All appearances: the unfinished frame of the second one is the last thing, so kept;
        // an unfinished frame before another appearance would be dropped.
        let all = try #require(session.recordedDevice(0))
        #expect(all.events == keyboard.events + second.events)
        var parts = session.appearances()
        parts[0].events = Array(keyboard.events.prefix(7))   // pulled out after KEY_C's MSC_SCAN
        let cut = Session(devices: session.devices, appearances: parts)
        let joined = try #require(cut.recordedDevice(0))
        #expect(joined.events == Array(keyboard.events.prefix(6)) + second.events, "KEY_C's unfinished frame is left out")
        #expect(session.recordedDevice(0, appearance: 2) == nil)
        #expect(session.recordedDevice(3) == nil)
        #expect(session.devices(named: "cover-2") == [2])
        #expect(session.devices(named: session.devices[1].info.id.rawValue) == [1])
        #expect(session.devices(named: "Microsoft Surface Type Cover") == [1, 2])
        #expect(session.devices(named: "nothing").isEmpty)
    }

    @Test func theRecorderBuildsAValidSessionFromLiveReports() throws {
        let keyboard = try Self.evemu(Self.keyboardFile).info
        let cover = try Self.evemu(Self.coverFile).info
        let t0: Int64 = 50_000_000_000
        var recorder = SessionRecorder()
        let early = recorder.frame(InputFrame(time: t0, events: []), of: keyboard.id)
        #expect(!early, "no device yet")
        recorder.add(keyboard, ledStates: [0: 1, 1: 0], at: t0)
        recorder.frame(InputFrame(time: t0 + 10, events: [InputEvent(time: t0 + 10, type: 1, code: 30, value: 1)]), of: keyboard.id)
        // A summary first (as the DEVICE notice has it), the full description later.
        var summary = cover
        summary.capabilities = [:]
        let c = recorder.add(summary, at: t0 + 1_000)
        // A frame whose events happened before the add reached the recorder: moved forward.
        recorder.frame(InputFrame(time: t0 + 500, events: [InputEvent(time: t0 + 500, type: 2, code: 0, value: 4)]), of: cover.id)
        recorder.describe(c, info: cover, switchStates: [0: 0])
        recorder.remove(keyboard.id, at: t0 + 2_000)
        recorder.remove(keyboard.id, at: t0 + 2_100)   // not present: nothing
        let late = recorder.frame(InputFrame(time: t0 + 2_200, events: []), of: keyboard.id)
        #expect(!late, "removed")
        recorder.add(keyboard, at: t0 + 3_000)          // the same device again
        recorder.add(keyboard, at: t0 + 4_000)          // replaced before its removal came
        let session = recorder.session
        #expect(recorder.frameCount == 2)
        #expect(recorder.framesOfAbsentDevices == 2)
        #expect(session.devices.map(\.handle) == ["d1", "d2"])
        #expect(session.devices[1].info == cover)
        #expect(session.devices[0].ledStates == [0: 1])
        #expect(session.devices[1].switchStates == [:])
        #expect(session.timeline == [
            SessionEntry(time: 0, device: 0, action: .add),
            SessionEntry(time: 10, device: 0, action: .event(type: 1, code: 30, value: 1)),
            SessionEntry(time: 10, device: 0, action: .event(type: 0, code: 0, value: 0)),
            SessionEntry(time: 1_000, device: 1, action: .add),
            SessionEntry(time: 1_000, device: 1, action: .event(type: 2, code: 0, value: 4)),
            SessionEntry(time: 1_000, device: 1, action: .event(type: 0, code: 0, value: 0)),
            SessionEntry(time: 2_000, device: 0, action: .remove),
            SessionEntry(time: 3_000, device: 0, action: .add),
            SessionEntry(time: 4_000, device: 0, action: .remove),
            SessionEntry(time: 4_000, device: 0, action: .add),
        ])
        // What it built is a file the reader takes (times are kept to the microsecond).
        let reread = try SessionReader.parse(SessionWriter.write(session), file: "recorded")
        #expect(reread.timeline.map(\.action) == session.timeline.map(\.action))
        #expect(reread.devices.map(\.info.id) == [keyboard.id, cover.id])
    }
}
