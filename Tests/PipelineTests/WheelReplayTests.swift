import Foundation
import InputModel
import Pipeline
import Recording
import Testing

/// The wheel filter in replay, exactly as live: the synthetic `handmade/worn-wheel.evemu`
/// (a high-resolution wheel with stray reversed ticks) replayed through a `DeviceHub` with
/// `wheel: 100ms` on the virtual clock must match its golden files byte for byte, at every
/// speed (a held tick's window ends on the replay's clock, never on the wall clock).
@Suite("Wheel filter: golden replay", .ownLiveResources) struct WheelReplayTests {
    static let path = "handmade/worn-wheel.evemu"
    /// Its golden files, under `Tests/Fixtures/golden/`.
    static let goldenFiles: Set<String> = [path + ".wheel.frames.txt", path + ".wheel.state.json"]
    static func config() throws -> FilterConfig { try FilterConfig.parse(yaml: "defaults:\n  wheel: 100ms\n") }

    @Test("the replay matches the golden files at speeds 0.25, 1, 3, 50 and max")
    func golden() throws {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(Self.path))
        let atPace = try GoldenReplayTests.replay(recording, speed: 1, config: try Self.config())
        try GoldenReplayTests.compare(atPace.frames, golden: Self.path + ".wheel.frames.txt")
        try GoldenReplayTests.compare(atPace.state, golden: Self.path + ".wheel.state.json")
        for speed in [0.25, 3, 50, Double.infinity] {
            let out = try GoldenReplayTests.replay(recording, speed: speed, config: try Self.config())
            #expect(out == atPace, "speed \(speed)")
        }
    }

    @Test("what the golden output says: the three strays gone, every real tick kept, hi-res sums consistent")
    func content() throws {
        let recording = try Recording.read(contentsOf: Fixtures.root.appendingPathComponent(Self.path))
        let out = try GoldenReplayTests.replay(recording, config: try Self.config())
        var sums: [String: Int] = [:]
        for line in out.frames.split(separator: "\n") {
            let words = line.split(separator: " ")
            var i = 2
            while i + 2 < words.count {
                sums[String(words[i + 1]), default: 0] += Int(words[i + 2])!
                i += 3
            }
        }
        // 96 down, 40 up, 24 down (hi-res 15 a tick); the tilt wheel 3 right, 1 stray left, 1 right.
        #expect(sums["REL_WHEEL_HI_RES"] == (-96 + 40 - 24) * 15)
        #expect(sums["REL_WHEEL"] == (-96 + 40 - 24) / 8)
        #expect(sums["REL_HWHEEL_HI_RES"] == 4 * 120)
        #expect(sums["REL_HWHEEL"] == 4)
        #expect(out.state.contains("\"wheel\""))
        let unfiltered = try GoldenReplayTests.replay(recording)
        #expect(unfiltered.frames != out.frames)
    }
}
