import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing
@testable import StateServer

/// A port that grabs and writes without a kernel (the hub's own tests log its calls).
private final class AcceptingPort: DeviceOutputPort, @unchecked Sendable {
    var virtualRefusal: String? { nil }
    func createTwin() throws(DeviceOutputError) -> String { "/dev/input/event42" }
    func grab() throws(DeviceOutputError) -> Int64 { .min }   // frames of any time are after it
    func write(_ frame: InputFrame) throws(DeviceOutputError) {}
    func releaseAll() {}
    func destroyTwin() {}
    func ungrab() {}
    func keysDown() -> Set<UInt16>? { [] }
}

/// DEVICES, STATE and STATS over the socket carry each device's output (protocol 1.3, issue #21).
@Suite(.ownLiveResources) struct OutputServerTests {
    @Test("DEVICES and STATE show output (grabbed with its twin's node; observe); STATS counts the frames written per virtual device")
    func outputOverTheSocket() async throws {
        let keyboard = testKeyboard("Grabbed Keyboard"), other = testKeyboard("Plain Keyboard", product: 2)
        var config = FilterConfig()
        var rule = FilterConfig.Rule(match: .init(name: "Grabbed*"))
        rule.output = .virtual
        config.rules = [rule]
        let devices = ManualDevices(config: config)
        devices.add(keyboard, output: AcceptingPort())
        devices.add(other, output: AcceptingPort())
        devices.send(keyboard.id, keyFrame(30, 1, ms: 1))
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let c = try TestClient(path: path)
            _ = try c.read()
            let list = try #require(try c.request(#"{"class":"DEVICES"}"#)["devices"] as? [[String: Any]])
            let outputs = Dictionary(uniqueKeysWithValues: list.map { ($0["name"] as? String ?? "", $0["output"] as? [String: String] ?? [:]) })
            #expect(outputs["Grabbed Keyboard"] == ["mode": "virtual", "virtual_node": "/dev/input/event42", "grab": "grabbed"])
            #expect(outputs["Plain Keyboard"] == ["mode": "observe", "grab": "none"])
            let state = try c.request(#"{"class":"STATE","device":"Grabbed Keyboard"}"#)
            let device = try #require(state["device"] as? [String: Any])
            #expect((device["output"] as? [String: String])?["grab"] == "grabbed")
            let stats = try c.request(#"{"class":"STATS"}"#)
            let written = try #require(stats["device_output"] as? [String: [String: Int]])
            #expect(written == [keyboard.id.rawValue: ["frames_written": 1, "write_errors": 0]])
            c.close()
        }
        await server.shutdown()
        devices.stop()
    }
}
