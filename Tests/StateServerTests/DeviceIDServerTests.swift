import Foundation
import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Recording
import Testing
@testable import StateServer
import EvflowProtocol

/// Issue #34, item 11: every id evflowd prints selects its device — `X#2` of a second identical
/// device and a session's own ids included, which `WATCH` read as names and matched nothing (an
/// empty stream, no error: `evflowctl watch --device`, `record`, `analyze --live` captured 0
/// frames). An id or name that selects nothing is now an `ERROR`, and the connection lives on.
@Suite(.serialized, .ownLiveResources)
struct DeviceIDServerTests {
    static let ms: Int64 = 1_000_000

    /// Two identical keyboards (plain recordings: `X`, `X#2`) and a session's device with an id
    /// of its own, each with one key press at its own time (100, 200, 300 ms), present until
    /// the replay stops.
    final class Rig: @unchecked Sendable {
        let scheduler = VirtualTimeScheduler()
        let hub: DeviceHub
        private var subscription: Disposable?

        init() {
            let keyboard = testKeyboard("Identical keyboard")
            func press(_ code: UInt16, ms t: Int64) -> [InputEvent] {
                [InputEvent(time: t * DeviceIDServerTests.ms, type: EventType.key, code: code, value: 1),
                 InputEvent(time: t * DeviceIDServerTests.ms, type: EventType.syn, code: SynCode.report, value: 0)]
            }
            var pad = testKeyboard("Session pad", product: 7)
            pad.id = DeviceID(rawValue: "my-pad")
            let session = Session(devices: [SessionDevice(handle: "p", info: pad)],
                                  appearances: [SessionAppearance(device: 0, added: 0, removed: nil, events: press(42, ms: 300))])
            let replay = ReplaySource(recordings: [Recording(devices: [RecordedDevice(info: keyboard, events: press(30, ms: 100))]),
                                                   Recording(devices: [RecordedDevice(info: keyboard, events: press(31, ms: 200))])],
                                      sessions: [session], scheduler: scheduler, removeAtEnd: false)
            hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: scheduler, latencyClock: .replay)
            subscription = hub.run(replay.devices)
            scheduler.advance(by: .zero)
        }

        func advance(ms t: Int64) { scheduler.advance(to: t * DeviceIDServerTests.ms) }

        func stop() {
            subscription?.dispose()
            subscription = nil
            scheduler.advance(by: .zero)
        }
    }

    @Test("WatchRequest.resolved: an entry is a present device's id first (whatever its form), then a class, then a present device's name; none of these is refused naming the entry")
    func resolutionOrder() throws {
        var kb = testKeyboard("keyboard-like")
        kb.id = DeviceID(rawValue: kb.id.rawValue + "#2")
        var odd = testMouse("0003:1234:0001-00000000")   // a name spelt like an id
        odd.id = DeviceID(rawValue: "mouse")             // a session's id spelt like a class
        let present = [kb, odd]
        let parsed = try WatchRequest.checked(devices: [kb.id.rawValue, "mouse", "keyboard", "0003:1234:0001-00000000", "keyboard-like"])
        #expect(parsed.devices.first == .name(kb.id.rawValue), "parsing alone reads X#2 as a name")
        let resolved = try parsed.resolved(among: present)
        #expect(resolved.devices == [.id(kb.id), .id(odd.id), .deviceClass(.keyboard), .name(odd.name), .name(kb.name)])
        #expect(resolved.devices.map(\.text) == parsed.devices.map(\.text), "the entries are written back as sent")
        #expect(resolved.selects(kb) && resolved.selects(odd))
        #expect(throws: ProtocolError(.unmatchedDevice("0003:1234:0001-00000001"), requestClass: "WATCH")) {
            try WatchRequest.checked(devices: ["keyboard", "0003:1234:0001-00000001"]).resolved(among: present)
        }
        #expect(try WatchRequest.checked(devices: ["joystick"]).resolved(among: []).devices == [.deviceClass(.joystick)],
                "a class selects later devices: no error when none is present")
    }

    @Test("DEVICES lists X, X#2 and a session's own id; STATE and WATCH by each select exactly that device, whose frames the watch streams")
    func everyPrintedIDSelectsItsDevice() async throws {
        let rig = Rig()
        let (server, path) = try await startServer(hub: rig.hub)
        do {
            let x = testKeyboard("Identical keyboard").id.rawValue
            let c = try TestClient(path: path)
            _ = try c.read()
            let list = try c.request(#"{"class":"DEVICES"}"#)
            let ids = try #require((list["devices"] as? [[String: Any]])?.compactMap { $0["id"] as? String })
            #expect(ids == [x, x + "#2", "my-pad"])
            var watchers: [(id: String, client: TestClient)] = []
            for id in ids {
                let state = try c.request(#"{"class":"STATE","device":"\#(id)"}"#)
                #expect((state["device"] as? [String: Any])?["id"] as? String == id, "STATE \(id)")
                let w = try TestClient(path: path)
                _ = try w.read()
                let reply = try w.request(#"{"class":"WATCH","devices":["\#(id)"]}"#)
                #expect(reply["class"] as? String == "WATCH", "WATCH \(id): \(reply)")
                #expect(reply["devices"] as? [String] == [id])
                #expect(reply["matched"] as? [String] == [id], "WATCH \(id)")
                watchers.append((id, w))
            }
            rig.advance(ms: 400)
            for ((id, w), code) in zip(watchers, ["KEY_A", "KEY_S", "KEY_LEFTSHIFT"]) {
                let frame = try w.read()
                #expect(frame["class"] as? String == "FRAME", "\(id): \(frame)")
                #expect(frame["device"] as? String == id)
                let events = frame["events"] as? [[String: Any]]
                #expect(events?.first?["code"] as? String == code, "\(id) gets its own device's key only")
                #expect(try w.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "\(id): nothing else was streamed")
            }
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        rig.stop()
    }

    @Test("WATCH with an id or a name that no device has is an ERROR (field devices) naming it, not an empty stream; the connection answers on and the watch in force stays")
    func unknownIDOrNameIsAnError() async throws {
        let rig = Rig()
        let (server, path) = try await startServer(hub: rig.hub)
        do {
            let x = testKeyboard("Identical keyboard").id.rawValue
            let c = try TestClient(path: path)
            _ = try c.read()
            let first = try c.request(#"{"class":"WATCH","devices":["\#(x)#2"],"id":"kept"}"#)
            #expect(first["matched"] as? [String] == [x + "#2"])
            for entry in [x + "#3", "0003:1234:0001-deadbeef", "No such keyboard", "my-pad#2"] {
                let e = try c.request(#"{"class":"WATCH","devices":["keyboard","\#(entry)"],"id":"w"}"#)
                #expect(e["class"] as? String == "ERROR", "\(entry): \(e)")
                #expect(e["field"] as? String == "devices")
                #expect(e["request_class"] as? String == "WATCH")
                #expect(e["id"] as? String == "w")
                #expect(e["message"] as? String == "no device '\(entry)' (an id or exact name of a device evflowd has, or a class)")
                #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING", "still answering after \(entry)")
            }
            // A name that several devices share selects them all; a class selects even when none is present.
            let named = try c.request(#"{"class":"WATCH","devices":["Identical keyboard","joystick"]}"#)
            #expect(named["matched"] as? [String] == [x, x + "#2"])
            let stats = try c.request(#"{"class":"STATS"}"#)
            #expect(stats["watchers"] as? Int == 1)
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        rig.stop()
    }
}
