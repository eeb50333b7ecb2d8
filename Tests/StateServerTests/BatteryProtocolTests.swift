import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import EvflowProtocol

// A device's battery in the protocol (1.8, docs/protocol.md §4 "Batteries" and §5 BATTERY):
// the summary's `battery` member and the BATTERY message have the documented wire form and
// decode to what was encoded.

private let keyboardID = DeviceID(rawValue: "0005:046d:b35b-0badcafe")

@Suite(.ownLiveResources) struct BatteryProtocolTests {
    private func text(_ w: MessageWriter) -> String { String(decoding: w.bytes, as: UTF8.self) }

    @Test func theBatteryMessageIsAsDocumented() throws {
        var w = MessageWriter()
        let battery = DeviceBattery(percent: 87, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")
        w.appendBattery(device: keyboardID, battery)
        #expect(text(w) == #"{"class":"BATTERY","device":"0005:046d:b35b-0badcafe","battery":{"percent":87,"status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}}"# + "\n")
        let decoded = try ServerMessage.decode(w.bytes.dropLast())
        #expect(decoded == .battery(BatteryMessage(device: keyboardID, battery: battery)))
        #expect(decoded.messageClass == MessageClass.battery.rawValue)
    }

    @Test("a battery with only capacity_level carries level, never percent")
    func levelOnly() throws {
        var w = MessageWriter()
        let battery = DeviceBattery(level: .low, status: .notCharging, supply: "wacom_battery_0")
        w.appendBattery(device: keyboardID, battery)
        #expect(text(w).contains(#""battery":{"level":"low","status":"not-charging","supply":"wacom_battery_0"}"#))
        #expect(try ServerMessage.decode(w.bytes.dropLast()) == .battery(BatteryMessage(device: keyboardID, battery: battery)))
    }

    @Test func everyStatusAndLevelRoundTrips() throws {
        var sent: [DeviceBattery] = DeviceBattery.Status.allCases.map { DeviceBattery(percent: 5, status: $0, supply: "s") }
        sent += DeviceBattery.Level.allCases.map { DeviceBattery(level: $0, status: .full, supply: "s") }
        var w = MessageWriter()
        for b in sent { w.appendBattery(device: keyboardID, b) }
        let decoded = try w.bytes.split(separator: UInt8(ascii: "\n")).map { try ServerMessage.decode($0) }
        #expect(decoded == sent.map { .battery(BatteryMessage(device: keyboardID, battery: $0)) })
    }

    @Test func aDeviceSummaryCarriesItsBatteryInDevicesStateAndDeviceAdded() throws {
        var keyboard = DeviceInfo(name: "MX Keys", inputID: InputID(bustype: 5, vendor: 0x046d, product: 0xb35b, version: 1),
                                  uniq: "aa:bb:cc:dd:ee:ff", classes: [.keyboard, .key])
        keyboard.battery = DeviceBattery(percent: 87, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")
        var w = MessageWriter()
        w.appendDevices([keyboard], tag: nil)
        #expect(text(w).hasSuffix(#""classes":["key","keyboard"],"battery":{"percent":87,"status":"discharging","supply":"hid-aa:bb:cc:dd:ee:ff-battery"}}]}"# + "\n"))
        #expect(try ServerMessage.decode(w.bytes.dropLast()) == .devices([keyboard], tag: nil))
        w.reset()
        w.appendDeviceNotice(.added(keyboard))
        #expect(try ServerMessage.decode(w.bytes.dropLast()) == .device(.added(keyboard)))
        w.reset()
        w.appendState(DeviceStateReport(device: keyboard))
        guard case .state(let report, _) = try ServerMessage.decode(w.bytes.dropLast()) else { Issue.record("not a STATE"); return }
        #expect(report.device.battery == keyboard.battery)
    }

    @Test func aDeviceWithoutABatteryHasNoMember() {
        var w = MessageWriter()
        w.appendDevices([DeviceInfo(name: "k", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1))], tag: nil)
        #expect(!text(w).contains("battery"))
    }

    @Test("a later version's status or level reads as unknown; a percent out of range is clamped")
    func lenientDecoding() throws {
        let line = #"{"class":"BATTERY","device":"d","battery":{"percent":250,"level":"overflowing","status":"levitating","supply":"x"}}"#
        #expect(try ServerMessage.decode(line)
            == .battery(BatteryMessage(device: DeviceID(rawValue: "d"), battery: DeviceBattery(percent: 100, status: .unknown, supply: "x"))))
        let levelOnly = #"{"class":"BATTERY","device":"d","battery":{"level":"overflowing","status":"full","supply":"x"}}"#
        #expect(try ServerMessage.decode(levelOnly)
            == .battery(BatteryMessage(device: DeviceID(rawValue: "d"), battery: DeviceBattery(level: .unknown, status: .full, supply: "x"))))
        #expect(throws: DecodingFailure.self) { try ServerMessage.decode(#"{"class":"BATTERY","device":"d","battery":{"status":"full"}}"#) }
        #expect(throws: DecodingFailure.self) { try ServerMessage.decode(#"{"class":"BATTERY","device":"d","battery":7}"#) }
    }

    @Test("sysfs words: lowercased, trimmed, spaces as '-'; an unknown status is unknown, an unknown level none")
    func sysfsWords() {
        #expect(DeviceBattery.Status(sysfs: "Not charging\n") == .notCharging)
        #expect(DeviceBattery.Status(sysfs: "Discharging") == .discharging)
        #expect(DeviceBattery.Status(sysfs: "\u{1b}[31mFull") == .unknown)
        #expect(DeviceBattery.Level(sysfs: "Critical\n") == .critical)
        #expect(DeviceBattery.Level(sysfs: "Very low") == nil)
        #expect(DeviceBattery(percent: -4, supply: "s").percent == 0)
        #expect(DeviceBattery(percent: 1_000_000, supply: "s").percent == 100)
        #expect(DeviceBattery(percent: 40, level: .low, supply: "s").level == nil)
    }
}
