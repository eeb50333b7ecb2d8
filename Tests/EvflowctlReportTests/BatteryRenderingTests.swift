import EvflowProtocol
import InputModel
import Testing
@testable import evflowctl

/// evflowctl shows a device's battery (protocol 1.8, docs/batteries.md): a BATTERY column in
/// DEVICES when a device has one, a line in STATE, and `watch` prints BATTERY messages.
@Suite("evflowctl: batteries")
struct BatteryRenderingTests {
    static func keyboard(_ battery: DeviceBattery?) -> DeviceInfo {
        var d = DeviceInfo(name: "MX Keys", inputID: InputID(bustype: 5, vendor: 0x46d, product: 0xb35b, version: 1),
                           devnode: "/dev/input/event5", classes: [.keyboard], id: DeviceID(rawValue: "0005:046d:b35b-00000001"))
        d.battery = battery
        return d
    }

    static let mx = DeviceBattery(percent: 87, status: .discharging, supply: "hid-aa:bb:cc:dd:ee:ff-battery")

    @Test("DEVICES: a BATTERY column only when a device has a battery; '-' for one without")
    func devicesColumn() {
        #expect(!Render.devices([Self.keyboard(nil)]).text.contains("BATTERY"))
        let text = Render.devices([Self.keyboard(Self.mx), Self.keyboard(nil)]).text
        #expect(text == """
            ID                       NAME     CLASSES   NODE               BATTERY
            0005:046d:b35b-00000001  MX Keys  keyboard  /dev/input/event5  87% discharging
            0005:046d:b35b-00000001  MX Keys  keyboard  /dev/input/event5  -

            """)
        #expect(Render.battery(DeviceBattery(level: .low, status: .notCharging, supply: "w")) == "low, not-charging")
    }

    @Test("STATE has a battery line; watch prints BATTERY")
    func stateAndWatch() {
        #expect(Render.state(DeviceStateReport(device: Self.keyboard(Self.mx))).text
            .contains("battery     87% discharging (hid-aa:bb:cc:dd:ee:ff-battery)\n"))
        let line = Render.streamLine(.battery(BatteryMessage(device: Self.keyboard(nil).id, battery: Self.mx)))
        #expect(line == "battery: 0005:046d:b35b-00000001  87% discharging (hid-aa:bb:cc:dd:ee:ff-battery)")
    }
}
