import Foundation
import InputModel
import Pipeline
import Recording
import Testing

/// BounceKeys and SlowKeys in replay exactly as live: keyboard recordings replayed through the
/// hub with the filters on (the default chatter debounce before them), at several speeds, give
/// the committed golden frames and final state (`Tests/Fixtures/golden-accessibility/`;
/// `EVFLOW_UPDATE_GOLDEN=1` rewrites them, docs/golden.md).
@Suite("BounceKeys and SlowKeys: golden replay", .ownLiveResources) struct AccessGoldenReplayTests {
    static let root = Fixtures.root.appendingPathComponent("golden-accessibility")

    /// The recordings: a real keyboard (typing) and the handmade worn keyboard (bouncing keys).
    static let recordings = [
        "recordings/evemu-devices/keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events",
        "handmade/worn-keyboard.evemu",
    ]

    /// The configurations, by golden-file suffix: each filter alone and both.
    static func config(_ name: String) -> FilterConfig {
        var c = FilterConfig()
        switch name {
        case "bounce": c.defaults.bounceKeys = 300_000_000
        case "slow": c.defaults.slowKeys = 100_000_000
        default:
            c.defaults.bounceKeys = 300_000_000
            c.defaults.slowKeys = 100_000_000
        }
        return c
    }

    static func compare(_ actual: String, _ name: String) throws {
        let url = root.appendingPathComponent(name)
        if GoldenReplayTests.updating {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(actual.utf8).write(to: url)
            return
        }
        let expected = try String(contentsOf: url, encoding: .utf8)
        #expect(actual == expected, "\(name) differs (EVFLOW_UPDATE_GOLDEN=1 rewrites it; review the diff)")
    }

    @Test("the filters in replay: golden output at speeds max, 0.25, 1, 3 and 50",
          arguments: recordings, ["bounce", "slow", "both"])
    func golden(path: String, filters: String) throws {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(path))
        let name = (path as NSString).lastPathComponent + "." + filters
        let atPace = try GoldenReplayTests.replay(recording, speed: 1, config: Self.config(filters))
        try Self.compare(atPace.frames, name + ".frames.txt")
        try Self.compare(atPace.state, name + ".state.json")
        for speed in [Double.infinity, 0.25, 3, 50] {
            let out = try GoldenReplayTests.replay(recording, speed: speed, config: Self.config(filters))
            #expect(GoldenReplayTests.perDevice(out.frames) == GoldenReplayTests.perDevice(atPace.frames), "\(name) at speed \(speed)")
            #expect(out.state == atPace.state, "\(name) at speed \(speed)")
        }
        // The filters did something to check: each golden counts what it ignored. Except
        // BounceKeys on the real keyboard: its three frames hold no re-press, and BounceKeys
        // must leave such typing exactly as the default filters do.
        let kinds = filters == "bounce" ? ["bounce_keys"] : filters == "slow" ? ["slow_keys"] : ["bounce_keys", "slow_keys"]
        if filters == "bounce" && !path.hasPrefix("handmade/") {
            #expect(try GoldenReplayTests.replay(recording).frames == atPace.frames, "\(name): BounceKeys changed typing without re-presses")
        } else {
            #expect(kinds.contains { atPace.state.contains("\"\($0)\"") }, "\(name): the filters ignored nothing")
        }
    }
}
