import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import EvflowProtocol
@testable import StateServer

// Tests of the wire protocol codec (docs/protocol.md): request parsing and every error,
// the server message encoders and their escaping, and the line framer's limits.

/// A small name table so name handling is tested independently of libevdev's tables.
private let testNaming: EventNaming = {
    let types: [String: UInt16] = ["EV_SYN": 0, "EV_KEY": 1, "EV_REL": 2, "EV_ABS": 3, "EV_SW": 5, "EV_LED": 0x11]
    let codes: [String: EventCode] = [
        "SYN_REPORT": EventCode(type: 0, code: 0), "SYN_DROPPED": EventCode(type: 0, code: 3),
        "KEY_A": EventCode(type: 1, code: 30), "KEY_LEFTSHIFT": EventCode(type: 1, code: 42),
        "BTN_LEFT": EventCode(type: 1, code: 0x110),
        "REL_X": EventCode(type: 2, code: 0), "REL_Y": EventCode(type: 2, code: 1),
        "REL_WHEEL": EventCode(type: 2, code: 8),
        "ABS_X": EventCode(type: 3, code: 0), "ABS_Y": EventCode(type: 3, code: 1),
        "SW_LID": EventCode(type: 5, code: 0),
        "LED_NUML": EventCode(type: 0x11, code: 0), "LED_CAPSL": EventCode(type: 0x11, code: 1),
    ]
    let maxima: [UInt16: Int] = [0: 0xf, 1: 0x2ff, 2: 0xf, 3: 0x3f, 5: 0x10, 0x11: 0xf]
    let typeNames = Dictionary(uniqueKeysWithValues: types.map { ($0.value, $0.key) })
    let codeNames = Dictionary(uniqueKeysWithValues: codes.map { ($0.value, $0.key) })
    return EventNaming(
        typeName: { typeNames[$0] },
        codeName: { codeNames[EventCode(type: $0, code: $1)] },
        typeNumber: { types[$0] },
        codeNumber: { codes[$0] },
        maxCode: { maxima[$0] ?? 0x2ff },
        propertyName: { $0 == 0 ? "INPUT_PROP_POINTER" : nil })
}()

private let testNames = EventNameCache(testNaming)

private func parse(_ line: String) throws(ProtocolError) -> Request {
    try Request.parse(line, naming: testNaming)
}

/// The error a line produces, or nil if it parses.
private func parseError(_ line: String) -> ProtocolError? {
    do {
        _ = try parse(line)
        return nil
    } catch {
        return error
    }
}

/// The lines of a writer's output, each decoded as a JSON object.
private func decodedLines(_ bytes: [UInt8]) throws -> [[String: Any]] {
    #expect(bytes.last == UInt8(ascii: "\n"), "every message ends with a newline")
    return try bytes.split(separator: UInt8(ascii: "\n")).map { line in
        let object = try JSONSerialization.jsonObject(with: Data(line))
        return try #require(object as? [String: Any])
    }
}

private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

private let keyboard = DeviceInfo(
    name: "AT Translated Set 2 keyboard",
    inputID: InputID(bustype: 0x11, vendor: 1, product: 1, version: 0xab41),
    phys: "isa0060/serio0/input0", devnode: "/dev/input/event0", classes: [.keyboard, .key],
    properties: ["ID_INPUT_KEYBOARD": "1"],
    capabilities: [1: [30, 42, 767], 0x11: [0, 1]])
private let mouse = DeviceInfo(
    name: "Logitech \"MX\" Mouse", inputID: InputID(bustype: 3, vendor: 0x046d, product: 0xc52b, version: 0x111),
    classes: [.mouse], capabilities: [1: [0x110], 2: [0, 1, 8], 3: [0]],
    absInfo: [0: AbsInfo(value: 5, minimum: 0, maximum: 1023, fuzz: 4, flat: 0, resolution: 12)],
    inputProperties: [0, 5])

// MARK: - Requests

@Suite(.ownLiveResources) struct RequestParsingTests {
    @Test func simpleRequests() throws {
        #expect(try parse(#"{"class":"DEVICES"}"#) == Request(.devices))
        #expect(try parse(#"{"class":"STATS"}"#) == Request(.stats))
        #expect(try parse(#"{"class":"UNWATCH"}"#) == Request(.unwatch))
        #expect(try parse(#"{"class":"PING"}"#) == Request(.ping))
        #expect(try parse(#"  { "class" : "PING" }  "#) == Request(.ping))
        #expect(try parse(#"{"class":"STATE","device":"0011:0001:0001-5e1c0a72"}"#)
                == Request(.state(device: "0011:0001:0001-5e1c0a72")))
        #expect(try parse(#"{"class":"STATE","device":"AT Translated Set 2 keyboard"}"#).kind
                == .state(device: "AT Translated Set 2 keyboard"))
    }

    @Test func requestClassNames() throws {
        let lines = [#"{"class":"DEVICES"}"#, #"{"class":"STATE","device":"x"}"#, #"{"class":"STATS"}"#,
                     #"{"class":"WATCH"}"#, #"{"class":"UNWATCH"}"#, #"{"class":"PING"}"#]
        #expect(try lines.map { try parse($0).requestClass } == ["DEVICES", "STATE", "STATS", "WATCH", "UNWATCH", "PING"])
    }

    @Test func tagsAreParsedForEveryClass() throws {
        #expect(try parse(#"{"class":"PING","id":17}"#).tag == .integer(17))
        #expect(try parse(#"{"class":"DEVICES","id":"a\"b"}"#).tag == .string("a\"b"))
        #expect(try parse(#"{"class":"STATS","id":-5}"#).tag == .integer(-5))
        #expect(try parse(#"{"class":"UNWATCH","id":null}"#).tag == nil)
        let longest = String(repeating: "é", count: 32)   // 64 UTF-8 bytes
        #expect(try parse(#"{"class":"PING","id":"\#(longest)"}"#).tag == .string(longest))
    }

    @Test func watchDefaults() throws {
        let r = try parse(#"{"class":"WATCH"}"#)
        #expect(r.kind == .watch(WatchRequest()))
        guard case .watch(let w) = r.kind else { return }
        #expect(w.events.isAll)
        #expect(w.stream == .filtered)
        #expect(w.maxRate == nil)
        #expect(w.selects(keyboard) && w.selects(mouse))
    }

    @Test func watchWithEverything() throws {
        let r = try parse(#"""
            {"class":"WATCH","devices":["keyboard","0003:046d:c52b-1a2b3c4d","My Pad","keyboard"],
             "types":["EV_REL",3],"codes":["KEY_A","EV_KEY:42","1:272","EV_SW:SW_LID"],
             "stream":"raw","max_rate":60,"id":"panel"}
            """#.replacingOccurrences(of: "\n", with: ""))
        #expect(r.tag == .string("panel"))
        guard case .watch(let w) = r.kind else { Issue.record("not a watch"); return }
        #expect(w.devices == [.deviceClass(.keyboard), .id(DeviceID(rawValue: "0003:046d:c52b-1a2b3c4d")), .name("My Pad")])
        #expect(w.events.types == [2, 3])
        #expect(w.events.codes == [EventCode(type: 1, code: 30), EventCode(type: 1, code: 42),
                                   EventCode(type: 1, code: 272), EventCode(type: 5, code: 0)])
        guard case .watch(let hex) = try parse(#"{"class":"WATCH","codes":["EV_KEY:0x1e","2:0x8"]}"#).kind else { return }
        #expect(hex.events.codes == [EventCode(type: 1, code: 30), EventCode(type: 2, code: 8)])
        #expect(w.stream == .raw)
        #expect(w.maxRate == 60)
    }

    @Test func fractionalRateAndNullOptionals() throws {
        guard case .watch(let w) = try parse(#"{"class":"WATCH","max_rate":0.5,"stream":null,"types":null}"#).kind
        else { Issue.record("not a watch"); return }
        #expect(w.maxRate == 0.5)
        #expect(w.stream == .filtered)
        #expect(w.events.isAll)
        guard case .watch(let w2) = try parse(#"{"class":"WATCH","max_rate":100000}"#).kind else { return }
        #expect(w2.maxRate == 100_000)
    }

    @Test func eventSelectionIsTheUnionOfTypesAndCodes() {
        let s = EventSelection(types: [2], codes: [EventCode(type: 1, code: 0x110)])
        #expect(s.matches(type: 2, code: 0))          // any EV_REL
        #expect(s.matches(type: 2, code: 8))
        #expect(s.matches(type: 1, code: 0x110))      // BTN_LEFT
        #expect(!s.matches(type: 1, code: 30))        // other keys
        #expect(!s.matches(type: 3, code: 0x110))     // same code number, other type
        #expect(!s.matches(type: 200, code: 0))       // bogus type
        #expect(EventSelection.all.matches(type: 5, code: 3))
        let onlyCodes = EventSelection(types: [], codes: [EventCode(type: 1, code: 30)])
        #expect(onlyCodes.matches(type: 1, code: 30) && !onlyCodes.matches(type: 1, code: 31))
    }

    @Test func deviceSelectors() {
        #expect(DeviceSelector(parsing: keyboard.id.rawValue) == .id(keyboard.id))
        #expect(DeviceSelector(parsing: "mouse") == .deviceClass(.mouse))
        #expect(DeviceSelector(parsing: "tablet_pad") == .deviceClass(.tabletPad))
        #expect(DeviceSelector(parsing: "0003:046D:C52B-1A2B3C4D") == .name("0003:046D:C52B-1A2B3C4D"))  // ids are lowercase
        #expect(DeviceSelector(parsing: "Mouse") == .name("Mouse"))
        #expect(DeviceSelector.id(keyboard.id).matches(keyboard) && !DeviceSelector.id(keyboard.id).matches(mouse))
        #expect(DeviceSelector.deviceClass(.key).matches(keyboard) && !DeviceSelector.deviceClass(.key).matches(mouse))
        #expect(DeviceSelector.name("Logitech \"MX\" Mouse").matches(mouse))
        let w = WatchRequest(devices: [.deviceClass(.mouse)])
        #expect(w.selects(mouse) && !w.selects(keyboard))
    }

    @Test func parsesFromByteSlices() throws {
        let bytes = Array(#"xx{"class":"PING","id":1}yy"#.utf8)
        #expect(try Request.parse(bytes[2..<(bytes.count - 2)], naming: testNaming) == Request(.ping, tag: .integer(1)))
    }

    @Test func blankLines() {
        #expect(Request.isBlank([][...]))
        #expect(Request.isBlank(Array(" \t  ".utf8)[...]))
        #expect(!Request.isBlank(Array(" {} ".utf8)[...]))
    }
}

// MARK: - Errors

@Suite(.ownLiveResources) struct RequestErrorTests {
    /// Asserts the error for `line`: kind, message, field and request class.
    private func expectError(_ line: String, _ kind: ProtocolError.Kind, message: String, field: String?,
                             requestClass: String? = nil, tag: RequestTag? = nil,
                             sourceLocation: SourceLocation = #_sourceLocation) {
        guard let e = parseError(line) else {
            Issue.record("\(line) parsed without error", sourceLocation: sourceLocation)
            return
        }
        #expect(e.kind == kind, sourceLocation: sourceLocation)
        #expect(e.message == message, sourceLocation: sourceLocation)
        #expect(e.field == field, sourceLocation: sourceLocation)
        #expect(e.requestClass == requestClass, sourceLocation: sourceLocation)
        #expect(e.tag == tag, sourceLocation: sourceLocation)
    }

    @Test func lineTooLong() throws {
        let pad = String(repeating: " ", count: 4096 - #"{"class":"PING"}"#.utf8.count)
        #expect(try parse(#"{"class":"PING"}"# + pad) == Request(.ping))   // exactly 4096: fine
        expectError(#"{"class":"PING"}"# + pad + " ", .lineTooLong(limit: 4096),
                    message: "request line longer than 4096 bytes", field: nil)
    }

    @Test func notJSON() throws {
        for line in [#"{"class":"#, "hello", "", #"{"class":"PING"} x"#, #"{'class':'PING'}"#] {
            expectError(line, .notJSON, message: "request is not valid JSON", field: nil)
        }
        let invalidUTF8: [UInt8] = Array(#"{"class":""#.utf8) + [0xff, 0xfe] + Array(#""}"#.utf8)
        #expect(throws: ProtocolError(.notJSON)) { try Request.parse(invalidUTF8[...], naming: testNaming) }
    }

    @Test func notAnObject() {
        for line in ["[1,2]", #""DEVICES""#, "42", "null", "true"] {
            expectError(line, .notAnObject, message: "request must be a JSON object", field: nil)
        }
    }

    @Test func classProblems() {
        expectError("{}", .missingField("class"), message: "missing field 'class'", field: "class")
        expectError(#"{"id":3}"#, .missingField("class"), message: "missing field 'class'", field: "class", tag: .integer(3))
        expectError(#"{"class":"FOO","id":"x"}"#, .unknownClass("FOO"), message: "unknown request class 'FOO'",
                    field: "class", tag: .string("x"))
        expectError(#"{"class":"FOO","id":true}"#, .unknownClass("FOO"), message: "unknown request class 'FOO'",
                    field: "class")
        expectError(#"{"class":5}"#, .wrongType(field: "class", expected: "a string"),
                    message: "field 'class' must be a string", field: "class")
        expectError(#"{"class":"FOO"}"#, .unknownClass("FOO"), message: "unknown request class 'FOO'", field: "class")
        expectError(#"{"class":"watch"}"#, .unknownClass("watch"), message: "unknown request class 'watch'", field: "class")
        for cls in ["VERSION", "FRAME", "DEVICE", "ERROR", "CLOSE", "SAMPLE", "SENSOR"] {
            expectError(#"{"class":"\#(cls)"}"#, .notARequest(cls), message: "'\(cls)' is not a request", field: "class")
        }
    }

    @Test func unknownFields() {
        expectError(#"{"class":"WATCH","type":["EV_KEY"],"id":"w"}"#, .unknownField("type"),
                    message: "unknown field 'type' for WATCH", field: "type", requestClass: "WATCH", tag: .string("w"))
        expectError(#"{"class":"DEVICES","device":"x"}"#, .unknownField("device"),
                    message: "unknown field 'device' for DEVICES", field: "device", requestClass: "DEVICES")
        // The first unknown member in name order is reported, so the reply does not depend on hashing.
        expectError(#"{"class":"PING","zz":1,"aa":2}"#, .unknownField("aa"),
                    message: "unknown field 'aa' for PING", field: "aa", requestClass: "PING")
    }

    @Test func stateDevice() {
        expectError(#"{"class":"STATE"}"#, .missingField("device"), message: "missing field 'device'",
                    field: "device", requestClass: "STATE")
        expectError(#"{"class":"STATE","device":null,"id":4}"#, .missingField("device"), message: "missing field 'device'",
                    field: "device", requestClass: "STATE", tag: .integer(4))
        expectError(#"{"class":"STATE","device":7}"#, .wrongType(field: "device", expected: "a string"),
                    message: "field 'device' must be a string", field: "device", requestClass: "STATE")
        expectError(#"{"class":"STATE","device":""}"#, .emptyValue(field: "device"),
                    message: "field 'device' must not be empty", field: "device", requestClass: "STATE")
    }

    @Test func tagProblems() {
        let message = "field 'id' must be a string of at most 64 bytes or an integer"
        for id in [#"{}"#, "true", "1.5", #"[1]"#, "\"" + String(repeating: "x", count: 65) + "\""] {
            expectError(#"{"class":"PING","id":\#(id)}"#, .invalidTag, message: message, field: "id", requestClass: "PING")
        }
    }

    @Test func watchDevices() {
        let expected = "an array of strings"
        expectError(#"{"class":"WATCH","devices":"keyboard"}"#, .wrongType(field: "devices", expected: expected),
                    message: "field 'devices' must be an array of strings", field: "devices", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","devices":["keyboard",3]}"#, .wrongType(field: "devices", expected: expected),
                    message: "field 'devices' must be an array of strings", field: "devices", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","devices":[""]}"#, .emptyValue(field: "devices"),
                    message: "field 'devices' must not be empty", field: "devices", requestClass: "WATCH")
    }

    @Test func watchTypes() {
        let wrong = "field 'types' must be an array of strings or integers"
        for v in [#""EV_KEY""#, "[true]", "[1.5]", "[[1]]", "{}"] {
            expectError(#"{"class":"WATCH","types":\#(v)}"#,
                        .wrongType(field: "types", expected: "an array of strings or integers"),
                        message: wrong, field: "types", requestClass: "WATCH")
        }
        expectError(#"{"class":"WATCH","types":["EV_KYE"],"id":"panel"}"#, .unknownEventType("EV_KYE", field: "types"),
                    message: "unknown event type 'EV_KYE'", field: "types", requestClass: "WATCH", tag: .string("panel"))
        expectError(#"{"class":"WATCH","types":["KEY_A"]}"#, .unknownEventType("KEY_A", field: "types"),
                    message: "unknown event type 'KEY_A'", field: "types", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","types":[""]}"#, .emptyValue(field: "types"),
                    message: "field 'types' must not be empty", field: "types", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","types":[32]}"#, .eventTypeOutOfRange(32, field: "types"),
                    message: "event type 32 is out of range 0...31", field: "types", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","types":[-1]}"#, .eventTypeOutOfRange(-1, field: "types"),
                    message: "event type -1 is out of range 0...31", field: "types", requestClass: "WATCH")
    }

    @Test func watchCodes() {
        let wrong = "field 'codes' must be an array of strings"
        expectError(#"{"class":"WATCH","codes":[30]}"#, .wrongType(field: "codes", expected: "an array of strings"),
                    message: wrong, field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":"KEY_A"}"#, .wrongType(field: "codes", expected: "an array of strings"),
                    message: wrong, field: "codes", requestClass: "WATCH")
        for bad in ["KEY_QQ", "EV_REL:KEY_A", "EV_KEY:", ":30", "EV_KEY:KEY_QQ", "EV_KEY:99999999999999999999",
                    "EV_KEY:0x", "EV_KEY:0xzz", "EV_KEY:1e3"] {
            expectError(#"{"class":"WATCH","codes":["\#(bad)"]}"#, .unknownEventCode(bad, field: "codes"),
                        message: "unknown event code '\(bad)'", field: "codes", requestClass: "WATCH")
        }
        expectError(#"{"class":"WATCH","codes":["EV_KEY:768"]}"#,
                    .eventCodeOutOfRange(768, type: "EV_KEY", max: 0x2ff, field: "codes"),
                    message: "event code 768 is out of range 0...767 for EV_KEY", field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":["2:-1"]}"#,
                    .eventCodeOutOfRange(-1, type: "EV_REL", max: 15, field: "codes"),
                    message: "event code -1 is out of range 0...15 for EV_REL", field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":["EV_KEY:0x300"]}"#,
                    .eventCodeOutOfRange(768, type: "EV_KEY", max: 0x2ff, field: "codes"),
                    message: "event code 768 is out of range 0...767 for EV_KEY", field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":["40:1"]}"#, .eventTypeOutOfRange(40, field: "codes"),
                    message: "event type 40 is out of range 0...31", field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":["EV_KYE:1"]}"#, .unknownEventType("EV_KYE", field: "codes"),
                    message: "unknown event type 'EV_KYE'", field: "codes", requestClass: "WATCH")
        expectError(#"{"class":"WATCH","codes":[""]}"#, .emptyValue(field: "codes"),
                    message: "field 'codes' must not be empty", field: "codes", requestClass: "WATCH")
    }

    @Test func watchStream() {
        for v in [#""both""#, #""RAW""#, "1", "true"] {
            expectError(#"{"class":"WATCH","stream":\#(v)}"#, .invalidStream,
                        message: #"field 'stream' must be "filtered", "raw" or "gestures""#, field: "stream", requestClass: "WATCH")
        }
    }

    @Test func watchMaxRate() {
        for v in ["0", "-1", "100000.5", "1e300", "true", #""60""#, "[60]"] {
            expectError(#"{"class":"WATCH","max_rate":\#(v)}"#, .invalidMaxRate,
                        message: "field 'max_rate' must be a number greater than 0 and at most 100000",
                        field: "max_rate", requestClass: "WATCH")
        }
    }

    @Test func serverSideDeviceErrors() {
        let unknown = ProtocolError(.unknownDevice("nope"), requestClass: "STATE", tag: .integer(2))
        #expect(unknown.message == "no device 'nope'")
        #expect(unknown.field == "device")
        let ambiguous = ProtocolError(.ambiguousDevice("USB Keyboard"), requestClass: "STATE")
        #expect(ambiguous.message == "several devices are named 'USB Keyboard'; use the id")
        #expect(ambiguous.field == "device")
    }

    /// A bad WATCH must not be half-applied: the parser returns nothing at all on error.
    @Test func errorsCarryNoPartialRequest() {
        #expect(throws: ProtocolError.self) {
            try parse(#"{"class":"WATCH","devices":["keyboard"],"types":["EV_KEY"],"stream":"both"}"#)
        }
    }
}

// MARK: - Encoders

@Suite(.ownLiveResources) struct MessageWriterTests {
    @Test func version() throws {
        var w = MessageWriter(names: testNames)
        w.appendVersion(release: "0.1.0", keys: .visible)
        #expect(text(w.bytes) == #"{"class":"VERSION","release":"0.1.0","proto_major":1,"proto_minor":8,"keys":"visible"}"# + "\n")
    }

    @Test func frameExactBytes() {
        var w = MessageWriter(names: testNames)
        let frame = InputFrame(time: 5_123_400_000_000, events: [
            InputEvent(time: 5_123_400_000_000, type: 1, code: 30, value: 1),
            InputEvent(time: 5_123_400_000_000, type: 2, code: 0, value: -3),
        ])
        let written = w.appendFrame(device: keyboard.id, stream: .filtered, frame: frame)
        #expect(written)
        #expect(text(w.bytes) == #"{"class":"FRAME","device":"\#(keyboard.id.rawValue)","time":5123400000000,"stream":"filtered","events":[{"type":"EV_KEY","code":"KEY_A","value":1},{"type":"EV_REL","code":"REL_X","value":-3}]}"# + "\n")
    }

    @Test func frameSelectionAndOwnEventTimes() throws {
        var w = MessageWriter(names: testNames)
        let frame = InputFrame(time: 100, events: [
            InputEvent(time: 100, type: 2, code: 0, value: 4),
            InputEvent(time: 100, type: 1, code: 0x110, value: 1),
            InputEvent(time: 90, type: 1, code: 30, value: 0),
        ])
        let selection = EventSelection(types: [], codes: [EventCode(type: 1, code: 0x110), EventCode(type: 1, code: 30)])
        let written = w.appendFrame(device: mouse.id, stream: .raw, frame: frame, selection: selection)
        #expect(written)
        let m = try #require(try decodedLines(w.bytes).first)
        let events = try #require(m["events"] as? [[String: Any]])
        #expect(events.count == 2)
        #expect(events[0]["code"] as? String == "BTN_LEFT" && events[0]["time"] == nil)
        #expect(events[1]["code"] as? String == "KEY_A" && events[1]["time"] as? Int == 90)
        #expect(m["stream"] as? String == "raw")
    }

    @Test func frameWithNothingSelectedWritesNothing() throws {
        var w = MessageWriter(names: testNames)
        w.appendUnwatch()
        let before = w.bytes
        let frame = InputFrame(time: 1, events: [InputEvent(time: 1, type: 2, code: 0, value: 1)])
        let filteredOut = w.appendFrame(device: mouse.id, stream: .filtered, frame: frame,
                                        selection: EventSelection(types: [1], codes: []))
        #expect(!filteredOut)
        #expect(w.bytes == before)
        let emptyFrame = w.appendFrame(device: mouse.id, stream: .filtered, frame: InputFrame(time: 1, events: []))
        #expect(!emptyFrame)
        // The writer is still at top level: the next message is a clean line.
        w.appendPing(now: 5)
        #expect(try decodedLines(w.bytes).map { $0["class"] as? String } == ["UNWATCH", "PING"])
    }

    @Test func unnamedTypesAndCodesAreNumbers() throws {
        var w = MessageWriter(names: testNames)
        let frame = InputFrame(time: 7, events: [InputEvent(time: 7, type: 1, code: 767, value: 1),
                                                 InputEvent(time: 7, type: 0x15, code: 3, value: 9)])
        w.appendFrame(device: keyboard.id, stream: .filtered, frame: frame)
        #expect(text(w.bytes).contains(#"{"type":"EV_KEY","code":767,"value":1},{"type":21,"code":3,"value":9}"#))
        var numeric = MessageWriter(names: EventNameCache(.numeric))
        numeric.appendFrame(device: keyboard.id, stream: .raw, frame: InputFrame(time: 3, events: [InputEvent(time: 3, type: 1, code: 30, value: 2)]))
        #expect(text(numeric.bytes) == #"{"class":"FRAME","device":"\#(keyboard.id.rawValue)","time":3,"stream":"raw","events":[{"type":1,"code":30,"value":2}]}"# + "\n")
    }

    @Test func devicesAreSortedSummaries() throws {
        var w = MessageWriter(names: testNames)
        w.appendDevices([mouse, keyboard], tag: .integer(9))
        let m = try #require(try decodedLines(w.bytes).first)
        #expect(m["id"] as? Int == 9)
        let list = try #require(m["devices"] as? [[String: Any]])
        #expect(list.map { $0["id"] as? String } == [keyboard.id, mouse.id].sorted().map(\.rawValue))
        let kb = try #require(list.first { $0["id"] as? String == keyboard.id.rawValue })
        let ms = try #require(list.first { $0["id"] as? String == mouse.id.rawValue })
        #expect(kb["name"] as? String == "AT Translated Set 2 keyboard")
        #expect(kb["bus"] as? String == "0011" && kb["vendor"] as? String == "0001" && kb["version"] as? String == "ab41")
        #expect(kb["classes"] as? [String] == ["key", "keyboard"])
        #expect(kb["devnode"] as? String == "/dev/input/event0")
        #expect(kb["capabilities"] == nil, "summaries leave capabilities out")
        #expect(ms["phys"] == nil && ms["devnode"] == nil, "absent members are left out, not null")
        #expect(ms["name"] as? String == "Logitech \"MX\" Mouse")
    }

    @Test func state() throws {
        var w = MessageWriter(names: testNames)
        let report = DeviceStateReport(
            device: mouse, keysDown: [0x110, 30], abs: [1: -4, 0: 512], switches: [0: 1], leds: [1: 0, 0: 1],
            lastEventTime: 81_234_567_890_123,
            counters: DeviceCounters(framesIn: 1520, eventsIn: 4012, framesOut: 1388, eventsOut: 3702, synDropped: 2,
                                     droppedByFilter: ["key-debounce": 310, "abs-hysteresis": 4]))
        w.appendState(report, tag: .string("s"))
        let line = text(w.bytes)
        #expect(line.contains(#""keys_down":["KEY_A","BTN_LEFT"],"abs":{"ABS_X":512,"ABS_Y":-4},"switches":{"SW_LID":1},"leds":{"LED_NUML":1,"LED_CAPSL":0},"last_event":81234567890123"#))
        #expect(line.contains(#""counters":{"frames_in":1520,"events_in":4012,"frames_out":1388,"events_out":3702,"syn_dropped":2,"msc_dropped":0,"dropped":{"abs-hysteresis":4,"key-debounce":310}}"#))
        let m = try #require(try decodedLines(w.bytes).first)
        #expect(m["id"] as? String == "s")
        let device = try #require(m["device"] as? [String: Any])
        let caps = try #require(device["capabilities"] as? [String: [Any]])
        #expect(caps["EV_KEY"] as? [String] == ["BTN_LEFT"])
        #expect(caps["EV_REL"] as? [String] == ["REL_X", "REL_Y", "REL_WHEEL"])
        let absX = try #require((device["abs_info"] as? [String: [String: Int]])?["ABS_X"])
        #expect(absX == ["value": 5, "min": 0, "max": 1023, "fuzz": 4, "flat": 0, "resolution": 12])
        #expect(device["props"] as? [AnyHashable] == ["INPUT_PROP_POINTER", 5])
        #expect((device["udev"] as? [String: String])?.isEmpty == true)
        var empty = MessageWriter(names: testNames)
        empty.appendState(DeviceStateReport(device: keyboard))
        let e = try #require(try decodedLines(empty.bytes).first)
        #expect(e["last_event"] == nil)
        #expect((e["keys_down"] as? [Any])?.isEmpty == true && (e["abs"] as? [String: Any])?.isEmpty == true)
        #expect(((e["device"] as? [String: Any])?["capabilities"] as? [String: [Any]])?["EV_LED"] as? [String]
                == ["LED_NUML", "LED_CAPSL"])
    }

    @Test func stats() throws {
        var w = MessageWriter(names: testNames)
        let stats = ServerStats(
            release: "0.1.0", uptime: 3600.25, now: 81_234_567_890_123, devices: 3, clients: 2, watchers: 1,
            liveResources: 57, droppedByFilter: ["key-debounce": 310], closed: [.slowConsumer: 1, .notPermitted: 2],
            clientList: [ClientStats(client: 8), ClientStats(client: 7, pid: 4242, uid: 1000, tag: .string("evflowctl"),
                                                              stream: .filtered, sent: 1830, dropped: 12, buffered: 17)])
        w.appendStats(stats)
        let line = text(w.bytes)
        #expect(line.hasPrefix(#"{"class":"STATS","release":"0.1.0","uptime":3600.25,"now":81234567890123,"devices":3,"clients":2,"watchers":1,"live_resources":57,"dropped":{"key-debounce":310},"closed":{"slow-consumer":1,"idle":0,"too-many-clients":0,"not-permitted":2,"shutdown":0},"client_list":[{"client":7,"pid":4242,"uid":1000,"id":"evflowctl","watching":true,"stream":"filtered","sent":1830,"dropped":12,"buffered":17},{"client":8,"watching":false,"sent":0,"dropped":0,"buffered":0}]}"#))
        _ = try decodedLines(w.bytes)

        // Keys whose spurious-release debounce turned on: listed per device, after device_dropped.
        var s2 = stats
        s2.spuriousRelease = [keyboard.id: ["BTN_LEFT", "KEY_A"]]
        var w2 = MessageWriter(names: testNames)
        w2.appendStats(s2)
        let decoded = try #require(try decodedLines(w2.bytes).first)
        #expect((decoded["spurious_release"] as? [String: [String]]) == [keyboard.id.rawValue: ["BTN_LEFT", "KEY_A"]])
    }

    @Test func watchResponseIsNormalised() throws {
        var w = MessageWriter(names: testNames)
        let request = try parse(#"{"class":"WATCH","devices":["keyboard","Pad"],"types":[3,"EV_REL"],"codes":["1:30","EV_KEY:767"],"max_rate":60,"id":"panel"}"#)
        guard case .watch(let watch) = request.kind else { Issue.record("not a watch"); return }
        w.appendWatch(watch, matched: [mouse.id, keyboard.id], tag: request.tag)
        let ids = [keyboard.id, mouse.id].sorted().map { "\"\($0.rawValue)\"" }.joined(separator: ",")
        #expect(text(w.bytes) == #"{"class":"WATCH","devices":["keyboard","Pad"],"types":["EV_REL","EV_ABS"],"codes":["KEY_A","EV_KEY:0x2ff"],"stream":"filtered","max_rate":60,"matched":[\#(ids)],"id":"panel"}"# + "\n")
        // What the server echoes parses back to the same selection.
        var echo = try #require(try decodedLines(w.bytes).first)
        echo["matched"] = nil
        let again = try Request.parse(Array(try JSONSerialization.data(withJSONObject: echo))[...], naming: testNaming)
        #expect(again == request)
        var plain = MessageWriter(names: testNames)
        plain.appendWatch(WatchRequest(stream: .raw, maxRate: 0.5), matched: [])
        #expect(text(plain.bytes) == #"{"class":"WATCH","stream":"raw","max_rate":0.5,"matched":[]}"# + "\n")
    }

    @Test func smallResponses() {
        var w = MessageWriter(names: testNames)
        w.appendUnwatch()
        w.appendUnwatch(tag: .integer(-3))
        w.appendPing(now: 42, tag: .string("p"))
        w.appendClose(reason: .slowConsumer, message: "outgoing buffer over 262144 bytes")
        w.appendDeviceNotice(.added(keyboard))
        w.appendDeviceNotice(.removed(keyboard))
        let lines = text(w.bytes).split(separator: "\n").map(String.init)
        #expect(lines.count == 6)
        #expect(lines[0] == #"{"class":"UNWATCH"}"#)
        #expect(lines[1] == #"{"class":"UNWATCH","id":-3}"#)
        #expect(lines[2] == #"{"class":"PING","now":42,"id":"p"}"#)
        #expect(lines[3] == #"{"class":"CLOSE","reason":"slow-consumer","message":"outgoing buffer over 262144 bytes"}"#)
        #expect(lines[4].hasPrefix(#"{"class":"DEVICE","action":"added","device":{"id":"\#(keyboard.id.rawValue)","name":"AT Translated Set 2 keyboard""#))
        #expect(lines[5].hasPrefix(#"{"class":"DEVICE","action":"removed","device":{"id":"#))
        #expect(CloseReason.allCases.map(\.rawValue) == ["slow-consumer", "idle", "too-many-clients", "not-permitted", "shutdown"])
    }

    @Test func errors() throws {
        var w = MessageWriter(names: testNames)
        w.appendError(try #require(parseError(#"{"class":"WATCH","types":["EV_KYE"],"id":"panel"}"#)))
        w.appendError(ProtocolError(.lineTooLong(limit: 4096)))
        w.appendError(try #require(parseError(#"{"class":"NOPE","id":1}"#)))
        let lines = text(w.bytes).split(separator: "\n").map(String.init)
        #expect(lines[0] == #"{"class":"ERROR","message":"unknown event type 'EV_KYE'","request_class":"WATCH","field":"types","id":"panel"}"#)
        #expect(lines[1] == #"{"class":"ERROR","message":"request line longer than 4096 bytes"}"#)
        // An unknown class is not echoed as request_class; the id still is.
        #expect(lines[2] == #"{"class":"ERROR","message":"unknown request class 'NOPE'","field":"class","id":1}"#)
        var stream = MessageWriter(names: testNames)
        stream.appendError(try #require(parseError(#"{"class":"WATCH","stream":"both"}"#)))
        #expect(text(stream.bytes) == #"{"class":"ERROR","message":"field 'stream' must be \"filtered\", \"raw\" or \"gestures\"","request_class":"WATCH","field":"stream"}"# + "\n")
    }

    @Test func resetKeepsWriting() {
        var w = MessageWriter(names: testNames)
        w.appendPing(now: 1)
        w.reset()
        #expect(w.bytes.isEmpty)
        w.appendPing(now: 2)
        #expect(text(w.bytes) == #"{"class":"PING","now":2}"# + "\n")
    }
}

// MARK: - JSON writer and escaping

@Suite(.ownLiveResources) struct JSONWriterTests {
    private func encoded(_ s: String) -> String { text(JSONWriter.encodedString(s)) }

    @Test func escaping() throws {
        #expect(encoded("plain") == #""plain""#)
        #expect(encoded(#"a"b\c/d"#) == #""a\"b\\c/d""#)
        #expect(encoded("line\nbreak\r\ttab\u{8}\u{c}") == #""line\nbreak\r\ttab\b\f""#)
        #expect(encoded("\u{0}\u{1}\u{1f}") == #""\u0000\u0001\u001f""#)
        #expect(encoded("\u{7f} é ✓ 🎹 \u{2028}") == "\"\u{7f} é ✓ 🎹 \u{2028}\"")   // valid JSON as is
        #expect(encoded("") == #""""#)
        // Whatever goes in comes back out through a real JSON parser.
        let nasty = "\"\\\n\r\t\u{0}\u{1b}[31m é 🎹 \u{7f}\u{2029}}]{["
        let decoded = try JSONSerialization.jsonObject(with: Data(JSONWriter.encodedString(nasty)), options: .fragmentsAllowed)
        #expect(decoded as? String == nasty)
    }

    @Test func messagesStayOnOneLine() throws {
        var w = MessageWriter(names: testNames)
        let evil = DeviceInfo(name: "evil\n{\"class\":\"CLOSE\"}\r\n", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 3),
                              phys: "a\u{0}b", classes: [.keyboard], properties: ["K\"EY": "v\nal"])
        w.appendDevices([evil])
        w.appendState(DeviceStateReport(device: evil))
        let lines = try decodedLines(w.bytes)
        #expect(lines.count == 2)
        #expect((lines[0]["devices"] as? [[String: Any]])?.first?["name"] as? String == evil.name)
        #expect(((lines[1]["device"] as? [String: Any])?["udev"] as? [String: String]) == ["K\"EY": "v\nal"])
    }

    @Test func numbers() {
        var w = JSONWriter()
        w.beginArray()
        for v: Int64 in [0, 7, -7, 1_000_000, .max, .min] { w.int(v) }
        w.uint(.max)
        for d in [60.0, -2.0, 0.5, 3600.25, 1e20, .infinity, .nan] { w.double(d) }
        w.bool(true); w.bool(false); w.null()
        w.endArray()
        #expect(text(w.bytes) == "[0,7,-7,1000000,9223372036854775807,-9223372036854775808,18446744073709551615,60,-2,0.5,3600.25,1e+20,null,null,true,false,null]")
    }

    @Test func nesting() {
        var w = JSONWriter()
        w.beginObject()
        w.key("a"); w.beginArray(); w.beginObject(); w.endObject(); w.beginArray(); w.endArray(); w.int(1); w.endArray()
        w.key("b"); w.beginObject(); w.key("k\"ey" as String); w.string("v"); w.endObject()
        w.endObject()
        w.endLine()
        w.beginObject(); w.endObject()
        #expect(text(w.bytes) == #"{"a":[{},[],1],"b":{"k\"ey":"v"}}"# + "\n{}")
    }
}

// MARK: - Line framer

@Suite(.ownLiveResources) struct LineFramerTests {
    private func drain(_ f: inout LineFramer) -> [String] {
        var out: [String] = []
        while let item = f.next() {
            switch item {
            case .line(let l): out.append(text(Array(l)))
            case .overlong: out.append("<overlong>")
            }
        }
        return out
    }

    @Test func splitsLinesAcrossChunks() {
        var f = LineFramer()
        f.append(contentsOf: Array(#"{"class":"PI"#.utf8))
        #expect(f.next() == nil)
        f.append(contentsOf: Array("NG\"}\n{\"class\":\"STATS\"}\r\n\n  \npartial".utf8))
        #expect(drain(&f) == [#"{"class":"PING"}"#, #"{"class":"STATS"}"#, "", "  "])
        #expect(f.bufferedByteCount == "partial".utf8.count)
        f.append(contentsOf: Array("\n".utf8))
        #expect(drain(&f) == ["partial"])
        #expect(f.bufferedByteCount == 0)
    }

    @Test func byteByByte() {
        var f = LineFramer(maxLineLength: 8)
        var out: [String] = []
        for b in Array("ab\r\n12345678\nx\r\r\n".utf8) {
            f.append(contentsOf: [b])
            out += drain(&f)
        }
        #expect(out == ["ab", "12345678", "x\r"])   // only the "\r" right before "\n" is a terminator
    }

    @Test func unsafeBufferInput() {
        var f = LineFramer()
        let bytes = Array("one\ntwo\n".utf8)
        bytes.withUnsafeBytes { f.append($0) }
        #expect(drain(&f) == ["one", "two"])
    }

    @Test func limitIsExclusiveOfTerminator() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: Array("12345678\n12345678\r\n123456789\n".utf8))
        #expect(drain(&f) == ["12345678", "12345678", "<overlong>"])
        #expect(!f.isDiscarding)
    }

    @Test func overlongIsReportedOnceAndDiscardedToNewline() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: Array("ok\n1234".utf8))
        #expect(drain(&f) == ["ok"])
        f.append(contentsOf: Array("56789".utf8))        // 9 bytes, no newline yet: reported now
        #expect(drain(&f) == ["<overlong>"])
        #expect(f.isDiscarding)
        #expect(f.bufferedByteCount == 0)
        for _ in 0..<100 { f.append(contentsOf: Array(repeating: UInt8(ascii: "z"), count: 1000)) }
        #expect(drain(&f) == [], "reported once, however long the line goes on")
        #expect(f.bufferedByteCount == 0, "discarded bytes are not stored")
        f.append(contentsOf: Array("zz\nnext\n".utf8))
        #expect(drain(&f) == ["next"])
        #expect(!f.isDiscarding)
    }

    @Test func carriageReturnAtTheLimitWaitsForTheNewline() {
        var f = LineFramer(maxLineLength: 8)
        f.append(contentsOf: Array("12345678\r".utf8))     // 9 bytes, may still be "12345678\r\n"
        #expect(drain(&f) == [])
        #expect(f.bufferedByteCount == 9)
        f.append(contentsOf: Array("\n".utf8))
        #expect(drain(&f) == ["12345678"])
        f.append(contentsOf: Array("12345678\rx".utf8))    // it was not a terminator after all
        #expect(drain(&f) == ["<overlong>"])
        #expect(f.isDiscarding)
    }

    @Test func orderIsKeptAroundOverlongLines() {
        var f = LineFramer(maxLineLength: 4)
        f.append(contentsOf: Array("a\nlong line here\nb\nlonger still, unterminated".utf8))
        f.append(contentsOf: Array(" and on\nc\n".utf8))
        #expect(drain(&f) == ["a", "<overlong>", "b", "<overlong>", "c"])
    }

    @Test func bufferNeverExceedsLimitPlusOne() {
        var f = LineFramer()
        var chunk = Array(repeating: UInt8(ascii: "x"), count: 3000)
        for _ in 0..<5 {
            f.append(contentsOf: chunk)
            #expect(f.bufferedByteCount <= 4097)
        }
        #expect(drain(&f) == ["<overlong>"])
        chunk = Array(#"{"class":"PING"}"#.utf8)
        f.append(contentsOf: Array("\n".utf8) + chunk + Array("\n".utf8))
        #expect(drain(&f) == [#"{"class":"PING"}"#])
    }

    @Test func defaultLimitIs4096() {
        var f = LineFramer()
        #expect(f.maxLineLength == 4096)
        f.append(contentsOf: Array(repeating: UInt8(ascii: "a"), count: 4096) + [UInt8(ascii: "\n")])
        f.append(contentsOf: Array(repeating: UInt8(ascii: "b"), count: 4097) + [UInt8(ascii: "\n")])
        let items = drain(&f)
        #expect(items.count == 2)
        #expect(items[0].utf8.count == 4096 && items[1] == "<overlong>")
    }

    /// The framer and the parser together, as a connection handler uses them.
    @Test func framerFeedsParser() throws {
        var f = LineFramer()
        f.append(contentsOf: Array("{\"class\":\"PING\",\"id\":1}\r\n\n{\"class\":\"STATS\"}\n".utf8)
                 + Array(repeating: UInt8(ascii: " "), count: 5000) + Array("\n".utf8))
        var results: [String] = []
        while let item = f.next() {
            switch item {
            case .line(let l) where Request.isBlank(l): continue
            case .line(let l):
                do { results.append(try Request.parse(l, naming: testNaming).requestClass) } catch { results.append(error.message) }
            case .overlong:
                results.append(ProtocolError(.lineTooLong(limit: f.maxLineLength)).message)
            }
        }
        #expect(results == ["PING", "STATS", "request line longer than 4096 bytes"])
    }
}

// MARK: - The server's naming (libevdev's tables through EventNames)

@Suite(.ownLiveResources) struct StandardNamingTests {
    @Test func parsesLibevdevNames() throws {
        let r = try Request.parse(#"{"class":"WATCH","types":["EV_KEY","EV_0x1c"],"codes":["KEY_A","BTN_LEFT","SW_LID","EV_ABS:ABS_MT_SLOT","EV_KEY:0x2e8"]}"#)
        guard case .watch(let w) = r.kind else { Issue.record("not a watch"); return }
        #expect(w.events.types == [1, 0x1c])
        #expect(w.events.codes == [EventCode(type: 1, code: 30), EventCode(type: 1, code: 0x110),
                                   EventCode(type: 1, code: 0x2e8), EventCode(type: 3, code: 0x2f),
                                   EventCode(type: 5, code: 0)])
        #expect(throws: ProtocolError(.unknownEventType("EV_KYE", field: "types"), requestClass: "WATCH")) {
            try Request.parse(#"{"class":"WATCH","types":["EV_KYE"]}"#)
        }
    }

    @Test func typeWithoutCodes() throws {
        // EV_PWR has no *_MAX, so no code number is in range.
        #expect(EventNames.maxCode(type: EventType.pwr) == nil)
        do {
            _ = try Request.parse(#"{"class":"WATCH","codes":["EV_PWR:0"]}"#)
            Issue.record("EV_PWR:0 parsed")
        } catch {
            #expect(error.message == "event code 0 is out of range: EV_PWR has no codes")
            #expect(error.field == "codes")
        }
    }

    @Test func writesLibevdevNames() throws {
        var w = MessageWriter()
        let frame = InputFrame(time: 9, events: [InputEvent(time: 9, type: 1, code: 0x110, value: 1),
                                                 InputEvent(time: 9, type: 3, code: 0x35, value: 100),
                                                 InputEvent(time: 9, type: 1, code: 0x2e8, value: 1)])
        w.appendFrame(device: mouse.id, stream: .raw, frame: frame)
        #expect(text(w.bytes).contains(#""events":[{"type":"EV_KEY","code":"BTN_LEFT","value":1},{"type":"EV_ABS","code":"ABS_MT_POSITION_X","value":100},{"type":"EV_KEY","code":744,"value":1}]"#))
        w.reset()
        w.appendState(DeviceStateReport(device: mouse, leds: [1: 1]))
        let m = try #require(try decodedLines(w.bytes).first)
        #expect((m["device"] as? [String: Any])?["props"] as? [String] == ["INPUT_PROP_POINTER", "INPUT_PROP_POINTING_STICK"])
        #expect(m["leds"] as? [String: Int] == ["LED_CAPSL": 1])
    }

    @Test func watchEchoRoundTrips() throws {
        let request = try Request.parse(#"{"class":"WATCH","types":["EV_SW"],"codes":["BTN_LEFT","EV_KEY:0x2e8"],"stream":"raw"}"#)
        guard case .watch(let watch) = request.kind else { return }
        var w = MessageWriter()
        w.appendWatch(watch, matched: [])
        #expect(text(w.bytes) == #"{"class":"WATCH","types":["EV_SW"],"codes":["BTN_LEFT","EV_KEY:0x2e8"],"stream":"raw","matched":[]}"# + "\n")
        var echo = try #require(try decodedLines(w.bytes).first)
        echo["matched"] = nil
        #expect(try Request.parse(Array(try JSONSerialization.data(withJSONObject: echo))[...]) == request)
    }
}
