import Foundation
import InputModel
import ReactiveTesting
import Testing
@testable import Recording

@Suite("EvemuWriter", .ownLiveResources)
struct EvemuWriterTests {
    /// Every evemu fixture we ship, real and hand-made.
    static let files: [(events: String, description: String?)] =
        EvemuFixture.all.map { ("recordings/evemu-devices/" + $0.events,
                                $0.description.map { "recordings/evemu-devices/" + $0 }) }
        + [("handmade/zero-times.evemu", nil), ("handmade/partial-frame.evemu", nil),
           ("handmade/old-format.evemu", nil)]

    @Test(arguments: files.indices)
    func roundTripGivesAnEqualDevice(_ index: Int) throws {
        let file = Self.files[index]
        let original = try EvemuReader.read(events: Fixtures.url(file.events),
                                            description: file.description.map(Fixtures.url))
        let written = EvemuWriter.write(original.devices[0], startMicroseconds: original.startMicroseconds)
        #expect(written.starts(with: Array("# EVEMU 1.3\n".utf8)))
        let reread = try EvemuReader.parse(written, file: "written")
        #expect(reread.devices == original.devices, "\(file.events)")
        #expect(reread.startMicroseconds == original.startMicroseconds)
        #expect(reread.timestampKind == original.timestampKind)
        // Writing again is byte-identical: nothing drifts on repeated round trips.
        #expect(EvemuWriter.write(reread.devices[0], startMicroseconds: reread.startMicroseconds) == written)
    }

    /// Our `E:` lines are the ones evemu-record 1.3 writes, name comments included.
    @Test(arguments: ["tablets/dell_canvas_pen.evemu",
                      "touchscreens/Atmel maXTouch Touchscreen.4-finger-drag-down.events",
                      "keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events"])
    func eventLinesMatchEvemuRecordByteForByte(_ file: String) throws {
        let url = Fixtures.evemu(file)
        let original = try EvemuReader.read(contentsOf: url)
        let written = String(decoding: EvemuWriter.write(original.devices[0],
                                                         startMicroseconds: original.startMicroseconds),
                             as: UTF8.self)
        let source = try String(contentsOf: url, encoding: .utf8)
        func eventLines(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { $0.hasPrefix("E:") }
        }
        #expect(eventLines(written) == eventLines(source))
        #expect(eventLines(written).count == original.devices[0].events.count)
        // The description lines too (evemu writes the same N:/I:/P:/B:/A: lines).
        func descriptionLines(_ text: String) -> [Substring] {
            text.split(separator: "\n").filter { ["N:", "I:", "P:", "B:", "A:"].contains(String($0.prefix(2))) }
        }
        #expect(descriptionLines(written) == descriptionLines(source))
    }

    @Test func valuesAreWrittenLikePrintfPercent04d() {
        var out: [UInt8] = []
        EvemuWriter.appendEvent(InputEvent(time: 1_500_000_000, type: 2, code: 1, value: -13),
                                startMicroseconds: 0, to: &out)
        EvemuWriter.appendEvent(InputEvent(time: 2_000_999, type: 0x15, code: 0x1ff, value: 458_792),
                                startMicroseconds: 7, to: &out)
        #expect(String(decoding: out, as: UTF8.self)
            == "E: 1.500000 0002 0001 -013\nE: 0.002007 0015 01ff 458792\n")
    }

    @Test func maskLinesCoverTheStandardSizes() {
        #expect(EvemuWriter.maskLines([], minimumBytes: 96).count == 12)
        #expect(EvemuWriter.maskLines([0, 9, 63], minimumBytes: 8) == [[0x01, 0x02, 0, 0, 0, 0, 0, 0x80]])
        #expect(EvemuWriter.maskLines([64], minimumBytes: 8).count == 2)
    }

    /// Found by fuzzing (`fuzz-regressions/libinput-record/found-empty-name.yml`): a device
    /// with an empty name was written as an empty `N:` line the reader refused.
    @Test func anEmptyNameRoundTrips() throws {
        let info = DeviceInfo(name: "", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                              capabilities: [0x02: [0]])
        let device = RecordedDevice(info: info, events: [InputEvent(time: 0, type: 2, code: 0, value: 1),
                                                         InputEvent(time: 0, type: 0, code: 0, value: 0)])
        let reread = try EvemuReader.parse(EvemuWriter.write(device), file: "empty-name.evemu")
        #expect(reread.devices.first?.info.name == "")
        #expect(reread.devices.first?.events == device.events)
    }
}
