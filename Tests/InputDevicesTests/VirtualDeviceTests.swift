import CEvdev
@testable import InputDevices
import InputModel
import Testing
#if canImport(Glibc)
import Glibc
#endif

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

    @Test("issue #35: a frame goes to the twin in one write(2): its events, then one SYN_REPORT (a SOCK_SEQPACKET pair counts the writes)")
    func oneWritePerFrame() throws {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer { close(fds[0]); close(fds[1]) }
        let frame = InputFrame(time: 5, events: [
            InputEvent(time: 5, type: UInt16(EV_MSC), code: UInt16(MSC_SCAN), value: 0x70004),
            InputEvent(time: 5, type: UInt16(EV_KEY), code: UInt16(KEY_A), value: 1),
            InputEvent(time: 5, type: UInt16(EV_SYN), code: UInt16(SYN_REPORT), value: 0),   // never twice
            InputEvent(time: 5, type: UInt16(EV_REL), code: UInt16(REL_X), value: -3),
        ])
        var scratch: [input_event] = []
        try VirtualDevice.write(frame, to: fds[0], using: &scratch)
        var buffer = [input_event](repeating: input_event(), count: 16)
        let size = MemoryLayout<input_event>.size
        let got = buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(got == 4 * size, "one message: three events and one SYN_REPORT")
        let more = buffer.withUnsafeMutableBytes { recv(fds[1], $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
        #expect(more == -1, "no second write")
        let events = buffer.prefix(4).map { [Int($0.type), Int($0.code), Int($0.value)] }
        #expect(events == [[Int(EV_MSC), Int(MSC_SCAN), 0x70004], [Int(EV_KEY), Int(KEY_A), 1],
                           [Int(EV_REL), Int(REL_X), -3], [Int(EV_SYN), Int(SYN_REPORT), 0]])
    }
}
