@testable import InputDevices
import Testing

/// The parts of the twin that need no kernel: its name, and how the monitor recognises a twin
/// (the uinput cases run in the QEMU devices suite, Tests/E2E).
@Suite("VirtualDevice: name and recognition")
struct VirtualDeviceTests {
    @Test("the twin's name is the physical name plus \" (evflow)\", cut at a character boundary to fit uinput's 80 bytes")
    func twinName() {
        #expect(VirtualDevice.twinName(for: "AT Translated Set 2 keyboard") == "AT Translated Set 2 keyboard (evflow)")
        let long = "a" + String(repeating: "é", count: 60)   // 121 bytes
        let name = VirtualDevice.twinName(for: long)
        #expect(name.utf8.count <= 79)
        #expect(name.hasSuffix(" (evflow)"))
        #expect(name.utf8.count == 78, "70 bytes of the name would split an é: 69, whole characters")
        #expect(VirtualDevice.twinName(for: "") == " (evflow)")
    }

    @Test("a twin is recognised by the udev property EVFLOW_VIRTUAL=1, a virtual device named '… (evflow)', or this process's own registry (its inputN syspath or its node)")
    func recognition() {
        let input = "/sys/devices/virtual/input/input9901"
        let event = input + "/event99"
        #expect(!VirtualTwins.isTwin(syspath: event, devnode: "/dev/input/event99", properties: [:]))
        #expect(VirtualTwins.isTwin(syspath: "/sys/devices/virtual/input/input7/event7", devnode: "/dev/input/event7",
                                    properties: ["EVFLOW_VIRTUAL": "1"]))
        #expect(!VirtualTwins.isTwin(syspath: "/sys/devices/virtual/input/input7/event7", devnode: "/dev/input/event7",
                                     properties: ["EVFLOW_VIRTUAL": "0"]))
        // What the shipped udev rule matches: a twin that left the registry before its `add` came.
        #expect(VirtualTwins.isTwin(syspath: "/sys/devices/virtual/input/input8/event8", devnode: "/dev/input/event8",
                                    properties: [:], name: "Keyboard (evflow)"))
        #expect(!VirtualTwins.isTwin(syspath: "/sys/devices/platform/i8042/serio0/input/input0/event0", devnode: "/dev/input/event0",
                                     properties: [:], name: "Keyboard (evflow)"), "a real device's name is its own business")
        #expect(!VirtualTwins.isTwin(syspath: "/sys/devices/virtual/input/input8/event8", devnode: "/dev/input/event8",
                                     properties: [:], name: "evflow test keyboard"))
        VirtualTwins.add(syspath: input, devnode: "/dev/input/event99")
        #expect(VirtualTwins.isTwin(syspath: event, devnode: "/dev/input/event99", properties: [:]))
        #expect(VirtualTwins.isTwin(syspath: "/sys/other/event99", devnode: "/dev/input/event99", properties: [:]), "by its node")
        #expect(!VirtualTwins.isTwin(syspath: "/sys/devices/virtual/input/input99010/event5", devnode: "/dev/input/event5", properties: [:]),
                "a syspath that only starts like the twin's is not it")
        VirtualTwins.remove(syspath: input, devnode: "/dev/input/event99")
        #expect(!VirtualTwins.isTwin(syspath: event, devnode: "/dev/input/event99", properties: [:]))
    }
}
