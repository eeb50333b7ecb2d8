import Foundation
import InputDevices
import InputModel
import Reactive
import ReactiveTesting
import Testing

/// A sysfs tree in a temporary directory, shaped like the kernel's (paths as on a laptop with
/// a Bluetooth keyboard: hid-input's battery is a child of the HID device, a sibling of
/// `input/inputN`; `class/input/eventN` and `eventN/device` are the kernel's symbolic links).
private final class FakeSysfs {
    let root: String

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-sysfs-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: root + "/class/input", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/class/power_supply", withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(atPath: root) }

    /// An input device at `devices/<parent>/input/inputN` with node `eventM`.
    func inputDevice(under parent: String, input: Int, event: Int) throws {
        let inputDir = "\(root)/devices/\(parent)/input/input\(input)"
        try FileManager.default.createDirectory(atPath: "\(inputDir)/event\(event)", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: "\(inputDir)/event\(event)/device", withDestinationPath: "../../input\(input)")
        try FileManager.default.createSymbolicLink(atPath: "\(root)/class/input/event\(event)",
                                                   withDestinationPath: "../../devices/\(parent)/input/input\(input)/event\(event)")
    }

    /// A power supply `name` at `devices/<parent>/power_supply/<name>` with these attributes,
    /// linked from `class/power_supply`.
    @discardableResult
    func supply(under parent: String, name: String, _ attributes: [String: String]) throws -> String {
        let dir = "\(root)/devices/\(parent)/power_supply/\(name)"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        for (k, v) in attributes { try write(dir + "/" + k, v) }
        try? FileManager.default.createSymbolicLink(atPath: "\(root)/class/power_supply/\(name)",
                                                    withDestinationPath: "../../devices/\(parent)/power_supply/\(name)")
        return dir
    }

    func write(_ path: String, _ text: String) throws {
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    }
}

private let btHID = "pci0000:00/0000:00:14.0/usb1/1-10/1-10:1.0/bluetooth/hci0/hci0:256/0005:046D:B35B.0001"
private let btName = "hid-aa:bb:cc:dd:ee:ff-battery"
private let hidBattery = ["type": "Battery\n", "scope": "Device\n", "capacity": "87\n", "status": "Discharging\n",
                          "present": "1\n", "model_name": "MX Keys\n"]

private func device(_ event: Int?, uniq: String? = nil) -> DeviceInfo {
    DeviceInfo(name: "kbd", inputID: InputID(bustype: 5, vendor: 0x046d, product: 0xb35b, version: 1), uniq: uniq,
               devnode: event.map { "/dev/input/event\($0)" }, classes: [.keyboard])
}

@Suite("a device's battery from sysfs power_supply (docs/batteries.md)", .ownLiveResources)
struct DeviceBatteriesTests {
    @Test("a Bluetooth keyboard gets hid-input's battery, the HID device's child beside input/inputN")
    func hidKeyboard() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: btHID, input: 12, event: 5)
        let dir = try sys.supply(under: btHID, name: btName, hidBattery)
        let supplies = PowerSupplies(root: sys.root)
        #expect(supplies.supply(of: device(5)).map { URL(fileURLWithPath: $0).resolvingSymlinksInPath().path }
            == URL(fileURLWithPath: dir).resolvingSymlinksInPath().path)
        #expect(PowerSupplies.read(dir) == DeviceBattery(percent: 87, status: .discharging, supply: btName))
    }

    @Test("a laptop keyboard beside System-scope and scope-less batteries has none")
    func laptopKeyboard() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: "platform/i8042/serio0", input: 3, event: 2)
        // In its ancestors on purpose: only a Device scope attaches.
        try sys.supply(under: "platform/i8042/serio0", name: "BAT0", ["type": "Battery\n", "scope": "System\n", "capacity": "55\n"])
        try sys.supply(under: "platform/i8042", name: "BAT1", ["type": "Battery\n", "capacity": "55\n"])
        try sys.supply(under: "platform/i8042/serio0", name: "AC", ["type": "Mains\n", "scope": "Device\n"])
        #expect(PowerSupplies(root: sys.root).supply(of: device(2)) == nil)
    }

    @Test("the walk stops at devices/: a device-scope battery above it is never taken")
    func walkStopsAtDevices() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: "virtual", input: 1, event: 1)
        try FileManager.default.createDirectory(atPath: sys.root + "/power_supply/x", withIntermediateDirectories: true)
        try sys.write(sys.root + "/power_supply/x/type", "Battery")
        try sys.write(sys.root + "/power_supply/x/scope", "Device")
        #expect(PowerSupplies(root: sys.root).supply(of: device(1)) == nil)
    }

    @Test("a driver with only capacity_level: level, no percent")
    func capacityLevelOnly() throws {
        let sys = try FakeSysfs()
        let dir = try sys.supply(under: btHID, name: "wacom_battery_0",
                                 ["type": "Battery", "scope": "Device", "capacity_level": "Low\n", "status": "Not charging\n"])
        #expect(PowerSupplies.read(dir) == DeviceBattery(level: .low, status: .notCharging, supply: "wacom_battery_0"))
    }

    @Test("a capacity that is absent or unreadable (a directory, a FIFO) gives level unknown, never a hang")
    func unreadableCapacity() throws {
        let sys = try FakeSysfs()
        let dir = try sys.supply(under: btHID, name: btName, ["type": "Battery", "scope": "Device"])
        #expect(PowerSupplies.read(dir) == DeviceBattery(level: .unknown, status: .unknown, supply: btName))
        try FileManager.default.createDirectory(atPath: dir + "/capacity", withIntermediateDirectories: true)
        #expect(PowerSupplies.read(dir)?.level == .unknown)
        try FileManager.default.removeItem(atPath: dir + "/capacity")
        #expect(mkfifo(dir + "/capacity", 0o600) == 0)
        #expect(mkfifo(dir + "/status", 0o600) == 0)
        #expect(PowerSupplies.read(dir) == DeviceBattery(level: .unknown, status: .unknown, supply: btName))
        // A supply that is gone reads as none.
        #expect(PowerSupplies.read(sys.root + "/devices/nothing/power_supply/gone") == nil)
    }

    @Test("hostile values never trap: huge, negative, garbage, control characters", arguments: [
        ("99999999999999999999999999", nil as Int?), ("-5", 0), ("250", 100), ("8\u{1b}[2J", nil), ("", nil),
        ("0x50", nil), ("+50", nil), (String(repeating: "9", count: 10_000), nil), ("50\n", 50), ("\u{0}\u{0}", nil),
    ])
    func hostileCapacity(text: String, percent: Int?) throws {
        let sys = try FakeSysfs()
        let dir = try sys.supply(under: btHID, name: btName, ["type": "Battery", "scope": "Device", "capacity": text,
                                                              "status": "\u{1b}]0;owned\u{7}Charging", "capacity_level": "\u{1b}[31mFull"])
        let b = try #require(PowerSupplies.read(dir))
        #expect(b.percent == percent)
        #expect(b.level == (percent == nil ? .unknown : nil))
        #expect(b.status == .unknown)
    }

    @Test("a replayed device with a uniq gets hid-<uniq>-battery only with a --sysfs snapshot")
    func replayedDevice() throws {
        let sys = try FakeSysfs()
        let dir = try sys.supply(under: btHID, name: btName, hidBattery)
        let replayed = device(nil, uniq: "aa:bb:cc:dd:ee:ff")
        #expect(PowerSupplies(root: sys.root, replayedDevices: true).supply(of: replayed) == sys.root + "/class/power_supply/" + btName)
        #expect(PowerSupplies(root: sys.root).supply(of: replayed) == nil)
        #expect(PowerSupplies(root: sys.root, replayedDevices: true).supply(of: device(nil)) == nil)
        #expect(PowerSupplies(root: sys.root, replayedDevices: true).supply(of: device(nil, uniq: "../../x")) == nil)
        _ = dir
    }

    @Test("readings: at subscription, on its supply's uevent, every interval; only changes; none after disposal")
    func readings() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: btHID, input: 12, event: 5)
        let dir = try sys.supply(under: btHID, name: btName, hidBattery)
        let scheduler = TestScheduler()
        let changes = PublishSubject<String>()
        let batteries = DeviceBatteries(supplies: PowerSupplies(root: sys.root), changes: changes.asObservable(),
                                        readScheduler: scheduler, interval: .milliseconds(60_000))
        var got: [DeviceBattery?] = []
        let subscription = batteries.readings(of: device(5)).subscribe(onNext: { got.append($0) })
        scheduler.advanceTo(1)
        #expect(got == [DeviceBattery(percent: 87, status: .discharging, supply: btName)])
        try sys.write(dir + "/capacity", "86\n")
        changes.onNext("BAT0")               // another supply's uevent: not read
        scheduler.advanceTo(2)
        #expect(got.count == 1)
        changes.onNext(btName)
        scheduler.advanceTo(3)
        #expect(got.last == DeviceBattery(percent: 86, status: .discharging, supply: btName))
        changes.onNext(btName)               // read again, unchanged: nothing
        scheduler.advanceTo(4)
        #expect(got.count == 2)
        try sys.write(dir + "/status", "Charging\n")
        scheduler.advanceTo(60_001)          // the interval, for drivers without uevents
        #expect(got.count == 3)
        #expect(got.last == DeviceBattery(percent: 86, status: .charging, supply: btName))
        try FileManager.default.removeItem(atPath: dir)
        scheduler.advanceTo(120_001)         // the battery went away
        #expect(got.count == 4)
        #expect(got.last == .some(nil))
        subscription.dispose()
        try sys.supply(under: btHID, name: btName, hidBattery)
        changes.onNext(btName)
        scheduler.advanceTo(200_000)
        #expect(got.count == 4)
    }

    @Test("a battery that appears after the device (hid-logitech-hidpp) is found at the next uevent")
    func lateBattery() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: btHID, input: 12, event: 5)
        let scheduler = TestScheduler()
        let changes = PublishSubject<String>()
        let batteries = DeviceBatteries(supplies: PowerSupplies(root: sys.root), changes: changes.asObservable(),
                                        readScheduler: scheduler)
        var got: [DeviceBattery?] = []
        let subscription = batteries.readings(of: device(5)).subscribe(onNext: { got.append($0) })
        scheduler.advanceTo(1)
        #expect(got == [nil])
        try sys.supply(under: btHID, name: "hidpp_battery_0", ["type": "Battery", "scope": "Device", "capacity": "40", "status": "Discharging"])
        changes.onNext("hidpp_battery_0")
        scheduler.advanceTo(2)
        #expect(got.last == DeviceBattery(percent: 40, status: .discharging, supply: "hidpp_battery_0"))
        subscription.dispose()
        scheduler.advanceTo(3)   // the reader stops on its thread: its timer with it
    }

    @Test("a device without a battery has no timer: only uevents look again (an idle daemon's battery thread sleeps)")
    func noTimerWithoutABattery() throws {
        let sys = try FakeSysfs()
        try sys.inputDevice(under: "platform/i8042/serio0", input: 3, event: 2)
        let scheduler = TestScheduler()
        let batteries = DeviceBatteries(supplies: PowerSupplies(root: sys.root), readScheduler: scheduler,
                                        interval: .milliseconds(60_000))
        var got: [DeviceBattery?] = []
        let subscription = batteries.readings(of: device(2)).subscribe(onNext: { got.append($0) })
        scheduler.advanceTo(1)
        #expect(got == [nil])
        #expect(!scheduler.hasPendingWork, "nothing scheduled: no timer")
        subscription.dispose()
        scheduler.advanceTo(2)
    }
}
