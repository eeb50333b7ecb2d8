import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import Recording

@Suite("LibinputRecordReader", .ownLiveResources)
struct LibinputRecordReaderTests {
    @Test func synapticsTouchpadRecording() throws {
        let recording = try LibinputRecordReader.read(contentsOf: Fixtures.url("recordings/libinput/PS2-scrolls.yml"))
        #expect(recording.devices.count == 1)
        let device = recording.devices[0]
        #expect(device.recordedNode == "/dev/input/event5")
        #expect(device.info.name == "SynPS/2 Synaptics TouchPad")
        #expect(device.info.inputID == InputID(bustype: 17, vendor: 2, product: 7, version: 433))
        // Counted with grep: 3712 `- [sec, usec, type, code, value]` lines, 540 of them SYN_REPORT.
        #expect(device.events.count == 3712)
        #expect(device.events.filter(\.isSynReport).count == 540)
        #expect(device.frames().frames.count == 540)
        #expect(device.frames().incompleteFrame.isEmpty)
        #expect(device.events.first == InputEvent(time: 0, type: 3, code: 57, value: 107))
        #expect(device.events.last == InputEvent(time: 18_960_245_000, type: 0, code: 0, value: 0))
        #expect(recording.timestampKind == .relative)
        #expect(device.info.capabilities[EventType.syn] == Set(0...15))
        #expect(device.info.capabilities[EventType.key] == [272, 273, 325, 330, 333, 334])
        #expect(device.info.capabilities[EventType.abs] == [0, 1, 24, 28, 47, 53, 54, 57])
        #expect(device.info.absInfo[0] == AbsInfo(minimum: 1472, maximum: 5590, fuzz: 0, flat: 0, resolution: 58))
        #expect(device.info.absInfo.count == 8)
        #expect(device.info.inputProperties == [0, 3])
        #expect(device.info.properties["ID_INPUT_TOUCHPAD_INTEGRATION"] == "internal")
        #expect(device.info.properties.count == 9)
        #expect(device.info.classes == [.touchpad])   // from ID_INPUT_TOUCHPAD=1
    }

    @Test func devicesShareOneTimeBase() throws {
        let recording = try LibinputRecordReader.read(contentsOf: Fixtures.url("handmade/two-devices.yml"))
        #expect(recording.devices.map(\.info.name) == ["Test Keyboard", "Test Mouse"])
        #expect(recording.eventCount == 10)
        // The mouse moved first (1.000000 s): that is time 0 for both devices.
        #expect(recording.startMicroseconds == 1_000_000)
        #expect(recording.devices[0].events.map(\.time)
            == [250_000_000, 250_000_000, 250_000_000, 400_000_000, 400_000_000])
        #expect(recording.devices[1].events.map(\.time) == [0, 0, 0, 300_000_000, 300_000_000])
        #expect(recording.devices[1].events[0] == InputEvent(time: 0, type: 2, code: 0, value: -3))
        // The `libinput:` entry between the keyboard's frames is not evdev data and is skipped.
        #expect(recording.devices[0].frames().frames.count == 2)
        #expect(recording.devices[0].info.classes == [.key, .keyboard])
        #expect(recording.devices[1].info.inputProperties == [0])
    }

    @Test func recordingReadRecognisesYAML() throws {
        let url = Fixtures.url("recordings/libinput/PS2-scrolls.yml")
        #expect(try Recording.read(contentsOf: url) == LibinputRecordReader.read(contentsOf: url))
    }
}

/// A hand-written `UNIQ` udev property is the device's `uniq` (a Bluetooth address), in its id
/// as for a live device: what `evflowd --sysfs` finds a replayed device's battery by
/// (scripts/check-home-assistant's macro pad).
@Suite(.ownLiveResources) struct LibinputRecordUniqTests {
    func device(_ property: String?) throws -> DeviceInfo {
        let udev = property.map { "  udev:\n    properties:\n    - ID_INPUT=1\n    - \($0)\n" } ?? ""
        let text = "version: 1\ndevices:\n- evdev:\n    name: \"BT Pad\"\n    id: [5, 4660, 43981, 1]\n    codes:\n      1: [256]\n"
            + udev + "  events:\n  - evdev:\n    - [0, 0, 0, 0, 0]\n"
        return try LibinputRecordReader.parse(Array(text.utf8), file: "t.yml").devices[0].info
    }

    @Test func theUNIQPropertyIsTheUniqQuotedOrNot() throws {
        let plain = try device("UNIQ=aa:bb:cc:dd:ee:ff"), quoted = try device("UNIQ=\"aa:bb:cc:dd:ee:ff\"")
        #expect(plain.uniq == "aa:bb:cc:dd:ee:ff" && quoted.uniq == "aa:bb:cc:dd:ee:ff")
        #expect(plain.id == DeviceID(name: "BT Pad", inputID: InputID(bustype: 5, vendor: 4660, product: 43981, version: 1),
                                     phys: nil, uniq: "aa:bb:cc:dd:ee:ff"))
        #expect(try device(nil).uniq == nil)
        #expect(try device("UNIQ=").uniq == nil)
        #expect(try device(nil).id != plain.id)
    }
}
