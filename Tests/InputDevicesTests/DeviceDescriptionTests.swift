import InputDevices
import InputModel
import ReactiveTesting
import Testing

@Suite("DeviceInfo from udev and libevdev", .ownLiveResources)
struct DeviceDescriptionTests {
    /// What udev reports for a USB keyboard's event node (trimmed from `udevadm info`).
    let keyboardProperties = [
        "DEVPATH": "/devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2:1.0/0003:046D:C31C.0001/input/input5/event3",
        "DEVNAME": "/dev/input/event3", "MAJOR": "13", "MINOR": "67", "SUBSYSTEM": "input", "SEQNUM": "2345",
        "USEC_INITIALIZED": "4312345", "ID_INPUT": "1", "ID_INPUT_KEY": "1", "ID_INPUT_KEYBOARD": "1",
        "ID_VENDOR_ID": "046d", "ID_MODEL_ID": "c31c", "ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0",
        "ID_PATH_TAG": "pci-0000_00_14_0-usb-0_2_1_0", "ID_BUS": "usb", "ID_SERIAL": "Logitech_USB_Keyboard",
        "LIBINPUT_DEVICE_GROUP": "3/46d/c31c:usb-0000:00:14.0-2", "TAGS": ":seat:", "NAME": "\"Logitech USB Keyboard\"",
    ]
    let keyboardParent = [
        "name": "Logitech USB Keyboard\n", "phys": "usb-0000:00:14.0-2/input0", "uniq": "",
        "id/bustype": "0003", "id/vendor": "046d", "id/product": "c31c", "id/version": "0110",
    ]

    @Test("udev properties: ID_INPUT_* become classes, identity from the input parent's attributes")
    func fromUdev() {
        let info = DeviceDescription.fromUdev(properties: keyboardProperties, parentAttributes: keyboardParent,
                                              devnode: "/dev/input/event3")
        #expect(info.name == "Logitech USB Keyboard")
        #expect(info.inputID == InputID(bustype: 3, vendor: 0x046d, product: 0xc31c, version: 0x0110))
        #expect(info.phys == "usb-0000:00:14.0-2/input0")
        #expect(info.uniq == nil)
        #expect(info.devnode == "/dev/input/event3")
        #expect(info.classes == [.keyboard, .key])
        #expect(info.id == DeviceID(name: "Logitech USB Keyboard", inputID: info.inputID,
                                    phys: "usb-0000:00:14.0-2/input0", uniq: nil))
        #expect(info.id.rawValue.hasPrefix("0003:046d:c31c-"))
    }

    @Test("kept properties: identity and libinput hints; not the class flags nor bookkeeping")
    func keptProperties() {
        let kept = DeviceDescription.keptProperties(keyboardProperties)
        #expect(kept == [
            "ID_VENDOR_ID": "046d", "ID_MODEL_ID": "c31c", "ID_PATH": "pci-0000:00:14.0-usb-0:2:1.0",
            "ID_PATH_TAG": "pci-0000_00_14_0-usb-0_2_1_0", "ID_BUS": "usb", "ID_SERIAL": "Logitech_USB_Keyboard",
            "LIBINPUT_DEVICE_GROUP": "3/46d/c31c:usb-0000:00:14.0-2",
        ])
    }

    @Test("every class flag maps to its DeviceClass; values other than 1 do not count")
    func classFlags() {
        for c in DeviceClass.allCases {
            #expect(DeviceDescription.classes(fromUdev: [c.udevProperty: "1"]) == [c])
            #expect(DeviceDescription.classes(fromUdev: [c.udevProperty: "0"]).isEmpty)
        }
        #expect(DeviceDescription.classes(fromUdev: ["ID_INPUT_TABLET_PAD": "1"]) == [.tabletPad])
    }

    @Test("without parent attributes, udev's quoted NAME/PHYS are used")
    func fallbackToQuotedProperties() {
        let info = DeviceDescription.fromUdev(properties: ["NAME": "\"Lid Switch\"", "PHYS": "\"PNP0C0D/button/input0\"",
                                                           "ID_INPUT": "1", "ID_INPUT_SWITCH": "1"],
                                              parentAttributes: [:], devnode: "/dev/input/event1")
        #expect(info.name == "Lid Switch")
        #expect(info.phys == "PNP0C0D/button/input0")
        #expect(info.classes == [.switch])
    }

    @Test("refined with libevdev: identity and capabilities from the device, classes stay udev's")
    func refined() {
        let udev = DeviceDescription.fromUdev(properties: keyboardProperties, parentAttributes: keyboardParent,
                                              devnode: "/dev/input/event3")
        let snapshot = EvdevSnapshot(name: "Logitech USB Keyboard", inputID: udev.inputID, phys: "usb-0000:00:14.0-2/input0",
                                     capabilities: [EventType.key: [1, 2, 30], EventType.msc: [4]])
        let info = DeviceDescription.refined(udev, with: snapshot, udevProperties: keyboardProperties)
        #expect(info.classes == [.keyboard, .key])
        #expect(info.capabilities == [EventType.key: [1, 2, 30], EventType.msc: [4]])
        #expect(info.properties["ID_PATH"] == "pci-0000:00:14.0-usb-0:2:1.0")
        #expect(info.devnode == "/dev/input/event3")
        #expect(info.id == udev.id)   // same identity fields → same stable id
    }

    @Test("no ID_INPUT at all (udev not running): classes derived from capabilities")
    func classifierFallback() {
        let udev = DeviceDescription.fromUdev(properties: [:], parentAttributes: ["name": "tablet"], devnode: "/dev/input/event9")
        let snapshot = EvdevSnapshot(name: "tablet", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                                     capabilities: [EventType.abs: [0, 1], EventType.key: [0x140, 0x14b]],
                                     absInfo: [0: AbsInfo(minimum: 0, maximum: 1000), 1: AbsInfo(minimum: 0, maximum: 800)])
        let info = DeviceDescription.refined(udev, with: snapshot, udevProperties: [:])
        #expect(info.classes == [.tablet])
        #expect(info.absInfo[1]?.maximum == 800)
    }
}

@Suite("DeviceInfo of a device gone from sysfs", .ownLiveResources)
struct VanishedDeviceDescriptionTests {
    @Test("the inputN parent's uevent properties stand in for sysfs attributes")
    func parentProperties() {
        let info = DeviceDescription.fromUdev(
            properties: ["ID_INPUT": "1", "ID_INPUT_SWITCH": "1"], parentAttributes: [:],
            parentProperties: ["NAME": "\"evflow e2e cycle\"", "PHYS": "\"\"", "PRODUCT": "6/1d6b/103/1"],
            devnode: "/dev/input/event4")
        #expect(info.name == "evflow e2e cycle")
        #expect(info.inputID == InputID(bustype: 6, vendor: 0x1d6b, product: 0x103, version: 1))
        #expect(info.phys == nil)
        #expect(info.classes == [.switch])
    }

    @Test("sysfs attributes win over the parent's properties when both are there")
    func sysfsFirst() {
        let info = DeviceDescription.fromUdev(properties: [:], parentAttributes: ["name": "real", "id/bustype": "0003"],
                                              parentProperties: ["NAME": "\"stale\"", "PRODUCT": "6/1/2/3"],
                                              devnode: nil)
        #expect(info.name == "real")
        #expect(info.inputID.bustype == 3)
        #expect(info.inputID.vendor == 0)   // sysfs said nothing; PRODUCT only fills a missing bus type
    }
}
