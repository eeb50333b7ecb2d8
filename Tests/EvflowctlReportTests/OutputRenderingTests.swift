import EvflowProtocol
import InputModel
import Testing
@testable import evflowctl

/// evflowctl shows each device's output (protocol 1.3, issue #21): DEVICES, STATE, STATS.
@Suite("evflowctl: device output")
struct OutputRenderingTests {
    static func keyboard(_ output: DeviceOutputStatus?) -> DeviceInfo {
        var d = DeviceInfo(name: "Keyboard", inputID: InputID(bustype: 3, vendor: 1, product: 2, version: 1),
                           devnode: "/dev/input/event3", classes: [.keyboard], id: DeviceID(rawValue: "0003:0001:0002-00000001"))
        d.output = output
        return d
    }

    @Test("DEVICES gets an OUTPUT column when the server reports outputs: grabbed with the twin's node, waiting, or why not grabbed")
    func devicesColumn() {
        #expect(!Render.devices([Self.keyboard(nil)]).text.contains("OUTPUT"), "a 1.2 server: no column")
        let grabbed = Render.devices([Self.keyboard(DeviceOutputStatus(mode: .virtual, virtualNode: "/dev/input/event9", grab: .grabbed))]).text
        #expect(grabbed.hasPrefix("ID") && grabbed.contains("OUTPUT"))
        #expect(grabbed.contains("virtual, grabbed → /dev/input/event9"))
        #expect(Render.output(.observed) == "observe")
        #expect(Render.output(DeviceOutputStatus(mode: .virtual, virtualNode: "/dev/input/event9", grab: .waiting))
                == "virtual, waiting for release → /dev/input/event9")
        #expect(Render.output(DeviceOutputStatus(mode: .virtual, reason: "not grabbed: another program holds a grab (EBUSY)"))
                == "virtual, not grabbed: another program holds a grab (EBUSY)")
    }

    @Test("STATE has an output line; STATS a table of frames written and write errors per device")
    func stateAndStats() {
        let state = Render.state(DeviceStateReport(device: Self.keyboard(DeviceOutputStatus(mode: .virtual, reason: "released by the panic chord")))).text
        #expect(state.contains("output      virtual, released by the panic chord\n"))
        var stats = ServerStats(release: "1", uptime: 1, now: 1, devices: 1, clients: 0, watchers: 0, liveResources: 0)
        stats.deviceOutput = [Self.keyboard(nil).id: DeviceOutputCounters(framesWritten: 812, writeErrors: 2)]
        let text = Render.stats(stats).text
        #expect(text.contains("WRITTEN") && text.contains("WRITE ERRORS"))
        #expect(text.contains("0003:0001:0002-00000001  812      2"))
    }
}
