import DeviceStreams
import Foundation
import InputModel
import Pipeline
import Recording
import Reactive
import Testing
@testable import EvflowProtocol
@testable import StateServer

/// Device names come from USB descriptors: any gadget can name itself with escape sequences.
/// Printed raw they retitle the terminal, clear it, or hide text (issue #25, finding 7).
@Suite(.serialized, .ownLiveResources) struct HostileNameTests {
    /// ESC sequences (clear screen, window title ending in BEL), NUL, DEL and a C1 CSI.
    static let name = "Evil\u{1b}[2J\u{1b}]0;pwned\u{07}\u{0}pad\u{7f}\u{9b}31m"
    static let shown = #"Evil\x1b[2J\x1b]0;pwned\x07\x00pad\x7f\x9b31m"#

    /// Whether `text` holds a control character other than the line feed.
    static func hasControl(_ text: String) -> Bool {
        text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\n") || (0x7f...0x9f).contains($0.value) }
    }

    @Test func controlCharactersAreWrittenOutAndOtherTextIsKept() {
        #expect(VisibleText.escaped(Self.name) == Self.shown)
        #expect(VisibleText.escaped("Logitech K400 – Ü \\ \"x\"") == "Logitech K400 – Ü \\ \"x\"")
    }

    @Test func evflowctlDevicesStateAndWatchShowTheNameEscaped() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard(Self.name)
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        let list = try runEvflowctl(["devices", "--socket", path])
        #expect(list.status == 0)
        #expect(!Self.hasControl(list.stdout), "\(list.stdout.debugDescription)")
        #expect(list.stdout.contains(Self.shown))
        let state = try runEvflowctl(["state", "--socket", path, kb.id.rawValue])
        #expect(state.status == 0)
        #expect(!Self.hasControl(state.stdout), "\(state.stdout.debugDescription)")
        #expect(state.stdout.contains("device      \(Self.shown) (\(kb.id.rawValue))"))
        await server.shutdown()
        devices.stop()
    }

    @Test func metricsLabelsHoldNoControlCharacters() {
        var counters = Pipeline.DeviceCounters()
        counters.framesIn = 3
        let text = MetricsExporter().export(MetricsSnapshot(
            devices: [(info: testKeyboard(Self.name), counters: counters)], clientsWatching: 0, clientsIdle: 0,
            closed: [:], bytesSent: 0, liveResources: 0, uptime: 1, release: "test", source: nil))
        #expect(!Self.hasControl(text))
        // The text format escapes the backslash of each `\x`: a parser reads back `Self.shown`.
        let label = "name=\"" + Self.shown.replacingOccurrences(of: "\\", with: "\\\\") + "\""
        #expect(text.contains("evflow_device_frames_in_total{device=\"\(testKeyboard(Self.name).id.rawValue)\",\(label)} 3"))
    }

    /// Issue #34, finding 6: the `device` (and `sensor`) label carried the id raw. A replayed
    /// session's ids are the file's, a stranger's text: `evflowctl metrics` printed its ESC.
    /// Now the id passes the one rule as the name does; the text format's own escapes
    /// (`\\`, `\"`, `\n`) are the library's.
    @Test func issue34MetricsDeviceLabelEscapesTheID() {
        var counters = Pipeline.DeviceCounters()
        counters.framesIn = 3
        var kb = testKeyboard("K")
        kb.id = DeviceID(rawValue: "id\u{1b}[2J\u{7}\"q\"\\\u{9b}\u{202e}")
        let text = MetricsExporter().export(MetricsSnapshot(
            devices: [(info: kb, counters: counters)], clientsWatching: 0, clientsIdle: 0,
            closed: [:], bytesSent: 0, liveResources: 0, uptime: 1, release: "test", source: nil))
        #expect(!Self.unsafe(text), "\(text.debugDescription)")
        #expect(text.contains(#"evflow_device_frames_in_total{device="id\\x1b[2J\\x07\"q\"\\\\x9b\\u202e",name="K"} 3"#),
                "\(text)")
    }

    /// Issue #34, finding 6, as a user meets it: every evflowctl command, the built binary,
    /// against a server whose device has a hostile name *and* id, with another client whose
    /// WATCH id is hostile, and over a session and a sensor recording with hostile names.
    /// Before, `stats` printed the WATCH id raw, `devices`/`state`/`stats`/`latency`/`watch`
    /// the id raw, METRICS' `device` label held the id's ESC, `analyze` the name.
    static let hostileID = "k\u{1b}]0;id\u{7}\u{9b}2J\u{202e}"
    static let hostileTag = #"t\u001b[2J\u0007\u009b31m\u202e\n"#

    /// Whether `text` holds a raw control (C0 but the line feed, DEL, C1) or a bidi control.
    static func unsafe(_ text: String) -> Bool {
        hasControl(text) || text.unicodeScalars.contains { (0x202A...0x202E).contains($0.value) || (0x2066...0x2069).contains($0.value) }
    }

    @Test func issue34EveryCommandOverHostileNamesIdsAndWatchIDs() async throws {
        // The hub on a real serial queue: LATENCY (latency, top) is answered on the hub's thread.
        let queue = DispatchQueue(label: "hostile-test-hub")
        let hub = DeviceHub(store: StateStore(), config: FilterConfig(), scheduler: SerialDispatchQueueScheduler(serialQueue: queue),
                            latencyClock: .monotonic)
        let devices = PublishSubject<DeviceStream>()
        let running = hub.run(devices.asObservable())
        var kb = testKeyboard(Self.name)
        kb.id = DeviceID(rawValue: Self.hostileID)
        let frames = PublishSubject<InputFrame>()
        queue.sync { devices.onNext(DeviceStream(info: kb, frames: frames.asObservable())) }
        #expect(await eventually { hub.devices.count == 1 })
        let (server, path) = try await startServer(hub: hub)
        let other = try TestClient(path: path)
        _ = try other.read()   // the greeting
        try other.send(#"{"class":"WATCH","id":"\#(Self.hostileTag)"}"#)
        _ = try other.read()
        var runs: [(String, (status: Int32, stdout: String, stderr: String))] = []
        for args in [["devices"], ["state", Self.hostileID], ["stats"], ["latency"], ["latency", "--device", Self.hostileID],
                     ["metrics"], ["top", "--iterations", "1", "--interval", "0.1"],
                     ["analyze", "--live", Self.hostileID, "--duration", "0.2"]] {
            runs.append((args[0], try runEvflowctl(args + ["--socket", path])))
        }
        // watch: a device added (hostile name and id) and a frame of it.
        let watch = Task.detached { try runEvflowctl(["watch", "--socket", path, "--count", "2"]) }
        #expect(await eventually {
            guard let c = try? TestClient(path: path), (try? c.read()) != nil else { return false }
            return (try? c.request(#"{"class":"STATS"}"#))?["watchers"] as? Int == 2
        })
        var second = testKeyboard(Self.name, product: 2)
        second.id = DeviceID(rawValue: Self.hostileID + "2")
        let secondFrames = PublishSubject<InputFrame>()
        queue.sync { devices.onNext(DeviceStream(info: second, frames: secondFrames.asObservable())) }
        #expect(await eventually { hub.devices.count == 2 })
        queue.sync {
            secondFrames.onNext(InputFrame(time: 1_000_000, events: [InputEvent(time: 1_000_000, type: EventType.key, code: 30, value: 1)]))
        }
        runs.append(("watch", try await watch.value))
        // Files: a session (convert's error lists its devices) and analyze over its evemu.
        var recorder = SessionRecorder()
        let index = recorder.add(kb, at: 1)
        recorder.describe(index, info: kb)
        let session = FileManager.default.temporaryDirectory.appendingPathComponent("hostile-\(getpid()).session")
        try Data(SessionWriter.write(recorder.session)).write(to: session)
        defer { try? FileManager.default.removeItem(at: session) }
        runs.append(("convert", try runEvflowctl(["convert", session.path, "--device", "nothing"])))
        for (what, r) in runs {
            #expect(!Self.unsafe(r.stdout), "\(what) stdout: \(r.stdout.debugDescription)")
            #expect(!Self.unsafe(r.stderr), "\(what) stderr: \(r.stderr.debugDescription)")
        }
        let statsOut = runs.first { $0.0 == "stats" }!.1.stdout
        #expect(statsOut.contains(#"t\x1b[2J\x07\x9b31m\u202e\x0a"#), "the other client's WATCH id, escaped: \(statsOut)")
        #expect(runs.first { $0.0 == "devices" }!.1.stdout.contains(#"k\x1b]0;id\x07\x9b2J\u202e"#))
        #expect(runs.first { $0.0 == "watch" }!.1.stdout.split(separator: "\n").count == 2)
        #expect(runs.first { $0.0 == "convert" }!.1.status == 64)
        other.close()
        #expect(await eventually { server.clientCount == 0 })
        await server.shutdown()
        running.dispose()
        queue.sync {}
    }
}
