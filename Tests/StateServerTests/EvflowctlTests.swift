import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Reactive
import Recording
import ReactiveTesting
import Testing
@testable import EvflowProtocol
@testable import StateServer

// evflowctl as a user runs it: the built executable, against a test server. The binary sits
// next to the test bundle (`swift build --build-tests` builds it).

private let evflowctl: URL = {
    let dir = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let candidates = [dir, dir.deletingLastPathComponent()].map { $0.appendingPathComponent("evflowctl") }
    return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? candidates[0]
}()

private struct Run {
    var status: Int32
    var stdout: String
    var stderr: String
}

/// Starts evflowctl; `finish()` waits for it.
private final class Ctl: @unchecked Sendable {
    let process = Process()
    private let out = Pipe(), err = Pipe()

    init(_ arguments: [String], environment: [String: String] = [:]) throws {
        process.executableURL = evflowctl
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env["EVFLOW_SOCKET"] = nil
        for (k, v) in environment { env[k] = v }
        process.environment = env
        process.standardOutput = out
        process.standardError = err
        try process.run()
    }

    func finish() -> Run {
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self),
                   stderr: String(decoding: e, as: UTF8.self))
    }
}

private func run(_ arguments: [String], environment: [String: String] = [:]) throws -> Run {
    try Ctl(arguments, environment: environment).finish()
}

/// Runs evflowctl to its end: status, standard output and standard error.
func runEvflowctl(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
    let r = try run(arguments, environment: environment)
    return (r.status, r.stdout, r.stderr)
}

/// The number of watchers, asked over a fresh connection.
private func watchers(_ path: String) -> Int? {
    guard let c = try? TestClient(path: path), (try? c.read()) != nil else { return nil }
    return (try? c.request(#"{"class":"STATS"}"#))?["watchers"] as? Int
}

@Suite(.serialized, .ownLiveResources)
struct EvflowctlTests {
    @Test func theBinaryIsBuilt() {
        #expect(FileManager.default.isExecutableFile(atPath: evflowctl.path), "\(evflowctl.path)")
    }

    @Test func noDaemonIsExitCode69WithTheSocketPath() throws {
        let path = temporarySocketPath()
        let r = try run(["devices", "--socket", path])
        #expect(r.status == 69)
        #expect(r.stderr.contains(path))
        #expect(r.stderr.contains("evflowd is not running"))
        #expect(r.stderr.split(separator: "\n").count == 1)
        #expect(r.stdout.isEmpty)
        // The environment variable names the socket too.
        let e = try run(["stats"], environment: ["EVFLOW_SOCKET": path])
        #expect(e.status == 69)
        #expect(e.stderr.contains(path))
        // A usage error is not a daemon error.
        #expect(try run(["watch", "--count", "x"]).status == 64)
    }

    @Test func devicesStateAndStatsAsTablesAndJSON() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard(), mouse = testMouse()
        devices.add(kb)
        devices.add(mouse)
        devices.send(kb.id, keyFrame(30, 1, ms: 0))
        let (server, path) = try await startServer(hub: devices.hub)
        let table = try run(["devices", "--socket", path])
        #expect(table.status == 0)
        let lines = table.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0].hasPrefix("ID"))
        #expect(lines[0].contains("NAME") && lines[0].contains("CLASSES"))
        #expect(lines.contains { $0.hasPrefix(kb.id.rawValue) && $0.contains("Test Keyboard") && $0.contains("key,keyboard") })
        // Columns line up: NAME starts at the same offset on every line.
        let offsets = Set(lines.dropFirst().map { $0.range(of: "Test ")!.lowerBound.utf16Offset(in: $0) })
        #expect(offsets == [lines[0].range(of: "NAME")!.lowerBound.utf16Offset(in: lines[0])])

        let json = try run(["devices", "--json", "--socket", path])
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["class"] as? String == "DEVICES")
        #expect((object?["devices"] as? [Any])?.count == 2)

        let state = try run(["state", "--socket", path, "Test Keyboard"])
        #expect(state.status == 0)
        #expect(state.stdout.contains("keys down   KEY_A"))
        #expect(state.stdout.contains("frames      1 in, 1 out"))

        let missing = try run(["state", "--socket", path, "ghost"])
        #expect(missing.status == 65)
        #expect(missing.stderr.contains("no device 'ghost'"))

        let stats = try run(["stats", "--socket", path])
        #expect(stats.status == 0)
        #expect(stats.stdout.contains("devices         2"))
        #expect(stats.stdout.contains("live resources"))
        #expect(stats.stdout.contains("CLIENT"))
        await server.shutdown()
        devices.stop()
    }

    @Test func watchPrintsStreamLinesAndStopsAfterCount() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard(), mouse = testMouse()
        devices.add(kb)
        devices.add(mouse)
        let (server, path) = try await startServer(hub: devices.hub)
        let ctl = try Ctl(["watch", "--socket", path, "--type", "EV_KEY", "--count", "2"])
        #expect(await eventually { watchers(path) == 1 })
        devices.send(mouse.id, motionFrame(dx: 3, ms: 10))     // not selected
        devices.send(kb.id, keyFrame(30, 1, ms: 20))
        devices.send(kb.id, keyFrame(30, 0, ms: 120))
        let r = ctl.finish()
        #expect(r.status == 0)
        #expect(r.stdout == "0.020000  \(kb.id.rawValue)  KEY_A 1\n0.120000  \(kb.id.rawValue)  KEY_A 0\n")
        await server.shutdown()
        devices.stop()
    }

    /// evflowctl builds its WATCH from the protocol's own types and checks it as the server
    /// would, before connecting: a bad type is a usage error with the server's wording.
    @Test func aBadWatchSelectionIsAUsageErrorWithTheServersMessage() throws {
        let r = try run(["watch", "--socket", temporarySocketPath(), "--type", "EV_KYE"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("unknown event type 'EV_KYE'"))
        let rate = try run(["watch", "--socket", temporarySocketPath(), "--max-rate", "0"])
        #expect(rate.status == 64)
        #expect(rate.stderr.contains("field 'max_rate' must be a number greater than 0 and at most 100000"))
    }

    @Test func recordWritesAnEvemuFileOfTheRawStream() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("srv-record-\(getpid()).evemu")
        defer { try? FileManager.default.removeItem(at: file) }
        let ctl = try Ctl(["record", "--socket", path, kb.id.rawValue, "-o", file.path, "--count", "3"])
        #expect(await eventually { watchers(path) == 1 })
        // Chatter: the raw stream keeps all three frames.
        devices.send(kb.id, keyFrame(30, 1, ms: 1000))
        devices.send(kb.id, keyFrame(30, 0, ms: 1003))
        devices.send(kb.id, keyFrame(30, 1, ms: 1006))
        let r = ctl.finish()
        #expect(r.status == 0, "\(r.stderr)")
        let recording = try Recording.read(contentsOf: file)
        let device = try #require(recording.devices.first)
        #expect(device.info.name == kb.name)
        #expect(device.info.inputID == kb.inputID)
        #expect(device.info.capabilities[EventType.key] == kb.capabilities[EventType.key])
        let keys = device.events.filter { $0.type == EventType.key }
        #expect(keys.map(\.value) == [1, 0, 1])
        #expect(keys.map(\.time) == [0, 3_000_000, 6_000_000])
        #expect(device.events.filter(\.isSynReport).count == 3)
        await server.shutdown()
        devices.stop()
    }
}

@Suite(.ownLiveResources) struct EvflowctlAnalyzeTests {
    private static let fixture = ServerFixtures.root
        .appendingPathComponent("recordings/evemu-devices/misc/Microsoft Surface Type Cover.events").path

    @Test func analyzeMatchesTheLibraryReport() throws {
        let recording = try Recording.read(contentsOf: URL(fileURLWithPath: Self.fixture))
        let report = ChatterAnalysis.analyze(recording.devices.map { (info: $0.info, events: $0.events) })
        let text = try run(["analyze", Self.fixture])
        #expect(text.status == 0)
        // The wording is evflowctl's (EvflowctlReportTests); the numbers must be the library's.
        #expect(!report.codes.isEmpty)
        for c in report.codes {
            #expect(text.stdout.contains("  \(c.code): \(c.presses) presses, \(c.releases) releases, \(c.repeats) repeats\n"))
        }
        let json = try run(["analyze", "--json", Self.fixture])
        #expect(json.status == 0)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let codes = try #require(object["codes"] as? [[String: Any]])
        #expect(codes.map { $0["code"] as? String } == report.codes.map(\.code))
        #expect(codes.map { $0["presses"] as? Int } == report.codes.map(\.presses))
        #expect(codes.map { $0["suggested_window_ns"] as? Int } == report.codes.map { $0.suggestedWindow.map(Int.init) })
    }

    /// A worn mouse button (issue #9): every click has a spurious release (a re-press 4–12 ms
    /// after the release, the real release 4–28 ms later) or a late bounce 27 ms after the
    /// release, which the 25 ms default lets through as an extra click.
    static func wornButton() throws -> (Recording, URL) {
        let mouse = try Recording.read(contentsOf: ServerFixtures.root
            .appendingPathComponent("recordings/evemu-devices/mice/Ultrathin Touch Mouse.events"))
        var info = mouse.devices[0].info
        info.name = "Worn \"mouse\""
        let left = EventNames.code(named: "BTN_LEFT")!.code
        var events: [InputEvent] = []
        func add(_ value: Int32, _ ms: Int64) {
            events.append(InputEvent(time: ms * 1_000_000, type: EventType.key, code: left, value: value))
            events.append(InputEvent(time: ms * 1_000_000, type: EventType.syn, code: SynCode.report, value: 0))
        }
        for i in 0..<12 {
            let t = Int64(1000 + i * 1000)
            let gap = Int64([4, 8, 12][i % 3]), hold = Int64([4, 16, 28][i % 3])
            add(1, t); add(0, t + 250); add(1, t + 250 + gap); add(0, t + 250 + gap + hold)
            add(1, t + 500); add(0, t + 580); add(1, t + 607); add(0, t + 609)   // late bounce
        }
        let recording = Recording(devices: [RecordedDevice(info: info, events: events)])
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-worn-\(getpid()).evemu")
        try EvemuWriter.write(recording.devices[0], to: url)
        return (recording, url)
    }

    /// Replays `recording` through the daemon's pipeline (ReplaySource → DeviceHub) with
    /// `config`; the delivered values of `BTN_LEFT`.
    static func replayPresses(_ recording: Recording, config: FilterConfig) -> Int {
        weak var leftOver: VirtualTimeScheduler?
        let presses = { () -> Int in
            let scheduler = VirtualTimeScheduler()
            leftOver = scheduler
            let replay = ReplaySource(recordings: [recording], scheduler: scheduler)
            let hub = DeviceHub(store: StateStore(), config: config, scheduler: scheduler, latencyClock: .replay)
            var presses = 0
            let changes = hub.allFrames().subscribe(onNext: { f in
                presses += f.frame.events.filter { $0.type == EventType.key && $0.value == 1 }.count
            })
            let running = hub.run(replay.devices)
            scheduler.run()
            running.dispose()
            changes.dispose()
            // The disposals schedule their last steps (subscribeOn, the replay's stop) on the
            // scheduler: run them, or the pending actions keep the scheduler and the whole
            // subscription graph alive in a cycle (found by LeakSanitizer).
            scheduler.run()
            return presses
        }()
        #expect(leftOver == nil, "the replay's scheduler and subscription graph outlived it")
        return presses
    }

    @Test("analyze --config-out: the suggestion, replayed through the pipeline, leaves 0 bounces and loses no press")
    func analyzeSuggestionProvesItself() throws {
        let (recording, url) = try Self.wornButton()
        defer { try? FileManager.default.removeItem(at: url) }
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("evflow-suggest-\(getpid()).yaml")
        defer { try? FileManager.default.removeItem(at: out) }
        let r = try run(["analyze", "--config-out", out.path, url.path])
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stdout.contains("with the default: 12 bounce(s) left, 0 of 24 real press(es) lost"))
        #expect(r.stdout.contains("with the suggestion: 0 bounce(s) left, 0 of 24 real press(es) lost"))
        #expect(r.stdout.contains("suggested: window 28ms, spurious auto"))
        let yaml = try String(contentsOf: out, encoding: .utf8)
        let config = try FilterConfig.parse(yaml: yaml, file: out.path)
        // 24 real clicks: the default makes 36 of them, the suggestion exactly 24.
        #expect(Self.replayPresses(recording, config: FilterConfig()) == 36)
        #expect(Self.replayPresses(recording, config: config) == 24)
    }

    @Test("analyze reads evtest output, alone or as events plus --desc header; a description alone is refused")
    func analyzeEvtest() throws {
        let paste = ServerFixtures.root.appendingPathComponent("handmade/worn-mouse.evtest")
        let whole = try run(["analyze", paste.path])
        #expect(whole.status == 0, "\(whole.stderr)")
        #expect(whole.stdout.contains("Logitech USB Optical Mouse"))
        // The paste's spurious release (1@0 0@250 1@254 0@278) is one real press, kept as one.
        #expect(whole.stdout.contains("  BTN_LEFT: 2 presses, 2 releases, 0 repeats\n"))
        #expect(whole.stdout.contains("with the default: 0 bounce(s) left, 0 of 1 real press(es) lost"))
        let text = try String(contentsOf: paste, encoding: .utf8)
        let cut = text.range(of: "Event: time")!.lowerBound
        let dir = FileManager.default.temporaryDirectory
        let header = dir.appendingPathComponent("evflow-\(getpid())-mouse.prop")
        let events = dir.appendingPathComponent("evflow-\(getpid())-mouse.txt")
        try Data(text[..<cut].utf8).write(to: header)
        try Data(text[cut...].utf8).write(to: events)
        defer { for u in [header, events] { try? FileManager.default.removeItem(at: u) } }
        let split = try run(["analyze", "--desc", header.path, events.path])
        #expect(split.status == 0, "\(split.stderr)")
        #expect(split.stdout == whole.stdout)
        let alone = try run(["analyze", events.path])
        #expect(alone.status == 65)
        #expect(alone.stderr.contains("give the header with --desc"))
        let descOnly = try run(["analyze", header.path])
        #expect(descOnly.status == 65)
        #expect(descOnly.stderr.contains("no events"))
    }

    @Test func analyzeAxesAddsTheAxisSection() throws {
        let touchpad = ServerFixtures.root.appendingPathComponent("recordings/evemu-devices/touchpads/bcm5974.three-finger-click.events")
        let plain = try run(["analyze", touchpad.path])
        let axes = try run(["analyze", "--axes", touchpad.path])
        #expect(plain.status == 0 && axes.status == 0)
        #expect(!plain.stdout.contains("Axes at rest"))
        #expect(axes.stdout.hasPrefix(plain.stdout.trimmingCharacters(in: .newlines)))
        #expect(axes.stdout.contains("\nAxes at rest: slices of 100ms spanning at most 5% of the axis' range\n"))
        #expect(axes.stdout.contains("  ABS_X: "))
        #expect(!axes.stdout.contains("ABS_MT_"))
    }

    @Test func analyzeOfAnUnreadableFileExits74() throws {
        let r = try run(["analyze", "/nonexistent/evflow-no-such-file.evemu"])
        #expect(r.status == 74)
        #expect(r.stderr.contains("evflow-no-such-file.evemu"))
    }

    @Test func analyzeRejectsAMalformedFileWithItsReason() throws {
        let bad = ServerFixtures.root.appendingPathComponent("malformed/bad-hex.evemu").path
        let r = try run(["analyze", bad])
        #expect(r.status == 65)
        #expect(r.stderr.contains("bad-hex.evemu"))
    }
}

/// `evflowctl record --all` and `convert`: sessions (docs/formats/session.md).
@Suite(.serialized, .ownLiveResources)
struct EvflowctlSessionTests {
    /// A frame of one event of `type`/`code` now (`CLOCK_MONOTONIC`, evflowd's event clock).
    static func frameNow(_ type: UInt16, _ code: UInt16, _ value: Int32) -> InputFrame {
        let t = monotonicNow()
        return InputFrame(time: t, events: [InputEvent(time: t, type: type, code: code, value: value)])
    }

    @Test func recordAllWritesASessionOfDevicesComingAndGoing() async throws {
        let devices = ManualDevices()
        let kb = testKeyboard()
        let mouse = testMouse()
        devices.add(kb)
        let (server, path) = try await startServer(hub: devices.hub)
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("srv-record-all-\(getpid()).session")
        defer { try? FileManager.default.removeItem(at: file) }
        let ctl = try Ctl(["record", "--all", "--socket", path, "-o", file.path, "--count", "4"])
        #expect(await eventually { watchers(path) == 1 })
        devices.send(kb.id, Self.frameNow(EventType.key, 30, 1))
        devices.send(kb.id, Self.frameNow(EventType.key, 30, 0))
        devices.add(mouse)   // plugged in while recording
        devices.send(mouse.id, Self.frameNow(EventType.rel, 0, 5))
        devices.remove(kb)   // pulled out while recording
        devices.send(mouse.id, Self.frameNow(EventType.rel, 1, -2))
        let r = ctl.finish()
        #expect(r.status == 0, "\(r.stderr)")
        #expect(r.stderr.contains("4 frame(s) of 2 device(s), 2 appearance(s) written to"))
        let session = try SessionReader.read(contentsOf: file)
        #expect(session.devices.map(\.handle) == ["d1", "d2"])
        #expect(session.devices.map(\.info.id) == [kb.id, mouse.id])
        // The full descriptions, from STATE (the DEVICE notice has no capabilities).
        #expect(session.devices.map(\.info.name) == [kb.name, mouse.name])
        #expect(session.devices[0].info.capabilities[EventType.key] == kb.capabilities[EventType.key])
        #expect(session.devices[1].info.capabilities[EventType.rel] == mouse.capabilities[EventType.rel])
        #expect(session.devices[1].info.inputID == mouse.inputID)
        func line(_ e: SessionEntry) -> String {
            switch e.action {
            case .add: return "add \(session.devices[e.device].handle)"
            case .remove: return "remove \(session.devices[e.device].handle)"
            case .event(let type, let code, let value): return "\(session.devices[e.device].handle) \(type) \(code) \(value)"
            }
        }
        #expect(session.timeline.map(line) == [
            "add d1", "d1 1 30 1", "d1 0 0 0", "d1 1 30 0", "d1 0 0 0",
            "add d2", "d2 2 0 5", "d2 0 0 0", "remove d1", "d2 2 1 -2", "d2 0 0 0",
        ])
        #expect(session.timeline.first?.time == 0)
        #expect(zip(session.timeline, session.timeline.dropFirst()).allSatisfy { $0.time <= $1.time })
        await server.shutdown()
        devices.stop()
    }

    @Test func recordNeedsADeviceOrAll() throws {
        let neither = try run(["record", "--socket", temporarySocketPath()])
        #expect(neither.status == 64)
        #expect(neither.stderr.contains("give the DEVICE to record, or --all for every device"))
        let both = try run(["record", "kbd", "--all", "--socket", temporarySocketPath()])
        #expect(both.status == 64)
        #expect(both.stderr.contains("give a DEVICE or --all, not both"))
        let noDaemon = try run(["record", "--all", "--socket", temporarySocketPath()])
        #expect(noDaemon.status == 69)
    }

    static let fixture = ServerFixtures.root.appendingPathComponent("sessions/two-identical-keyboards.session")

    @Test func convertWritesOneDevicesPartAsEvemu() throws {
        let session = try SessionReader.read(contentsOf: Self.fixture)
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("convert-\(getpid()).evemu")
        defer { try? FileManager.default.removeItem(at: out) }
        for (selector, index) in [("cover-2", 1), (session.devices[0].info.id.rawValue, 0)] {
            let r = try run(["convert", Self.fixture.path, "--device", selector, "-o", out.path])
            #expect(r.status == 0, "\(r.stderr)")
            let evemu = try Recording.read(contentsOf: out)
            let expected = try #require(session.recordedDevice(index))
            // Everything but the id: an evemu file has none (its reader derives one from name and ids).
            var described = expected.info
            described.id = evemu.devices[0].info.id
            #expect(evemu.devices[0].info == described)
            #expect(evemu.devices[0].events.map { $0.time + evemu.startMicroseconds * 1000 }
                        == expected.events.map { $0.time + session.startMicroseconds * 1000 })
            #expect(evemu.devices[0].events.map(\.value) == expected.events.map(\.value))
        }
        // To standard output, one appearance.
        let first = try run(["convert", Self.fixture.path, "--device", "cover-1", "--appearance", "1"])
        #expect(first.status == 0)
        #expect(first.stdout.hasPrefix("# EVEMU 1.3\n"))
        #expect(first.stdout.split(separator: "\n").filter { $0.hasPrefix("E:") }.count
                    == session.appearances(of: 0)[0].events.count)
    }

    @Test func convertNamesWhatIsWrong() throws {
        let shared = try run(["convert", Self.fixture.path, "--device", "Microsoft Surface Type Cover"])
        #expect(shared.status == 64)
        #expect(shared.stderr.contains("is the name of 2 devices: cover-1 ("))
        let unknown = try run(["convert", Self.fixture.path, "--device", "nothing"])
        #expect(unknown.status == 64)
        #expect(unknown.stderr.contains("no device 'nothing' in"))
        let appearance = try run(["convert", Self.fixture.path, "--device", "cover-1", "--appearance", "2"])
        #expect(appearance.status == 64)
        #expect(appearance.stderr.contains("cover-1 has 1 appearance(s), not 2"))
        let missing = try run(["convert", "/nonexistent/x.session", "--device", "d1"])
        #expect(missing.status == 74)
        let notASession = try run(["convert", ServerFixtures.root.appendingPathComponent(
            "recordings/evemu-devices/mice/Ultrathin Touch Mouse.events").path, "--device", "d1"])
        #expect(notASession.status == 65)
        #expect(notASession.stderr.contains(":1: bad session: the first line must be '# EVFLOW SESSION 1'"))
    }
}
