import Foundation
import InputModel
import Testing
@testable import EvflowProtocol

// ACCESSIBILITY in the protocol (1.7, docs/protocol.md §4): the request parses and round-trips,
// every bad value gets a clear ERROR naming its field (never a trap), the response decodes to
// what was encoded and its wire form is as documented.

@Suite struct AccessibilityProtocolTests {
    static let id = "0011:0001:0001-8d2c41f0"

    @Test func theRequestParsesAndRoundTrips() throws {
        let request = try Request.parse(#"{"class":"ACCESSIBILITY","device":"0011:0001:0001-8d2c41f0","bounce_keys":300,"slow_keys":"config","id":7}"#)
        #expect(request.kind == .accessibility(AccessibilityRequest(device: Self.id, bounceKeys: .milliseconds(300), slowKeys: .config)))
        #expect(request.tag == .integer(7))
        #expect(request.wireClass == .accessibility)
        #expect(try Request.parse(String(decoding: request.encoded().dropLast(), as: UTF8.self)) == request)

        let off = try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","slow_keys":"off","bounce_keys":0}"#)
        #expect(off.kind == .accessibility(AccessibilityRequest(device: "kbd", bounceKeys: .milliseconds(0), slowKeys: .milliseconds(0))))
        let read = try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd"}"#)
        #expect(read.kind == .accessibility(AccessibilityRequest(device: "kbd")))
        #expect(try Request.parse(String(decoding: read.encoded().dropLast(), as: UTF8.self)) == read)
        let most = try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","slow_keys":60000}"#)
        #expect(most.kind == .accessibility(AccessibilityRequest(device: "kbd", slowKeys: .milliseconds(60_000))))
    }

    static let expected = #"an integer number of milliseconds from 0 to 60000, "off" or "config""#

    @Test("a bad value is an ERROR naming its field", arguments: [
        (#""bounce_keys":-1"#, "bounce_keys"),
        (#""bounce_keys":60001"#, "bounce_keys"),
        (#""slow_keys":9223372036854775807"#, "slow_keys"),
        (#""slow_keys":99999999999999999999999"#, "slow_keys"),
        (#""slow_keys":300.5"#, "slow_keys"),
        (#""bounce_keys":"300ms""#, "bounce_keys"),
        (#""bounce_keys":"OFF""#, "bounce_keys"),
        (#""bounce_keys":true"#, "bounce_keys"),
        (#""slow_keys":[300]"#, "slow_keys"),
    ])
    func badValues(member: String, field: String) throws {
        let error = #expect(throws: ProtocolError.self) {
            try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","# + member + "}")
        }
        #expect(error?.field == field, "\(member)")
        #expect(error?.message == "field '\(field)' must be \(Self.expected)", "\(member): \(error?.message ?? "")")
    }

    @Test func anAbsurdlyLargeNumberIsOutOfRange() throws {
        let error = #expect(throws: ProtocolError.self) {
            try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","slow_keys":1e999}"#)
        }
        #expect(error?.field == "slow_keys")
        #expect(error?.message == "the number in field 'slow_keys' is out of range")
    }

    @Test func theDeviceIsRequiredAndNotEmptyAndNoOtherMemberIsTaken() throws {
        let missing = #expect(throws: ProtocolError.self) { try Request.parse(#"{"class":"ACCESSIBILITY","bounce_keys":300}"#) }
        #expect(missing?.field == "device")
        let empty = #expect(throws: ProtocolError.self) { try Request.parse(#"{"class":"ACCESSIBILITY","device":""}"#) }
        #expect(empty?.field == "device")
        let number = #expect(throws: ProtocolError.self) { try Request.parse(#"{"class":"ACCESSIBILITY","device":3}"#) }
        #expect(number?.field == "device")
        let unknown = #expect(throws: ProtocolError.self) {
            try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","sticky_keys":300}"#)
        }
        #expect(unknown?.field == "sticky_keys")
        let twice = #expect(throws: ProtocolError.self) {
            try Request.parse(#"{"class":"ACCESSIBILITY","device":"kbd","slow_keys":1,"slow_keys":2}"#)
        }
        #expect(twice?.field == "slow_keys")
    }

    @Test func theResponseDecodesToWhatWasEncodedAndItsWireFormIsAsDocumented() throws {
        let report = AccessibilityReport(device: DeviceID(rawValue: Self.id), bounceKeys: 300_000_000, slowKeys: 0,
                                         live: ["bounce_keys"], keys: true)
        var w = MessageWriter()
        w.appendAccessibility(report)
        #expect(String(decoding: w.bytes, as: UTF8.self)
            == #"{"class":"ACCESSIBILITY","device":"0011:0001:0001-8d2c41f0","bounce_keys":300,"slow_keys":0,"live":["bounce_keys"],"keys":true}"# + "\n")
        #expect(try ServerMessage.decode(w.bytes.dropLast()) == .accessibility(report, tag: nil))

        // A configuration may give a fraction of a millisecond: it is reported as one.
        let fraction = AccessibilityReport(device: DeviceID(rawValue: "d"), bounceKeys: 0, slowKeys: 12_500_000, live: [], keys: false)
        var f = MessageWriter()
        f.appendAccessibility(fraction, tag: .string("t"))
        #expect(String(decoding: f.bytes, as: UTF8.self).contains(#""slow_keys":12.5,"live":[],"keys":false,"id":"t""#))
        #expect(try ServerMessage.decode(f.bytes.dropLast()) == .accessibility(fraction, tag: .string("t")))
    }

    @Test func theErrorsSayWhatIsWrong() {
        let refused = ProtocolError(.notPermitted(field: "slow_keys"), requestClass: "ACCESSIBILITY", tag: nil)
        #expect(refused.field == "slow_keys")
        #expect(refused.message
            == "this client may not change 'slow_keys' (root, evflowd's user and the key groups may: docs/protocol.md, ACCESSIBILITY)")
    }
}
