import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import Recording

/// What each shipped evemu recording must parse to. The numbers were counted independently of
/// the reader: `E:` lines and `SYN_REPORT`s with awk, mask bits and `A:` lines with a short
/// Python script, names and ids read off the `N:`/`I:` lines.
struct EvemuFixture: Sendable, CustomTestStringConvertible {
    let events: String
    let description: String?
    let name: String
    let inputID: InputID
    let eventCount: Int
    let synReports: Int
    let kind: TimestampKind
    let startMicroseconds: Int64
    let lastTimeNanoseconds: Int64
    /// Number of codes per event type.
    let codeCounts: [UInt16: Int]
    let absAxes: Int
    let inputProperties: Set<UInt16>

    var testDescription: String { (events as NSString).lastPathComponent }

    static let all: [EvemuFixture] = [
        EvemuFixture(
            events: "keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events",
            description: nil, name: "Lenovo ThinkPad Compact USB Keyboard with TrackPoint",
            inputID: InputID(bustype: 0x03, vendor: 0x17ef, product: 0x6047, version: 0x0100),
            eventCount: 9, synReports: 3, kind: .relative, startMicroseconds: 1,
            lastTimeNanoseconds: 1_560_030_000,
            codeCounts: [0: 3, 1: 146, 4: 1, 0x11: 5, 0x14: 2], absAxes: 0, inputProperties: []),
        EvemuFixture(
            events: "mice/PS2 Generic Mouse.events", description: "mice/PS2 Generic Mouse.desc",
            name: "PS/2 Generic Mouse",
            inputID: InputID(bustype: 0x11, vendor: 0x02, product: 0x01, version: 0),
            eventCount: 7147, synReports: 2707, kind: .absolute, startMicroseconds: 1_329_846_856_201_613,
            lastTimeNanoseconds: 52_984_487_000,
            codeCounts: [0: 3, 1: 3, 2: 2], absAxes: 0, inputProperties: []),
        EvemuFixture(
            events: "mice/Ultrathin Touch Mouse.events", description: nil, name: "Ultrathin Touch Mouse",
            inputID: InputID(bustype: 0x05, vendor: 0x046d, product: 0xb00d, version: 0x0700),
            eventCount: 1109, synReports: 406, kind: .relative, startMicroseconds: 0,
            lastTimeNanoseconds: 9_663_855_000,
            codeCounts: [0: 3, 1: 168, 2: 4, 3: 1, 4: 1, 0x11: 5, 0x14: 1], absAxes: 1, inputProperties: []),
        EvemuFixture(
            events: "misc/Microsoft Surface Type Cover.events", description: nil,
            name: "Microsoft Surface Type Cover",
            inputID: InputID(bustype: 0x03, vendor: 0x045e, product: 0x07dc, version: 0x0111),
            eventCount: 75, synReports: 25, kind: .relative, startMicroseconds: 0,
            lastTimeNanoseconds: 10_559_858_000,
            codeCounts: [0: 3, 1: 271, 2: 5, 3: 26, 4: 1, 0x11: 3, 0x14: 1], absAxes: 27, inputProperties: []),
        EvemuFixture(
            events: "misc/Plantronics Plantronics .Audio 648 USB.buttons.events",
            description: "misc/Plantronics Plantronics .Audio 648 USB.desc",
            name: "Plantronics Plantronics .Audio 648 USB",
            inputID: InputID(bustype: 0x03, vendor: 0x047f, product: 0xc013, version: 0x0100),
            eventCount: 32, synReports: 8, kind: .absolute, startMicroseconds: 1_345_610_846_343_504,
            lastTimeNanoseconds: 5_256_042_000,
            codeCounts: [0: 3, 1: 5, 4: 1], absAxes: 0, inputProperties: []),
        EvemuFixture(
            events: "tablets/dell_canvas_pen.evemu", description: nil, name: "Wacom ISD-V4 Pen",
            inputID: InputID(bustype: 0x03, vendor: 0x056a, product: 0x4200, version: 0x0110),
            eventCount: 2839, synReports: 978, kind: .relative, startMicroseconds: 1,
            lastTimeNanoseconds: 7_935_972_000,
            codeCounts: [0: 3, 1: 5, 3: 5], absAxes: 5, inputProperties: [1]),
        EvemuFixture(
            events: "touchpads/bcm5974.three-finger-click.events", description: nil, name: "bcm5974",
            inputID: InputID(bustype: 0x03, vendor: 0x05ac, product: 0x0249, version: 0x0001),
            eventCount: 2586, synReports: 150, kind: .absolute, startMicroseconds: 1_332_478_501_143_449,
            lastTimeNanoseconds: 2_261_982_000,
            codeCounts: [0: 3, 1: 6, 3: 11], absAxes: 11, inputProperties: [2]),
        EvemuFixture(
            events: "touchscreens/Atmel maXTouch Touchscreen.1-finger-fast-taps.events", description: nil,
            name: "Atmel maXTouch Touchscreen",
            inputID: InputID(bustype: 0x18, vendor: 0, product: 0, version: 0),
            eventCount: 84, synReports: 18, kind: .relative, startMicroseconds: 1,
            lastTimeNanoseconds: 1_934_007_000,
            codeCounts: [0: 3, 1: 1, 3: 8], absAxes: 8, inputProperties: [1]),
        EvemuFixture(
            events: "touchscreens/Atmel maXTouch Touchscreen.4-finger-drag-down.events", description: nil,
            name: "Atmel maXTouch Touchscreen",
            inputID: InputID(bustype: 0x18, vendor: 0, product: 0, version: 0),
            eventCount: 309, synReports: 31, kind: .relative, startMicroseconds: 1,
            lastTimeNanoseconds: 566_589_000,
            codeCounts: [0: 3, 1: 1, 3: 8], absAxes: 8, inputProperties: [1]),
        EvemuFixture(
            events: "trackpoints/TPPS2 IBM TrackPoint.events", description: "trackpoints/TPPS2 IBM TrackPoint.desc",
            name: "TPPS/2 IBM TrackPoint",
            inputID: InputID(bustype: 0x11, vendor: 0x02, product: 0x0a, version: 0),
            eventCount: 2618, synReports: 964, kind: .absolute, startMicroseconds: 1_329_352_533_092_834,
            lastTimeNanoseconds: 21_618_393_000,
            codeCounts: [0: 3, 1: 3, 2: 2], absAxes: 0, inputProperties: []),
    ]

    func read() throws -> Recording {
        try EvemuReader.read(events: Fixtures.evemu(events), description: description.map(Fixtures.evemu))
    }
}

@Suite("EvemuReader on the shipped recordings", .ownLiveResources)
struct EvemuShippedRecordingTests {
    @Test(arguments: EvemuFixture.all)
    func parsesWithPinnedCounts(_ fixture: EvemuFixture) throws {
        let recording = try fixture.read()
        #expect(recording.devices.count == 1)
        let device = try #require(recording.devices.first)
        #expect(device.info.name == fixture.name)
        #expect(device.info.inputID == fixture.inputID)
        #expect(device.events.count == fixture.eventCount)
        #expect(device.events.filter(\.isSynReport).count == fixture.synReports)
        #expect(device.info.capabilities.mapValues(\.count) == fixture.codeCounts)
        #expect(device.info.absInfo.count == fixture.absAxes)
        #expect(device.info.inputProperties == fixture.inputProperties)
        #expect(recording.timestampKind == fixture.kind)
        #expect(recording.startMicroseconds == fixture.startMicroseconds)
        // Time model: the first event is at 0 ns and times never go backwards.
        #expect(device.events.first?.time == 0)
        #expect(device.events.last?.time == fixture.lastTimeNanoseconds)
        #expect(zip(device.events, device.events.dropFirst()).allSatisfy { $0.time <= $1.time })
        // Every shipped recording ends on a frame boundary.
        let framed = device.frames()
        #expect(framed.frames.count == fixture.synReports)
        #expect(framed.incompleteFrame.isEmpty)
        #expect(framed.frames.reduce(0) { $0 + $1.events.count } == fixture.eventCount - fixture.synReports)
    }

    @Test func keyboardStartsWithAReleaseAndEndsWithCtrlCHeld() throws {
        let device = try EvemuFixture.all[0].read().devices[0]
        #expect(device.events[0] == InputEvent(time: 0, type: EventType.msc, code: 4, value: 458792))
        #expect(device.events[1] == InputEvent(time: 0, type: EventType.key, code: 28, value: 0))   // KEY_ENTER up
        #expect(device.events[4] == InputEvent(time: 1_399_993_000, type: EventType.key, code: 29, value: 1))
        #expect(device.events[7] == InputEvent(time: 1_560_030_000, type: EventType.key, code: 46, value: 1))
    }

    @Test func absInfoAndPropertiesOfThePen() throws {
        let info = try EvemuReader.read(contentsOf: Fixtures.evemu("tablets/dell_canvas_pen.evemu")).devices[0].info
        #expect(info.absInfo[0x00] == AbsInfo(minimum: 0, maximum: 59674, fuzz: 4, flat: 0, resolution: 100))
        #expect(info.absInfo[0x1a] == AbsInfo(minimum: -9000, maximum: 9000, fuzz: 0, flat: 0, resolution: 5730))
        #expect(info.capabilities[EventType.key] == [320, 321, 330, 331, 332])
        #expect(info.capabilities[EventType.syn] == [0, 1, 3])
        #expect(info.inputProperties == [1])   // INPUT_PROP_DIRECT
    }

    @Test func headsetPressAndReleaseInOneFrameWithNegativeScanCodes() throws {
        let device = try EvemuFixture.all[4].read().devices[0]
        #expect(device.events[0] == InputEvent(time: 0, type: EventType.msc, code: 4, value: -6_291_275))
        #expect(device.events[1] == InputEvent(time: 2_000, type: EventType.key, code: 0x102, value: 1))
        let frames = device.frames().frames
        #expect(frames.contains { frame in
            frame.events.contains { $0.type == EventType.key && $0.value == 1 }
                && frame.events.contains { $0.type == EventType.key && $0.value == 0 }
        })
    }
}

@Suite("EvemuReader time stamps", .ownLiveResources)
struct EvemuTimestampTests {
    @Test func relativeTimesStartingAtOneMicrosecondMapToZero() throws {
        let recording = try EvemuReader.read(contentsOf: Fixtures.evemu(
            "touchscreens/Atmel maXTouch Touchscreen.4-finger-drag-down.events"))
        #expect(recording.timestampKind == .relative)
        #expect(recording.startMicroseconds == 1)
        #expect(recording.devices[0].events[0].time == 0)
    }

    @Test func absoluteEpochTimesAreOffsetsFromTheFirstEvent() throws {
        let recording = try EvemuFixture.all[1].read()
        #expect(recording.timestampKind == .absolute)
        let events = recording.devices[0].events
        // E: 1329846856.201613 then E: 1329846856.201621: 8 µs later.
        #expect(events[0].time == 0)
        #expect(events[1].time == 8_000)
        #expect(events[2].time == 25_477_000)   // 1329846856.227090
    }

    @Test func allZeroTimesKeepEveryEventAtZero() throws {
        let recording = try EvemuReader.read(contentsOf: Fixtures.url("handmade/zero-times.evemu"))
        #expect(recording.timestampKind == .allZero)
        #expect(recording.startMicroseconds == 0)
        let device = recording.devices[0]
        #expect(device.events.count == 4)
        #expect(device.events.allSatisfy { $0.time == 0 })
        #expect(device.frames().frames.count == 2)
    }
}

@Suite("EvemuReader details", .ownLiveResources)
struct EvemuDetailTests {
    @Test func ledAndSwitchStatesAreKept() throws {
        let device = try EvemuReader.read(contentsOf: Fixtures.url("handmade/zero-times.evemu")).devices[0]
        #expect(device.ledStates == [1: 1])
        #expect(device.switchStates == [0: 1])
        #expect(device.info.capabilities == [0: [0, 1, 3], 1: [30, 31], 4: [4], 0x11: [1]])
    }

    @Test func trailingPartialFrameIsReportedNotDropped() throws {
        let device = try EvemuReader.read(contentsOf: Fixtures.url("handmade/partial-frame.evemu")).devices[0]
        let framed = device.frames()
        #expect(framed.frames == [
            InputFrame(time: 0, events: [InputEvent(time: 0, type: 1, code: 31, value: 1)]),
            InputFrame(time: 10_000_000, events: [InputEvent(time: 10_000_000, type: 1, code: 31, value: 0)]),
        ])
        #expect(framed.incompleteFrame == [
            InputEvent(time: 20_000_000, type: 4, code: 4, value: 458774),
            InputEvent(time: 20_000_000, type: 1, code: 30, value: 1),
        ])
    }

    @Test func oldHeaderlessFormatWithFiveFieldAxesCRLFAndComments() throws {
        let recording = try EvemuReader.read(contentsOf: Fixtures.url("handmade/old-format.evemu"))
        let device = recording.devices[0]
        #expect(device.info.name == "Old Format Pad")
        #expect(device.info.absInfo == [
            0: AbsInfo(minimum: 0, maximum: 1023, fuzz: 4, flat: 0, resolution: 0),
            1: AbsInfo(minimum: -512, maximum: 511, fuzz: 4, flat: 8, resolution: 0),
        ])
        #expect(device.info.capabilities == [0: [0, 1, 3], 1: [0x14a], 3: [0, 1]])
        #expect(device.events == [
            InputEvent(time: 0, type: 3, code: 0, value: 10),
            InputEvent(time: 0, type: 3, code: 1, value: -20),
            InputEvent(time: 0, type: 1, code: 0x14a, value: 1),
            InputEvent(time: 0, type: 0, code: 0, value: 0),
            InputEvent(time: 500_000_000, type: 1, code: 0x14a, value: 0),
            InputEvent(time: 500_000_000, type: 0, code: 0, value: 0),
        ])
        #expect(recording.startMicroseconds == 100_000_000)
    }

    @Test func descriptionFilesAreFoundBesideEventsFiles() {
        #expect(EvemuReader.descriptionFile(forEvents: Fixtures.evemu("mice/PS2 Generic Mouse.events"))
            == Fixtures.evemu("mice/PS2 Generic Mouse.desc"))
        #expect(EvemuReader.descriptionFile(
            forEvents: Fixtures.evemu("misc/Plantronics Plantronics .Audio 648 USB.buttons.events"))
            == Fixtures.evemu("misc/Plantronics Plantronics .Audio 648 USB.desc"))
        #expect(EvemuReader.descriptionFile(forEvents: Fixtures.evemu("tablets/dell_canvas_pen.evemu")) == nil)
    }

    @Test func recordingReadPairsAnEventsFileWithItsDescription() throws {
        let viaPair = try EvemuFixture.all[9].read()
        let viaSniffing = try Recording.read(contentsOf: Fixtures.evemu("trackpoints/TPPS2 IBM TrackPoint.events"))
        #expect(viaSniffing == viaPair)
        #expect(viaSniffing.devices[0].events.count == 2618)
    }

    @Test func aDescriptionFileAloneIsADeviceWithoutEvents() throws {
        let recording = try EvemuReader.read(contentsOf: Fixtures.evemu("mice/PS2 Generic Mouse.desc"))
        #expect(recording.devices[0].info.name == "PS/2 Generic Mouse")
        #expect(recording.devices[0].events.isEmpty)
        #expect(recording.timestampKind == TimestampKind.none)
    }

    @Test func inMemoryParsingNamesTheGivenFile() throws {
        let bytes = Array("N: X\nI: 0001 0002 0003 0004\nE: 0.000000 0001 001e 1\nE: 0.000000 0000 0000 0\n".utf8)
        let recording = try EvemuReader.parse(bytes, file: "memory")
        #expect(recording.devices[0].events.count == 2)
        #expect(throws: RecordingError(file: "memory", line: 1, reason: .notAnEvdevRecording(
            "hid-recorder file (raw HID reports, not evdev events)"))) {
            try EvemuReader.parse(Array("# HID recording\nN: X\n".utf8), file: "memory")
        }
    }
}

@Suite("Device classes of recordings", .ownLiveResources)
struct RecordedDeviceClassTests {
    /// Recordings carry no udev data: classes come from `DeviceClassifier` (udev's rules), so
    /// a replayed device lands in the same filter class as the live one.
    @Test(arguments: [
        ("keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events", nil,
         [DeviceClass.keyboard, .key]),
        ("mice/PS2 Generic Mouse.events", "mice/PS2 Generic Mouse.desc", [.mouse]),
        ("touchpads/bcm5974.three-finger-click.events", nil, [.touchpad]),
        ("touchscreens/Atmel maXTouch Touchscreen.1-finger-fast-taps.events", nil, [.touchscreen]),
        ("tablets/dell_canvas_pen.evemu", nil, [.tablet]),
    ] as [(String, String?, Set<DeviceClass>)])
    func classesFollowUdevRules(_ events: String, _ description: String?, _ classes: Set<DeviceClass>) throws {
        let recording = try EvemuReader.read(events: Fixtures.evemu(events),
                                             description: description.map(Fixtures.evemu))
        #expect(recording.devices[0].info.classes == classes)
    }
}
