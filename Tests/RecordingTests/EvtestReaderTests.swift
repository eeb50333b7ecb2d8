import Foundation
import InputModel
import Recording
import ReactiveTesting
import Testing

/// evtest output (issue #9): the format most bug reports paste.
@Suite("EvtestReader", .ownLiveResources) struct EvtestReaderTests {
    /// `recording` as evtest prints it: header, then `Event:` lines at absolute times.
    static func evtestText(_ recording: Recording, header: Bool = true) -> String {
        let device = recording.devices[0]
        let info = device.info
        func hex(_ v: UInt16) -> String { "0x" + String(v, radix: 16) }
        var out = ""
        if header {
            out += "Input driver version is 1.0.1\n"
            out += "Input device ID: bus \(hex(info.inputID.bustype)) vendor \(hex(info.inputID.vendor)) "
                + "product \(hex(info.inputID.product)) version \(hex(info.inputID.version))\n"
            out += "Input device name: \"\(info.name)\"\nSupported events:\n"
            for type in info.capabilities.keys.sorted() {
                out += "  Event type \(type) (\(EventNames.typeText(type)))\n"
                for code in info.capabilities[type]!.sorted() {
                    out += "    Event code \(code) (\(EventNames.codeText(type: type, code: code)))"
                    if type == EventType.sw || type == EventType.led {
                        let states = type == EventType.sw ? device.switchStates : device.ledStates
                        out += " state \(states[code] ?? 0)"
                    }
                    out += "\n"
                    if type == EventType.abs, let a = info.absInfo[code] {
                        out += "      Value \(a.value)\n      Min \(a.minimum)\n      Max \(a.maximum)\n"
                        out += "      Fuzz \(a.fuzz)\n      Flat \(a.flat)\n      Resolution \(a.resolution)\n"
                    }
                }
            }
            out += "Properties:\n"
            for p in info.inputProperties.sorted() { out += "  Property type \(p) (\(EventNames.propertyText(p)))\n" }
            out += "Testing ... (interrupt to exit)\n"
        }
        for e in device.events {
            let us = recording.startMicroseconds + e.time / 1000
            let time = "\(us / 1_000_000)." + String(format: "%06lld", us % 1_000_000)
            if e.type == EventType.syn {
                out += "Event: time \(time), -------------- \(EventNames.codeText(type: e.type, code: e.code)) ------------\n"
            } else {
                let value = e.type == EventType.msc && (e.code == 3 || e.code == 4)
                    ? String(UInt32(bitPattern: e.value), radix: 16) : "\(e.value)"
                out += "Event: time \(time), type \(e.type) (\(EventNames.typeText(e.type))), code \(e.code) "
                    + "(\(EventNames.codeText(type: e.type, code: e.code))), value \(value)\n"
            }
        }
        return out
    }

    static func temp(_ name: String, _ text: String) throws -> URL {
        // Unique per call: the cases of a parameterized test run in parallel.
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-\(getpid())-\(UUID().uuidString)-\(name)")
        try Data(text.utf8).write(to: url)
        return url
    }

    @Test("the same stream in evemu and evtest form gives the same device and frames", arguments: [
        "misc/Microsoft Surface Type Cover.events", "mice/Ultrathin Touch Mouse.events",
        "keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events",
        "misc/Plantronics Plantronics .Audio 648 USB.buttons.events",
    ])
    func sameFrames(path: String) throws {
        let evemu = try Recording.read(contentsOf: Fixtures.evemu(path))
        let url = try Self.temp("same.evtest", Self.evtestText(evemu))
        defer { try? FileManager.default.removeItem(at: url) }
        let evtest = try Recording.read(contentsOf: url)
        #expect(evtest.devices[0].frames() == evemu.devices[0].frames())
        let a = evtest.devices[0].info, b = evemu.devices[0].info
        #expect(a.id == b.id && a.name == b.name && a.inputID == b.inputID && a.classes == b.classes)
        #expect(a.capabilities.filter { $0.key != EventType.syn } == b.capabilities.filter { $0.key != EventType.syn })
        // evtest prints absinfo of the axes the device reports (an evemu file may hold more A: lines).
        let reported = b.capabilities[EventType.abs] ?? []
        #expect(a.absInfo == b.absInfo.filter { reported.contains($0.key) })
        #expect(a.inputProperties == b.inputProperties)
        #expect(evtest.startMicroseconds == evemu.startMicroseconds)
    }

    @Test("a hand-written evtest paste: header, hex MSC_SCAN, events after the last SYN_REPORT not in a frame")
    func handWritten() throws {
        let r = try Recording.read(contentsOf: Fixtures.url("handmade/worn-mouse.evtest"))
        let d = r.devices[0]
        #expect(d.info.name == "Logitech USB Optical Mouse")
        #expect(d.info.inputID == InputID(bustype: 3, vendor: 0x46d, product: 0xc077, version: 0x111))
        #expect(d.info.classes.contains(.mouse))
        #expect(d.events[0] == InputEvent(time: 0, type: EventType.msc, code: 4, value: 0x90001))
        let framed = d.frames()
        #expect(framed.frames.count == 6)
        #expect(framed.frames[2].time == 254_000_000)
        #expect(framed.incompleteFrame.count == 1)
    }

    @Test("an event type above EV_MAX, or not a number, is an error naming the line (found by fuzzing)",
          arguments: ["1000", "99999"])
    func eventTypeOutOfRange(_ type: String) throws {
        let text = """
            Input device ID: bus 0x3 vendor 0x1 product 0x2 version 0x1
            Input device name: "x"
            Supported events:
              Event type 1 (EV_KEY)
                Event code 30 (KEY_A)
              Event type \(type) (?)
                Event code 2 (?)
            Event: time 0.000000, type 1 (EV_KEY), code 30 (KEY_A), value 1

            """
        #expect(throws: RecordingError(file: "t.evtest", line: 6, reason: .badNumber(
            field: "event type (at most 31)", text: type))) {
            try EvtestReader.parse(Array(text.utf8), file: "t.evtest")
        }
    }

    @Test("an event more than 292 years (now: 2⁶¹ ns, 73 years) after the first is an error naming the line, not a trap (found by fuzzing)")
    func timeOutOfRange() throws {
        let text = """
            Input device ID: bus 0x3 vendor 0x1 product 0x2 version 0x1
            Input device name: "x"
            Event: time 0.000000, type 1 (EV_KEY), code 30 (KEY_A), value 1
            Event: time 0.000000, -------------- SYN_REPORT ------------
            Event: time 10000000000.000000, type 1 (EV_KEY), code 30 (KEY_A), value 0

            """
        #expect(throws: RecordingError(file: "far.evtest", line: 5, reason: .badNumber(
            field: RecordingLimits.timestampField, text: "10000000000.000000"))) {
            try EvtestReader.parse(Array(text.utf8), file: "far.evtest")
        }
    }

    @Test("time going backwards is an error naming the line")
    func timeBackwards() throws {
        let text = """
            Input device ID: bus 0x3 vendor 0x1 product 0x2 version 0x1
            Input device name: "x"
            Event: time 100.000010, type 1 (EV_KEY), code 30 (KEY_A), value 1
            Event: time 100.000010, -------------- SYN_REPORT ------------
            Event: time 100.000009, type 1 (EV_KEY), code 30 (KEY_A), value 0

            """
        let url = try Self.temp("back.evtest", text)
        defer { try? FileManager.default.removeItem(at: url) }
        #expect(throws: RecordingError(file: url.path, line: 5, reason: .timeWentBackwards(
            previousMicroseconds: 100_000_010, microseconds: 100_000_009))) { try Recording.read(contentsOf: url) }
    }

    @Test("events-only evtest with --desc (an evtest header or an evemu description); without one, an error")
    func descriptionFiles() throws {
        let evemu = try Recording.read(contentsOf: Fixtures.evemu("mice/PS2 Generic Mouse.events"))
        let events = try Self.temp("ev.txt", Self.evtestText(evemu, header: false))
        let header = try Self.temp("hdr.prop", Self.evtestText(Recording(devices: [
            RecordedDevice(info: evemu.devices[0].info, events: [])]), header: true))
        defer { for u in [events, header] { try? FileManager.default.removeItem(at: u) } }
        let withHeader = try Recording.read(contentsOf: events, description: header)
        #expect(withHeader.devices[0].frames() == evemu.devices[0].frames())
        #expect(withHeader.devices[0].info.id == evemu.devices[0].info.id)
        let withEvemuDesc = try Recording.read(contentsOf: events,
                                               description: Fixtures.evemu("mice/PS2 Generic Mouse.desc"))
        #expect(withEvemuDesc.devices[0].frames() == evemu.devices[0].frames())
        #expect(throws: RecordingError.self) { try Recording.read(contentsOf: events) }
        // evemu events with --desc under any name.
        let copy = try Self.temp("mouse.prop", String(contentsOf: Fixtures.evemu("mice/PS2 Generic Mouse.desc"), encoding: .utf8))
        let evemuEvents = try Self.temp("mouse-events.txt", String(contentsOf: Fixtures.evemu("mice/PS2 Generic Mouse.events"), encoding: .utf8))
        defer { for u in [copy, evemuEvents] { try? FileManager.default.removeItem(at: u) } }
        #expect(try Recording.read(contentsOf: evemuEvents, description: copy).devices[0].frames() == evemu.devices[0].frames())
    }

    @Test("a missing description: the error lists the names tried")
    func missingDescriptionListsNames() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-\(getpid())-nodesc")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("Headset.buttons.events")
        try FileManager.default.copyItem(at: Fixtures.evemu("mice/PS2 Generic Mouse.events"), to: url)
        do {
            _ = try Recording.read(contentsOf: url)
            Issue.record("read without a description")
        } catch {
            #expect(error.description.hasSuffix("; tried Headset.buttons.desc, Headset.desc beside it; name one with --desc"))
        }
    }

    @Test("a description-only file is an error (no events), evemu and evtest alike")
    func descriptionOnly() throws {
        let desc = Fixtures.evemu("mice/PS2 Generic Mouse.desc")
        // Line 0 is for a file that could not be read; the events are missing at its end (line 40).
        #expect(throws: RecordingError(file: desc.path, line: 40, reason: .noEvents(
            "the file describes a device but holds no events (a description file is not a recording)"))) {
            try Recording.read(contentsOf: desc)
        }
        let header = try Self.temp("only.evtest", "Input device ID: bus 0x3 vendor 0x1 product 0x2 version 0x1\nInput device name: \"x\"\n")
        defer { try? FileManager.default.removeItem(at: header) }
        #expect(throws: RecordingError.self) { try Recording.read(contentsOf: header) }
    }
}
