import Foundation
import InputModel
import Pipeline
import ReactiveTesting
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// `WATCH` `"stream":"gestures"` through a real server (docs/gestures.md, protocol.md §5
/// GESTURE): a macro pad's double press on the filtered stream (its bounce is no press), the
/// `gestures` member of DEVICES, and a removal mid-sequence that sends `removed` and no gesture.
@Suite(.serialized, .ownLiveResources) struct GestureServerTests {
    static func pad() -> DeviceInfo {
        var info = DeviceInfo(name: "Macro Pad", inputID: InputID(bustype: 3, vendor: 0x1234, product: 0xabcd, version: 1))
        info.classes = [.key]
        info.capabilities = [EventType.key: [183, 184]]   // KEY_F13, KEY_F14
        return info
    }

    @Test func aDoublePressReachesAGesturesWatcherAndTheDeviceListSaysWhatItCanMake() async throws {
        let devices = ManualDevices()
        let pad = Self.pad()
        devices.add(pad)
        let (server, path) = try await startServer(hub: devices.hub)
        do {
            let client = try TestClient(path: path)
            _ = try client.read()
            let list = try client.request(#"{"class":"DEVICES"}"#)
            let listed = (list["devices"] as? [[String: Any]])?.first
            let gestures = listed?["gestures"] as? [String: Any]
            #expect(gestures?["codes"] as? [String] == ["KEY_F13", "KEY_F14"])
            #expect(gestures?["kinds"] as? [String] == GestureKind.allCases.map(\.rawValue))

            let w = try client.request(#"{"class":"WATCH","stream":"gestures","codes":["KEY_F13"]}"#)
            #expect(w["stream"] as? String == "gestures")
            // KEY_F13 pressed with a 2 ms bounce (filtered out), released, pressed again; KEY_F14 not selected.
            for (v, ms) in [(1, 0), (0, 2), (1, 3), (0, 80), (1, 200), (0, 260)] as [(Int32, Int64)] {
                devices.send(pad.id, keyFrame(183, v, ms: ms))
            }
            devices.send(pad.id, keyFrame(184, 1, ms: 270))
            devices.send(pad.id, keyFrame(184, 0, ms: 280))
            devices.scheduler.advance(to: 1_000_000_000)
            let got = try (0..<5).map { _ in try client.read() }
            #expect(got.map { "\($0["code"]!) \($0["gesture"]!) \($0["count"]!)" }
                == ["KEY_F13 press 1", "KEY_F13 release 1", "KEY_F13 press 2", "KEY_F13 release 2", "KEY_F13 double 2"])
            #expect(got.last?["time"] as? Int == 560_000_000)
            #expect(got.allSatisfy { $0["class"] as? String == "GESTURE" && $0["device"] as? String == pad.id.rawValue })
            #expect(try client.request(#"{"class":"PING"}"#)["class"] as? String == "PING")

            // Removal while a single's window is open: `removed`, and no single ever after.
            devices.send(pad.id, keyFrame(183, 1, ms: 1100))
            devices.send(pad.id, keyFrame(183, 0, ms: 1150))
            devices.remove(pad)
            devices.scheduler.advance(to: 3_000_000_000)
            let after = try (0..<3).map { _ in try client.read() }
            #expect(after.map { ($0["gesture"] as? String) ?? ($0["action"] as? String ?? "?") } == ["press", "release", "removed"])
            #expect(try client.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        devices.stop()
    }
}
