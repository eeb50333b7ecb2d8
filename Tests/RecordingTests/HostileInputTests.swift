import Foundation
import InputModel
import Reactive
@testable import Recording
import YAML
import Testing

/// Limits on hostile recordings (docs/reliability.md, "Limits on hostile input"): each gets a
/// clear error naming the file (and the line where there is one), never a crash or unbounded
/// memory.
@Suite("hostile recordings") struct HostileRecordingTests {
    static func temp(_ name: String, _ bytes: [UInt8]) throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("evflow-\(getpid())-\(UUID().uuidString)-\(name)")
        try Data(bytes).write(to: url)
        return url
    }

    @Test("the documented limits")
    func documentedLimits() {
        #expect(RecordingLimits.maxFileBytes == 256 << 20)
        #expect(RecordingLimits.maxYAMLFileBytes == 32 << 20)
        #expect(RecordingLimits.maxDevices == 1024)
        #expect(YAMLLimits.maxNodes(textBytes: 100) == 10_000)
        #expect(YAMLLimits.maxNodes(textBytes: 1 << 20) == 4 << 20)
    }

    @Test("a file over the size limit is refused while it is read, naming the limit")
    func fileOverTheLimit() throws {
        let url = try Self.temp("big.evemu", Array(repeating: UInt8(ascii: "#"), count: 3000))
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: RecordingError.self) { _ = try RecordingLimits.read(url.path, limit: 2048) }
        do {
            _ = try RecordingLimits.read(url.path, limit: 2048)
        } catch {
            #expect(error.line == 0 && error.file == url.path)
            #expect("\(error)".contains("limit"))
        }
        #expect(try RecordingLimits.read(url.path, limit: 3000).count == 3000)
    }

    @Test("a device that never ends (/dev/zero) is refused as not a regular file, not read for ever")
    func endlessFile() {
        #expect(throws: RecordingError(file: "/dev/zero", line: 0, reason: .unreadable("a character device, not a regular file"))) {
            _ = try RecordingLimits.read("/dev/zero", limit: 1 << 20)
        }
    }

    @Test("a 100 MB line with no newline: an error naming line 1, at once")
    func hundredMegabyteLine() {
        let start = ContinuousClock.now
        var line = Array("N: ".utf8)
        line += [UInt8](repeating: UInt8(ascii: "x"), count: 100 << 20)
        #expect(throws: RecordingError.self) { _ = try EvemuReader.parse(line, file: "long.evemu") }
        do {
            _ = try EvemuReader.parse(line, file: "long.evemu")
        } catch {
            #expect((1...2).contains(error.line))
        }
        let garbage = [UInt8](repeating: UInt8(ascii: "x"), count: 100 << 20)
        // The error quotes at most 40 bytes of what the line starts with.
        #expect(throws: RecordingError(file: "garbage.evemu", line: 1,
                                       reason: .unknownLinePrefix(String(repeating: "x", count: 40)))) {
            _ = try EvemuReader.parse(garbage, file: "garbage.evemu")
        }
        #expect(ContinuousClock.now - start < .seconds(30))
    }

    /// A minimal libinput record device with one key event.
    static func libinputDevice(_ i: Int) -> String {
        """
          - node: /dev/input/event\(i)
            evdev:
              name: "dev \(i)"
              id: [3, 1, 2, 1]
              codes:
                1: [30]
            events:
              - evdev:
                  - [0, 0, 1, 30, 1]
                  - [0, 0, 0, 0, 0]

        """
    }

    @Test("more than 1024 devices in one libinput recording: an error at the 1025th device's line")
    func tooManyDevices() throws {
        let text = "version: 1\nndevices: 1025\nlibinput:\n  version: \"1.22\"\ndevices:\n"
            + (0..<1025).map(Self.libinputDevice).joined()
        #expect(throws: RecordingError.self) { _ = try LibinputRecordReader.parse(Array(text.utf8), file: "many.yml") }
        do {
            _ = try LibinputRecordReader.parse(Array(text.utf8), file: "many.yml")
        } catch {
            // 5 header lines, 10 lines per device: device 1025 starts on line 5 + 1024 × 10 + 1.
            #expect(error.line == 5 + 1024 * 10 + 1)
            #expect("\(error)".contains("more than 1024 devices"))
        }
    }

    @Test("a million devices: refused by the YAML size limit before the tree is composed")
    func millionDevices() throws {
        var bytes = Array("version: 1\ndevices:\n".utf8)
        bytes.reserveCapacity(60 << 20)
        for i in 0..<1_000_000 {
            bytes += "  - {evdev: {name: device-\(i), id: [3, 1, 2, 1], codes: {1: [30]}}}\n".utf8
        }
        #expect(bytes.count > RecordingLimits.maxYAMLFileBytes)
        let start = ContinuousClock.now
        let error = try #require(throws: RecordingError.self) {
            _ = try LibinputRecordReader.parse(bytes, file: "million.yml")
        }
        #expect(error.line == 0 && "\(error)".contains("32 MiB limit"))
        #expect(ContinuousClock.now - start < .seconds(1))
    }

    @Test("aliases used over and over (a billion laughs) are refused, not walked for ever")
    func billionLaughs() throws {
        var text = "version: 1\nx0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"
        for level in 1...9 {
            text += "x\(level): &x\(level) [" + Array(repeating: "*x\(level - 1)", count: 10).joined(separator: ", ") + "]\n"
        }
        text += "devices: [*x9]\n"
        let start = ContinuousClock.now
        let error = try #require(throws: RecordingError.self) {
            _ = try LibinputRecordReader.parse(Array(text.utf8), file: "laughs.yml")
        }
        #expect(error.line == 1 && "\(error)".contains("expands to more than 10000 nodes"))
        #expect(ContinuousClock.now - start < .seconds(10))
    }

    @Test("timestamps: backwards is an error naming the line; a jump of ten years is read as it is")
    func timestamps() throws {
        let head = "N: t\nI: 0003 0001 0002 0001\nB: 00 0b 00 00 00 00 00 00 00\nB: 01 00 00 00 40 00 00 00 00\n"
        let backwards = head + "E: 100.000000 0001 001e 0001\nE: 100.000000 0000 0000 0000\nE: 99.000000 0001 001e 0000\n"
        #expect(throws: RecordingError(file: "b.evemu", line: 7, reason: .timeWentBackwards(
            previousMicroseconds: 100_000_000, microseconds: 99_000_000))) {
            _ = try EvemuReader.parse(Array(backwards.utf8), file: "b.evemu")
        }
        let tenYears: Int64 = 10 * 365 * 24 * 3600
        let jump = head + "E: 1.000000 0001 001e 0001\nE: 1.000000 0000 0000 0000\n"
            + "E: \(1 + tenYears).000000 0001 001e 0000\nE: \(1 + tenYears).000000 0000 0000 0000\n"
        let recording = try EvemuReader.parse(Array(jump.utf8), file: "j.evemu")
        #expect(recording.devices[0].events.last?.time == tenYears * 1_000_000_000)
    }

    @Test("an impossible axis (minimum above maximum, negative fuzz, flat or resolution) is an error naming its line", arguments: [
        ("A: 00 100 0 0 0 0", "impossible axis ABS_X: minimum 100 above maximum 0"),
        ("A: 01 0 100 -1 0 0", "impossible axis ABS_Y: negative fuzz -1"),
        ("A: 00 0 100 0 -5 0", "impossible axis ABS_X: negative flat -5"),
        ("A: 00 0 100 0 0 -2", "impossible axis ABS_X: negative resolution -2"),
    ])
    func impossibleAxis(line: String, message: String) throws {
        let text = "N: t\nI: 0003 0001 0002 0001\nB: 00 0b 00 00 00 00 00 00 00\nB: 03 03 00 00 00 00 00 00 00\n"
            + line + "\nE: 1.000000 0003 0000 0005\nE: 1.000000 0000 0000 0000\n"
        let error = try #require(throws: RecordingError.self) { _ = try EvemuReader.parse(Array(text.utf8), file: "a.evemu") }
        #expect(error.line == 5)
        #expect("\(error)" == "a.evemu:5: \(message)")
    }

    @Test("libinput record: an impossible axis is an error naming the absinfo line")
    func impossibleAxisLibinput() throws {
        let text = """
            version: 1
            ndevices: 1
            libinput:
              version: "1.22"
            devices:
              - node: /dev/input/event0
                evdev:
                  name: "pad"
                  id: [3, 1, 2, 1]
                  codes:
                    3: [0]
                  absinfo:
                    0: [10, 0, 0, 0, 0]
                events: []

            """
        let error = try #require(throws: RecordingError.self) {
            _ = try LibinputRecordReader.parse(Array(text.utf8), file: "a.yml")
        }
        #expect(error.line == 13)
        #expect("\(error)".contains("impossible axis ABS_X: minimum 10 above maximum 0"))
    }
}

/// Issue #25 finding 2: `evflowd --replay F --speed 0.0000000001` trapped converting the
/// stretched recording time to nanoseconds.
@Suite("replay pace arithmetic") struct ReplayPaceTests {
    @Test("a frame's delivery time saturates instead of trapping, whatever the pace")
    func scheduledTimeSaturates() {
        let origin: Int64 = 5_000_000_000
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: 2_000, speed: 1) == origin + 2_000)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: 2_000, speed: 2) == origin + 1_000)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: 2_000, speed: .infinity) == origin)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: 3_600_000_000_000, speed: 0.0000000001) == .max)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: .max, speed: 1) == .max)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: .max, speed: 0.001) == .max)
        #expect(ReplaySource.scheduledTime(origin: -origin, recorded: .min, speed: 1) == .min)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: .min / 2, speed: 0.001) == .min + origin)
        #expect(ReplaySource.scheduledTime(origin: origin, recorded: .min, speed: 1) == .min + origin)
    }
}

/// Issue #34: the readers accepted times up to 2⁶³ ns after the first event, and what adds
/// to them trapped: `evflowd --replay --speed 0` (`FrameTable.frame`'s `time += shift`), a
/// looping replay, a sensor replay. Every reader now stops at `RecordingLimits.maxTimeNanoseconds`
/// (2⁶¹ ns), naming the line, and the replay's sums saturate.
@Suite("recording time limit") struct RecordingTimeLimitTests {
    static let head = "N: t\nI: 0003 0001 0002 0001\nB: 00 0b 00 00 00 00 00 00 00\nB: 01 00 00 00 40 00 00 00 00\n"
    static let field = "timestamp (at most 2305843009.213693 s, about 73 years, after the first)"

    @Test("the limit is 2⁶¹ ns, about 73 years, and the error says so")
    func documentedLimit() {
        #expect(RecordingLimits.maxTimeNanoseconds == 1 << 61)
        #expect(RecordingLimits.maxTimeMicroseconds == 2_305_843_009_213_693)
        #expect(RecordingLimits.timestampField == Self.field)
    }

    @Test("evemu: an event at 9223372036.854 s (it trapped --replay --speed 0 and analyze) is refused naming its line")
    func evemuEventNearTwoToTheSixtyThree() throws {
        let text = Self.head + "E: 0.000001 0001 001e 0001\nE: 0.000001 0000 0000 0000\n"
            + "E: 9223372036.854000 0001 001e 0000\nE: 9223372036.854000 0000 0000 0000\n"
        #expect(throws: RecordingError(file: "late.evemu", line: 7, reason: .badNumber(
            field: Self.field, text: "9223372036.854000"))) {
            _ = try EvemuReader.parse(Array(text.utf8), file: "late.evemu")
        }
    }

    @Test("evemu: the last time the limit allows is read, and replays at --speed 0 from a clock 2⁶¹ ns on")
    func evemuAtTheLimitReplays() throws {
        let last = RecordingError.Reason.seconds(1 + RecordingLimits.maxTimeMicroseconds)
        let text = Self.head + "E: 0.000001 0001 001e 0001\nE: 0.000001 0000 0000 0000\n"
            + "E: \(last) 0001 001e 0000\nE: \(last) 0000 0000 0000\n"
        let recording = try EvemuReader.parse(Array(text.utf8), file: "edge.evemu")
        #expect(recording.devices[0].events.last?.time == RecordingLimits.maxTimeMicroseconds * 1000)
        let origin = RecordingLimits.maxTimeNanoseconds
        #expect(Self.replayedFrameTimes(recording, clock: origin) == [origin, origin + RecordingLimits.maxTimeMicroseconds * 1000])
    }

    @Test("evtest and session: a time past the limit is refused naming its line")
    func evtestAndSessionPastTheLimit() throws {
        let evtest = """
            Input device ID: bus 0x3 vendor 0x1 product 0x2 version 0x1
            Input device name: "x"
            Event: time 5.000000, type 1 (EV_KEY), code 30 (KEY_A), value 1
            Event: time 5.000000, -------------- SYN_REPORT ------------
            Event: time 2305843014.213694, type 1 (EV_KEY), code 30 (KEY_A), value 0

            """
        #expect(throws: RecordingError(file: "far.evtest", line: 5, reason: .badNumber(
            field: Self.field, text: "2305843014.213694"))) {
            _ = try EvtestReader.parse(Array(evtest.utf8), file: "far.evtest")
        }
        let session = "# EVFLOW SESSION 1\nD: k\nN: Key\nI: 0003 0001 0002 0001\nadd: 0.000000 k\n"
            + "E: 9223372036.854000 k 0001 001e 1\n"
        #expect(throws: RecordingError(file: "far.session", line: 6, reason: .badNumber(
            field: Self.field, text: "9223372036.854000"))) {
            _ = try SessionReader.parse(Array(session.utf8), file: "far.session")
        }
    }

    @Test("libinput record: an event 3·10⁹ s after the first (past the limit; its seconds stop at 2³² here) is refused naming its line")
    func libinputPastTheLimit() throws {
        let text = """
            version: 1
            ndevices: 1
            libinput:
              version: "1.22"
            devices:
              - node: /dev/input/event0
                evdev:
                  name: "k"
                  id: [3, 1, 2, 1]
                  codes:
                    1: [30]
                events:
                  - evdev:
                      - [0, 0, 1, 30, 1]
                      - [0, 0, 0, 0, 0]
                  - evdev:
                      - [3000000000, 0, 1, 30, 0]
                      - [3000000000, 0, 0, 0, 0]

            """
        #expect(throws: RecordingError(file: "far.yml", line: 17, reason: .badNumber(
            field: Self.field, text: "3000000000.000000"))) {
            _ = try LibinputRecordReader.parse(Array(text.utf8), file: "far.yml")
        }
    }

    @Test("a built recording with an event at Int64.max - 10 replays at --speed 0 without trapping: its time saturates")
    func builtRecordingNearTheEndOfTime() {
        let info = DeviceInfo(name: "k", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [EventType.key: [30]])
        let late = Int64.max - 10
        let events = [InputEvent(time: 0, type: EventType.key, code: 30, value: 1), InputEvent(time: 0, type: 0, code: 0, value: 0),
                      InputEvent(time: late, type: EventType.key, code: 30, value: 0), InputEvent(time: late, type: 0, code: 0, value: 0)]
        let recording = Recording(devices: [RecordedDevice(info: info, events: events)])
        #expect(Self.replayedFrameTimes(recording, clock: 1_000_000_000) == [1_000_000_000, .max])
    }

    @Test("a looping replay at --speed 0 of a recording at the limit: its passes' event times saturate, never trap")
    func loopingPastTheEndOfTime() throws {
        let last = RecordingError.Reason.seconds(RecordingLimits.maxTimeMicroseconds)
        let text = Self.head + "E: 0.000000 0001 001e 0001\nE: 0.000000 0000 0000 0000\n"
            + "E: \(last) 0001 001e 0000\nE: \(last) 0000 0000 0000\n"
        let recording = try EvemuReader.parse(Array(text.utf8), file: "loop.evemu")
        let scheduler = VirtualTimeScheduler(initialClock: 1_000_000_000)
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: .infinity, loop: true)
        var times: [Int64] = []
        let frames = CompositeDisposable()
        let devices = replay.devices.subscribe(onNext: { stream in
            _ = frames.insert(stream.frames.subscribe(onNext: { times.append($0.time) }))
        })
        // A pass every second (the loop gap): 2⁶¹ ns of event time each, Int64.max after four.
        scheduler.advance(by: .seconds(8))
        devices.dispose()
        frames.dispose()
        scheduler.run()
        #expect(times.count >= 16)
        #expect(zip(times, times.dropFirst()).allSatisfy { $0 <= $1 })
        #expect(times.last == .max)
    }

    /// The times of the frames `recording` delivers, replayed at --speed 0 from `clock`.
    static func replayedFrameTimes(_ recording: Recording, clock: Int64) -> [Int64] {
        let scheduler = VirtualTimeScheduler(initialClock: clock)
        let replay = ReplaySource(recordings: [recording], scheduler: scheduler, speed: .infinity)
        var times: [Int64] = []
        let frames = SerialDisposable()
        let devices = replay.devices.subscribe(onNext: { stream in
            frames.disposable = stream.frames.subscribe(onNext: { times.append($0.time) })
        })
        scheduler.run()
        devices.dispose()
        frames.dispose()
        scheduler.run()
        return times
    }
}
