import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import EvflowProtocol

// Gestures in the protocol (1.5, docs/protocol.md §5 and docs/gestures.md): GESTURE and the
// devices' `gestures` member decode to what was encoded; `stream":"gestures"` round-trips.

private let keyA: UInt16 = 30
private let btn0: UInt16 = 0x100

@Suite(.ownLiveResources) struct GestureProtocolTests {
    @Test func gestureMessagesDecodeToWhatWasEncoded() throws {
        let id = DeviceID(rawValue: "0003:1234:5678-0badcafe")
        var w = MessageWriter()
        for kind in GestureKind.allCases {
            w.appendGesture(device: id, GestureEvent(time: 81_234_567_890_123, code: keyA, gesture: kind, count: 2))
        }
        let decoded = try w.bytes.split(separator: UInt8(ascii: "\n")).map { try ServerMessage.decode($0) }
        #expect(decoded == GestureKind.allCases.map {
            .gesture(GestureMessage(device: id, event: GestureEvent(time: 81_234_567_890_123, code: keyA, gesture: $0, count: 2)))
        })
        #expect(decoded.first?.messageClass == MessageClass.gesture.rawValue)
    }

    @Test func theWireFormIsAsDocumented() {
        var w = MessageWriter()
        w.appendGesture(device: DeviceID(rawValue: "0003:1234:5678-0badcafe"),
                        GestureEvent(time: 5, code: keyA, gesture: .double, count: 2))
        #expect(String(decoding: w.bytes, as: UTF8.self)
            == #"{"class":"GESTURE","device":"0003:1234:5678-0badcafe","time":5,"code":"KEY_A","gesture":"double","count":2}"# + "\n")
    }

    @Test func aHiddenKeysClientGetsKeysAsUnknownAndButtonsAsTheyAre() throws {
        let id = DeviceID(rawValue: "d")
        var w = MessageWriter()
        w.appendGesture(device: id, GestureEvent(time: 1, code: keyA, gesture: .single, count: 1), keys: .hidden)
        w.appendGesture(device: id, GestureEvent(time: 2, code: btn0, gesture: .single, count: 1), keys: .hidden)
        let decoded = try w.bytes.split(separator: UInt8(ascii: "\n")).map { try ServerMessage.decode($0) }
        #expect(decoded == [
            .gesture(GestureMessage(device: id, event: GestureEvent(time: 1, code: KeyPrivacy.placeholder, gesture: .single, count: 1))),
            .gesture(GestureMessage(device: id, event: GestureEvent(time: 2, code: btn0, gesture: .single, count: 1))),
        ])
    }

    @Test func aDeviceSummaryCarriesItsGestures() throws {
        var pad = DeviceInfo(name: "pad", inputID: InputID(bustype: 3, vendor: 0x1234, product: 0x5678, version: 1), classes: [.key])
        pad.gestures = DeviceGestures(codes: [btn0, keyA], kinds: [.long, .single, .double])
        var w = MessageWriter()
        w.appendDevices([pad], tag: nil)
        #expect(String(decoding: w.bytes, as: UTF8.self).contains(#""gestures":{"codes":["KEY_A","BTN_0"],"kinds":["single","double","long"]}"#))
        let decoded = try ServerMessage.decode(w.bytes.dropLast())
        #expect(decoded == .devices([pad], tag: nil))
    }

    @Test func watchTheGesturesStreamRoundTrips() throws {
        let request = try Request.parse(#"{"class":"WATCH","devices":["key"],"types":["EV_KEY"],"stream":"gestures"}"#)
        guard case .watch(let watch) = request.kind else { Issue.record("not a WATCH"); return }
        #expect(watch.stream == .gestures)
        #expect(try Request.parse(String(decoding: request.encoded().dropLast(), as: UTF8.self)) == request)
        let error = #expect(throws: ProtocolError.self) { try Request.parse(#"{"class":"WATCH","stream":"taps"}"#) }
        #expect(error?.message == #"field 'stream' must be "filtered", "raw" or "gestures""#)
    }
}

@Suite struct GestureKeyPrivacyTests {
    @Test func nonTextKeysKeepTheirCodeInAGestureAndOnlyThere() throws {
        let id = DeviceID(rawValue: "d")
        let f13: UInt16 = 183, volumeUp: UInt16 = 115, macro1: UInt16 = 0x290, enter: UInt16 = 28
        var w = MessageWriter()
        for code in [f13, volumeUp, macro1, enter] {
            w.appendGesture(device: id, GestureEvent(time: 1, code: code, gesture: .single, count: 1), keys: .hidden)
        }
        let codes = try w.bytes.split(separator: UInt8(ascii: "\n")).map { line -> UInt16 in
            guard case .gesture(let g) = try ServerMessage.decode(line) else { return 0 }
            return g.event.code
        }
        #expect(codes == [f13, volumeUp, macro1, KeyPrivacy.placeholder])
        // FRAME keeps today's rule: every key hidden.
        #expect(KeyPrivacy.redacted(InputEvent(time: 1, type: EventType.key, code: f13, value: 1))?.code == KeyPrivacy.placeholder)
    }

    @Test(arguments: ["KEY_MUTE", "KEY_VOLUMEDOWN", "KEY_VOLUMEUP", "KEY_POWER", "KEY_PROG1", "KEY_PROG2", "KEY_NEXTSONG",
                      "KEY_PLAYPAUSE", "KEY_PREVIOUSSONG", "KEY_STOPCD", "KEY_RECORD", "KEY_REWIND", "KEY_F13", "KEY_F24",
                      "KEY_PLAYCD", "KEY_PAUSECD", "KEY_PROG3", "KEY_PROG4", "KEY_PLAY", "KEY_FASTFORWARD",
                      "KEY_BRIGHTNESSDOWN", "KEY_BRIGHTNESSUP", "KEY_MACRO1", "KEY_MACRO30"])
    func theDocumentedNonTextKeys(name: String) throws {
        let code = try #require(EventNames.code(named: name)).code
        #expect(KeyPrivacy.isNonText(code), "\(name)")
    }

    @Test(arguments: ["KEY_A", "KEY_1", "KEY_ENTER", "KEY_SPACE", "KEY_KP1", "KEY_F1", "KEY_F12", "KEY_NUMERIC_1", "KEY_ISO",
                      "KEY_KPLEFTPAREN", "KEY_MACRO_RECORD_START"])
    func textKeysStayHidden(name: String) throws {
        let code = try #require(EventNames.code(named: name)).code
        #expect(KeyPrivacy.hidesGesture(code: code), "\(name)")
    }
}
