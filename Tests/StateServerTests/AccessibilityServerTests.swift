import DeviceStreams
import Dispatch
import Foundation
import InputModel
import Pipeline
import Reactive
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// `ACCESSIBILITY` through a real server (docs/protocol.md §4): read, switched live with the
/// effect on the next key a watcher sees, pipelined answers in request order, and every error
/// (bad value, unknown or ambiguous device, a client that may not change them) an `ERROR` that
/// leaves the connection open.
@Suite(.serialized, .ownLiveResources) struct AccessibilityServerTests {
    /// A hub on a serial queue (the request is answered from the hub's scheduler, which a
    /// virtual clock driven by the test thread could not be); frames are sent on that queue.
    final class QueueHub: @unchecked Sendable {
        let queue = DispatchQueue(label: "accessibility-hub")
        let hub: DeviceHub
        private let devices = PublishSubject<DeviceStream>()
        private var frames: [DeviceID: PublishSubject<InputFrame>] = [:]
        private let running: Disposable

        init() {
            hub = DeviceHub(store: StateStore(), config: FilterConfig(),
                            scheduler: SerialDispatchQueueScheduler(serialQueue: queue), latencyClock: .replay)
            running = hub.run(devices.asObservable())
        }

        func add(_ info: DeviceInfo) {
            let subject = PublishSubject<InputFrame>()
            frames[info.id] = subject
            queue.sync { devices.onNext(DeviceStream(info: info, frames: subject.asObservable())) }
        }

        func send(_ id: DeviceID, _ frame: InputFrame) {
            queue.sync { frames[id]?.onNext(frame) }
        }

        func stop() {
            queue.sync { for f in frames.values { f.onCompleted() } }
            running.dispose()
            queue.sync {}
        }
    }

    func keys(_ m: [String: Any]) -> [String] {
        (m["events"] as? [[String: Any]] ?? []).filter { $0["type"] as? String == "EV_KEY" }
            .map { "\($0["code"]!)=\($0["value"]!)@\((m["time"] as? Int ?? -1) / 1_000_000)" }
    }

    @Test func switchedLiveTheNextKeysAreFilteredAndEveryErrorLeavesTheConnectionOpen() async throws {
        let held = QueueHub()
        let kb = testKeyboard(), mouse = testMouse()
        held.add(kb)
        held.add(mouse)
        let (server, path) = try await startServer(hub: held.hub)
        do {
            let c = try TestClient(path: path)
            #expect(try c.read()["keys"] as? String == "visible")

            // Read: nothing set, by id or by name.
            let read = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard"}"#)
            #expect(read["class"] as? String == "ACCESSIBILITY")
            #expect(read["device"] as? String == kb.id.rawValue)
            #expect(read["bounce_keys"] as? Int == 0 && read["slow_keys"] as? Int == 0)
            #expect(read["live"] as? [String] == [] && read["keys"] as? Bool == true)

            // Switched on, then the keys typed through a watcher: a re-press 50 ms after its
            // release is ignored with its release, one 350 ms after counts.
            let on = try c.request(#"{"class":"ACCESSIBILITY","device":"\#(kb.id.rawValue)","bounce_keys":300,"id":"on"}"#)
            #expect(on["bounce_keys"] as? Int == 300 && on["live"] as? [String] == ["bounce_keys"] && on["id"] as? String == "on")
            _ = try c.request(#"{"class":"WATCH","devices":["keyboard"],"types":["EV_KEY"]}"#)
            for (v, t) in [(1, 0), (0, 50), (1, 100), (0, 120), (1, 470), (0, 490)] as [(Int32, Int64)] {
                held.send(kb.id, keyFrame(30, v, ms: t))
            }
            let typed = try (0..<4).map { _ in try c.read() }
            #expect(typed.flatMap(keys) == ["KEY_A=1@0", "KEY_A=0@50", "KEY_A=1@470", "KEY_A=0@490"])
            _ = try c.request(#"{"class":"UNWATCH"}"#)
            let state = try c.request(#"{"class":"STATE","device":"Test Keyboard"}"#)
            let stateText = String(decoding: try JSONSerialization.data(withJSONObject: state), as: UTF8.self)
            #expect(stateText.contains("bounce_keys"), "\(stateText)")

            // Malformed values: an ERROR naming the field, and the connection goes on.
            for bad in [#""slow_keys":-5"#, #""slow_keys":86400000"#, #""bounce_keys":"fast""#, #""bounce_keys":1.5"#] {
                let e = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard","# + bad + #","id":9}"#)
                #expect(e["class"] as? String == "ERROR", "\(bad)")
                #expect(e["request_class"] as? String == "ACCESSIBILITY")
                #expect(e["id"] as? Int == 9)
                #expect((e["message"] as? String)?.contains("milliseconds from 0 to 60000") == true, "\(e)")
            }
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")

            // Unknown device; a mouse (no keyboard keys: said so).
            let unknown = try c.request(#"{"class":"ACCESSIBILITY","device":"nope","slow_keys":200}"#)
            #expect(unknown["class"] as? String == "ERROR" && unknown["field"] as? String == "device")
            #expect(unknown["message"] as? String == "no device 'nope'")
            let m = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Mouse"}"#)
            #expect(m["keys"] as? Bool == false)

            // Pipelined: the answers come in request order, after the hub's.
            try c.send(#"{"class":"ACCESSIBILITY","device":"Test Keyboard","slow_keys":"off","id":1}"# + "\n"
                + #"{"class":"ACCESSIBILITY","device":"Test Keyboard","bounce_keys":"config","id":2}"# + "\n"
                + #"{"class":"PING","id":3}"#)
            let answers = try (0..<3).map { _ in try c.read() }
            #expect(answers.map { $0["id"] as? Int } == [1, 2, 3])
            #expect(answers[0]["live"] as? [String] == ["bounce_keys", "slow_keys"])
            #expect(answers[1]["live"] as? [String] == ["slow_keys"] && answers[1]["bounce_keys"] as? Int == 0)

            // Ambiguous: a second keyboard of the same name.
            let twin = testKeyboard("Test Keyboard", product: 2)
            held.add(twin)
            let ambiguous = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard"}"#)
            #expect(ambiguous["field"] as? String == "device")
            #expect(ambiguous["message"] as? String == "several devices are named 'Test Keyboard'; use the id")
            #expect(try c.request(#"{"class":"PING"}"#)["class"] as? String == "PING")
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        held.stop()
    }

    @Test func aClientThatDoesNotSeeKeysMayReadButNotChange() async throws {
        let held = QueueHub()
        let kb = testKeyboard()
        held.add(kb)
        let (server, path) = try await startServer(hub: held.hub, trustRootAndSelf: false) {
            $0.keysGIDs = [getgid() &+ 4242]
        }
        do {
            let c = try TestClient(path: path)
            #expect(try c.read()["keys"] as? String == "hidden")
            let read = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard"}"#)
            #expect(read["class"] as? String == "ACCESSIBILITY")
            for (member, field) in [(#""slow_keys":200"#, "slow_keys"), (#""bounce_keys":"config""#, "bounce_keys")] {
                let refused = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard","# + member + "}")
                #expect(refused["class"] as? String == "ERROR")
                #expect(refused["field"] as? String == field)
                #expect((refused["message"] as? String)?.hasPrefix("this client may not change '\(field)'") == true)
            }
            // Nothing changed.
            let after = try c.request(#"{"class":"ACCESSIBILITY","device":"Test Keyboard"}"#)
            #expect(after["slow_keys"] as? Int == 0 && after["live"] as? [String] == [])
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        held.stop()
    }

    @Test func evflowctlAccessibilityShowsAndSwitchesAndRefusesBadTimesBeforeConnecting() async throws {
        let held = QueueHub()
        let kb = testKeyboard()
        held.add(kb)
        let (server, path) = try await startServer(hub: held.hub)
        do {
            let shown = try runEvflowctl(["accessibility", "Test Keyboard", "--socket", path])
            #expect(shown.status == 0, "\(shown.stderr)")
            #expect(shown.stdout == "\(kb.id.rawValue)\n  bouncekeys off (configuration)\n  slowkeys   off (configuration)\n")
            let set = try runEvflowctl(["accessibility", "Test Keyboard", "bouncekeys", "0.3s", "slowkeys", "150ms", "--socket", path])
            #expect(set.status == 0, "\(set.stderr)")
            #expect(set.stdout == "\(kb.id.rawValue)\n  bouncekeys 300ms (live)\n  slowkeys   150ms (live)\n")
            let json = try runEvflowctl(["accessibility", "Test Keyboard", "slowkeys", "config", "--json", "--socket", path])
            #expect(json.stdout.contains(#""slow_keys":0"#) && json.stdout.contains(#""live":["bounce_keys"]"#), "\(json.stdout)")
            // Bad words and times: a usage error (64) with the reason, nothing sent.
            for bad in [["bouncekeys", "-5ms"], ["slowkeys", "61s"], ["slowkeys", "1.5ms"], ["slowkeys", "nan"], ["slowkeys"],
                        ["stickykeys", "1s"]] {
                let r = try runEvflowctl(["accessibility", "Test Keyboard"] + bad + ["--socket", path])
                #expect(r.status == 64, "\(bad): \(r.status) \(r.stderr)")
                #expect(!r.stderr.isEmpty)
            }
            let unknown = try runEvflowctl(["accessibility", "nope", "slowkeys", "1s", "--socket", path])
            #expect(unknown.status != 0 && unknown.stderr.contains("no device 'nope'"), "\(unknown.stderr)")
            let after = try runEvflowctl(["accessibility", kb.id.rawValue, "--socket", path])
            #expect(after.stdout.contains("bouncekeys 300ms (live)") && after.stdout.contains("slowkeys   off (configuration)"))
        }
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        held.stop()
    }
}
