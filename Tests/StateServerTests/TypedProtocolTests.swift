import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import EvflowProtocol

// The typed protocol both sides share (EvflowProtocol): what the server's MessageWriter
// encodes, ServerMessage decodes back to the same values; what a client encodes as a
// Request, the server's parser reads back as the same Request.

private func decodeAll(_ bytes: [UInt8]) throws -> [ServerMessage] {
    try bytes.split(separator: UInt8(ascii: "\n")).map { try ServerMessage.decode($0) }
}

private let kb: DeviceInfo = {
    var info = DeviceInfo(name: "Test \"Keyboard\"\n", inputID: InputID(bustype: 3, vendor: 0x1234, product: 1, version: 0xab41),
                          phys: "usb-1/input0", devnode: "/dev/input/event5", classes: [.keyboard, .key])
    info.capabilities = [EventType.key: [30, 31, 767], EventType.led: [0, 1], EventType.abs: [0]]
    info.absInfo = [0: AbsInfo(value: 5, minimum: -10, maximum: 1000, fuzz: 1, flat: 2, resolution: 3)]
    info.inputProperties = [1]
    info.properties = ["ID_INPUT_KEYBOARD": "1"]
    return info
}()

@Suite(.ownLiveResources) struct TypedProtocolTests {
    @Test func everyServerMessageDecodesToWhatWasEncoded() throws {
        var w = MessageWriter()
        var summary = kb
        summary.capabilities = [:]; summary.absInfo = [:]; summary.inputProperties = []; summary.properties = [:]
        let report = DeviceStateReport(device: kb, keysDown: [30, 767], abs: [0: -3], switches: [:], leds: [0: 1, 1: 0],
                                       lastEventTime: 81_234_567_890_123,
                                       counters: DeviceCounters(framesIn: 5, eventsIn: 9, framesOut: 4, eventsOut: 7,
                                                                synDropped: 1, droppedByFilter: ["key-debounce": 2],
                                                                chatterByKey: [30: 2, 0x100: 5]))
        var stats = ServerStats(release: "0.1.0", uptime: 12.25, now: 99, devices: 1, clients: 2, watchers: 1,
                                liveResources: 57, droppedByFilter: ["key-debounce": 2],
                                closed: Dictionary(uniqueKeysWithValues: CloseReason.allCases.map { ($0, 1) }),
                                clientList: [ClientStats(client: 7, pid: 4242, uid: 1000, tag: .string("panel"),
                                                         stream: .raw, sent: 3, dropped: 1, buffered: 10),
                                             ClientStats(client: 8)])
        stats.deviceDropped = [kb.id: ["key-debounce": 2]]
        let watch = WatchRequest(devices: [.deviceClass(.keyboard), .id(kb.id), .name("Some Mouse")],
                                 events: EventSelection(types: [1], codes: [EventCode(type: 1, code: 0x2e8), EventCode(type: 2, code: 8)]),
                                 stream: .raw, maxRate: 60.5)
        let frame = InputFrame(time: 100, events: [InputEvent(time: 100, type: 1, code: 30, value: 1),
                                                   InputEvent(time: 90, type: 1, code: 767, value: 0)])
        let error = ProtocolError(.unknownEventType("EV_KYE", field: "types"), requestClass: "WATCH", tag: .integer(-3))

        w.appendVersion(release: "0.1.0", keys: .hidden)
        w.appendDevices([summary], tag: .integer(1))
        w.appendState(report, tag: .string("s"))
        w.appendStats(stats)
        w.appendWatch(watch, matched: [kb.id], tag: .string("panel"))
        w.appendUnwatch()
        w.appendPing(now: 17, tag: .integer(17))
        w.appendError(error)
        w.appendClose(reason: .idle, message: "no request")
        w.appendFrame(device: kb.id, stream: .filtered, frame: frame)
        w.appendDeviceNotice(.added(summary))
        w.appendDeviceNotice(.inaccessible(summary, reason: "permission denied"))

        let decoded = try decodeAll(w.bytes)
        #expect(decoded == [
            .version(release: "0.1.0", protoMajor: ProtocolConstants.protoMajor, protoMinor: ProtocolConstants.protoMinor,
                     keys: .hidden),
            .devices([summary], tag: .integer(1)),
            .state(report, tag: .string("s")),
            .stats(stats, tag: nil),
            .watch(watch, matched: [kb.id], tag: .string("panel")),
            .unwatch(tag: nil),
            .ping(now: 17, tag: .integer(17)),
            .error(ErrorReply(error)),
            .close(CloseNotice(reason: .idle, message: "no request")),
            .frame(FrameMessage(device: kb.id, stream: .filtered, frame: frame)),
            .device(.added(summary)),
            .device(.inaccessible(summary, reason: "permission denied")),
        ])
    }

    @Test func unknownClassesAndMembersAreIgnored() throws {
        #expect(try ServerMessage.decode(#"{"class":"NEWS","x":1}"#) == .other(class: "NEWS"))
        #expect(try ServerMessage.decode(#"{"class":"PING","now":5,"extra":[1]}"#) == .ping(now: 5, tag: nil))
        #expect(throws: DecodingFailure.self) { try ServerMessage.decode(#"{"class":"PING"}"#) }
        #expect(throws: DecodingFailure.self) { try ServerMessage.decode("[1]") }
    }

    @Test("a member's failures name it: absent or null where required is missing, another type is bad; null where optional is absent; an integer is a number")
    func memberFailuresNameTheMember() throws {
        func failure(_ line: String) -> String? {
            (#expect(throws: DecodingFailure.self) { try ServerMessage.decode(line) })?.description
        }
        #expect(failure(#"{"class":"PING"}"#) == "PING: missing member 'now'")
        #expect(failure(#"{"class":"PING","now":null}"#) == "PING: missing member 'now'")
        #expect(failure(#"{"class":"PING","now":"5"}"#) == "PING: bad member 'now'")
        #expect(failure(#"{"class":"METRICS","text":1,"format":"f"}"#) == "METRICS: bad member 'text'")
        #expect(failure(#"{"class":"ERROR","message":"m","field":7}"#) == "ERROR: bad member 'field'")
        #expect(try ServerMessage.decode(#"{"class":"ERROR","message":"m","field":null}"#)
            == .error(ErrorReply(message: "m", requestClass: nil, field: nil, tag: nil)))
        #expect(failure(#"{"class":"DEVICES","devices":{}}"#) == "DEVICES: bad member 'devices'")
    }

    @Test func requestsEncodeToLinesTheServerParsesBackToTheSameRequest() throws {
        let requests: [Request] = [
            Request(.devices), Request(.stats, tag: .integer(4)), Request(.unwatch), Request(.ping, tag: .string("p")),
            Request(.state(device: "Test \"Keyboard\"\n"), tag: .string("x")),
            Request(.watch(WatchRequest())),
            Request(.watch(WatchRequest(devices: [.deviceClass(.mouse), .id(kb.id), .name("Pad")],
                                        events: EventSelection(types: [1, 2, 31], codes: [EventCode(type: 1, code: 0x2e8),
                                                                                          EventCode(type: 3, code: 0)]),
                                        stream: .raw, maxRate: 0.25)), tag: .integer(-1)),
        ]
        for r in requests {
            var line = r.encoded()
            #expect(line.last == UInt8(ascii: "\n"))
            line.removeLast()
            #expect(try Request.parse(line[...]) == r)
        }
        #expect(String(decoding: Request(.state(device: "kb"), tag: .integer(1)).encoded(), as: UTF8.self)
                == #"{"class":"STATE","device":"kb","id":1}"# + "\n")
    }

    @Test func aParsedRequestReencodesToItsNormalForm() throws {
        let line = #"{"id":"t","class":"WATCH","types":[1,"EV_REL",1],"codes":["KEY_A","EV_KEY:0x2e8","1:30"],"max_rate":60,"devices":["keyboard","keyboard"]}"#
        let r = try Request.parse(line)
        let normal = String(decoding: r.encoded(), as: UTF8.self)
        #expect(normal == #"{"class":"WATCH","devices":["keyboard"],"types":["EV_KEY","EV_REL"],"codes":["KEY_A","EV_KEY:0x2e8"],"stream":"filtered","max_rate":60,"id":"t"}"# + "\n")
        #expect(try Request.parse(Array(normal.utf8.dropLast())[...]) == r)
    }

    @Test func aClientBuildsAWatchWithTheServersChecks() throws {
        let w = try WatchRequest.checked(devices: ["keyboard"], types: ["EV_KEY", "2"], codes: ["BTN_LEFT"], stream: .raw, maxRate: 5)
        #expect(w.devices == [.deviceClass(.keyboard)])
        #expect(w.events.types == [1, 2])
        #expect(w.stream == .raw && w.maxRate == 5)
        #expect(throws: ProtocolError(.unknownEventType("EV_KYE", field: "types"), requestClass: "WATCH")) {
            try WatchRequest.checked(types: ["EV_KYE"])
        }
        #expect(throws: ProtocolError(.invalidMaxRate, requestClass: "WATCH")) { try WatchRequest.checked(maxRate: 0) }
    }

    /// The FRAME encoders the P1 benchmark row compares carry the same message (JSONEncoder
    /// does not keep the members in the wire's order — `class` first — so the bytes differ).
    @Test func codableFrameEncodingCarriesWhatTheHandWrittenOneDoes() throws {
        let frame = InputFrame(time: 81_234_567_890_123, events: [
            InputEvent(time: 81_234_567_890_123, type: 2, code: 0, value: -3),
            InputEvent(time: 81_234_567_890_123, type: 2, code: 1, value: 7),
            InputEvent(time: 81_234_567_880_000, type: 1, code: 0x110, value: 1),
            InputEvent(time: 81_234_567_890_123, type: 0x15, code: 767, value: 0),
        ])
        let message = FrameMessage(device: kb.id, stream: .raw, frame: frame)
        var w = MessageWriter()
        w.appendFrame(device: kb.id, stream: .raw, frame: frame)
        let codable = try JSONEncoder().encode(message)
        #expect(try ServerMessage.decode(Array(codable)) == .frame(message))
        #expect(try decodeAll(w.bytes) == [.frame(message)])
        #expect(try JSONDecoder().decode(FrameMessage.self, from: Data(w.bytes.dropLast())) == message)
    }
}

/// The server message classes docs/protocol.md documents (its `### CLASS —` headings, and
/// the greeting), from the file in this checkout.
private func documentedServerClasses() throws -> Set<String> {
    let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    let text = try String(contentsOf: root.appendingPathComponent("docs/protocol.md"), encoding: .utf8)
    var classes: Set<String> = ["VERSION"]
    for line in text.split(separator: "\n") where line.hasPrefix("### ") {
        if let name = line.dropFirst(4).split(separator: " ").first { classes.insert(String(name)) }
    }
    return classes
}

@Suite(.ownLiveResources) struct ProtocolDocumentationTests {
    /// Regression: docs/protocol.md documented an `EVENT` message that the server never sent
    /// (every event reaches a watcher inside a FRAME). The documented classes are now exactly
    /// the ones the writer has — and the decoder knows.
    @Test func theDocumentedServerMessagesAreTheOnesTheServerWrites() throws {
        var w = MessageWriter()
        let info = DeviceInfo(name: "d", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 3))
        w.appendVersion(release: "r", keys: .visible)
        w.appendDevices([])
        w.appendState(DeviceStateReport(device: info))
        w.appendStats(ServerStats(release: "r", uptime: 0, now: 0, devices: 0, clients: 0, watchers: 0, liveResources: 0))
        w.appendWatch(WatchRequest(), matched: [])
        w.appendUnwatch()
        w.appendPing(now: 0)
        w.appendMetrics("")
        w.appendLatency(LatencyReport(clock: .replay))
        w.appendError(ProtocolError(.notJSON))
        w.appendClose(reason: .idle, message: "")
        w.appendFrame(device: info.id, stream: .raw, frame: InputFrame(time: 0, events: [InputEvent(time: 0, type: 1, code: 30, value: 1)]))
        w.appendDeviceNotice(.added(info))
        w.appendGesture(device: info.id, GestureEvent(time: 0, code: 30, gesture: .double, count: 2))
        w.appendAccessibility(AccessibilityReport(device: info.id, bounceKeys: 0, slowKeys: 0, live: [], keys: false))
        w.appendBattery(device: info.id, DeviceBattery(percent: 50, status: .discharging, supply: "hid-x-battery"))
        let written = try decodeAll(w.bytes).map(\.messageClass)
        #expect(!written.contains("other"))
        #expect(Set(written) == (try documentedServerClasses()))
    }

    /// Both ends name classes from one table (`MessageClass`): a request's class is the class
    /// of the response the server writes for it.
    @Test func aRequestsClassIsTheClassOfItsResponse() throws {
        let info = DeviceInfo(name: "d", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 3))
        var w = MessageWriter()
        w.appendDevices([])
        w.appendState(DeviceStateReport(device: info))
        w.appendStats(ServerStats(release: "r", uptime: 0, now: 0, devices: 0, clients: 0, watchers: 0, liveResources: 0))
        w.appendWatch(WatchRequest(), matched: [])
        w.appendUnwatch()
        w.appendPing(now: 0)
        w.appendMetrics("")
        w.appendLatency(LatencyReport(clock: .replay))
        let requests: [Request.Kind] = [.devices, .state(device: "d"), .stats, .watch(WatchRequest()), .unwatch, .ping,
                                        .metrics, .latency]
        #expect(try decodeAll(w.bytes).map(\.wireClass) == requests.map { Request($0).wireClass })
        #expect(try decodeAll(w.bytes).map(\.messageClass) == requests.map { Request($0).requestClass })
    }
}

/// Protocol 1.3 (issue #21): a device's `output` in DEVICES and STATE, `device_output` in STATS.
@Suite(.ownLiveResources) struct OutputProtocolTests {
    @Test("output (mode, virtual_node, grab, reason) and device_output decode to what was encoded; an observed device's output is just mode and grab")
    func outputRoundTrip() throws {
        var grabbed = kb
        grabbed.capabilities = [:]; grabbed.absInfo = [:]; grabbed.inputProperties = []; grabbed.properties = [:]
        grabbed.output = DeviceOutputStatus(mode: .virtual, virtualNode: "/dev/input/event9", grab: .grabbed)
        var busy = grabbed
        busy.name = "Other"
        busy.id = DeviceID(rawValue: "0003:1234:0002-00000000")
        busy.output = DeviceOutputStatus(mode: .virtual, reason: "not grabbed: another program holds a grab (EBUSY)")
        var observed = busy
        observed.id = DeviceID(rawValue: "0003:1234:0003-00000000")
        observed.output = .observed
        var stats = ServerStats(release: "0.1.0", uptime: 1, now: 2, devices: 3, clients: 0, watchers: 0, liveResources: 0,
                                closed: Dictionary(uniqueKeysWithValues: CloseReason.allCases.map { ($0, 0) }))
        stats.deviceOutput = [grabbed.id: DeviceOutputCounters(framesWritten: 1234, writeErrors: 1)]
        var full = kb
        full.output = grabbed.output
        let report = DeviceStateReport(device: full)

        var w = MessageWriter()
        w.appendDevices([grabbed, busy, observed])
        w.appendState(report)
        w.appendStats(stats)
        let lines = w.bytes.split(separator: UInt8(ascii: "\n")).map { String(decoding: $0, as: UTF8.self) }
        #expect(lines[0].contains(#""output":{"mode":"virtual","virtual_node":"/dev/input/event9","grab":"grabbed"}"#))
        #expect(lines[0].contains(#""output":{"mode":"virtual","grab":"none","reason":"not grabbed: another program holds a grab (EBUSY)"}"#))
        #expect(lines[0].contains(#""output":{"mode":"observe","grab":"none"}"#))
        #expect(lines[2].contains(#""device_output":{"\#(grabbed.id.rawValue)":{"frames_written":1234,"write_errors":1}}"#))
        #expect(try decodeAll(w.bytes) == [.devices([grabbed, busy, observed].sorted { $0.id < $1.id }, tag: nil),
                                           .state(report, tag: nil), .stats(stats, tag: nil)])
    }

    @Test("a 1.2 server's DEVICES (no output) decodes with output nil; an unknown mode or grab is a bad member")
    func olderAndBadOutput() throws {
        let line = #"{"class":"DEVICES","devices":[{"id":"x","name":"n","bus":"0003","vendor":"0001","product":"0002","version":"0001","classes":[]}]}"#
        guard case .devices(let list, _, _) = try ServerMessage.decode(line) else { Issue.record("not DEVICES"); return }
        #expect(list.first?.output == nil)
        let bad = #"{"class":"DEVICES","devices":[{"id":"x","name":"n","bus":"0003","vendor":"0001","product":"0002","version":"0001","classes":[],"output":{"mode":"mirror","grab":"none"}}]}"#
        #expect(throws: DecodingFailure.self) { try ServerMessage.decode(bad) }
    }
}
