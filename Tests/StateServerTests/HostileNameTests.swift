import Foundation
import InputModel
import Pipeline
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
}
