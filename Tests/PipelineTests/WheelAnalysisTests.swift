import Foundation
import InputModel
import Pipeline
import Recording
import Testing

/// `evflowctl analyze --wheel`'s analysis: reversals and strays found, the window proven by
/// running the real filter over the recording.
@Suite("WheelAnalysis") struct WheelAnalysisTests {
    static func analyze(_ url: URL) throws -> [WheelAnalysis.AxisReport] {
        let recording = try Recording.read(contentsOf: url)
        return WheelAnalysis.analyze(recording.devices.map { ($0.info, $0.events) })
    }

    @Test("the synthetic worn wheel: 2 strays on REL_WHEEL, 1 on REL_HWHEEL, each removed by a clean window")
    func wornWheel() throws {
        let axes = try Self.analyze(Fixtures.root.appendingPathComponent("handmade/worn-wheel.evemu"))
        #expect(axes.map(\.codeName) == ["REL_WHEEL", "REL_HWHEEL"])
        let v = axes[0], h = axes[1]
        #expect(v.hiRes && h.hiRes)
        #expect(v.ticks.count == 96 + 2 + 40 + 24)
        #expect(v.strays.count == 2 && h.strays.count == 1)
        #expect(v.reversals.count == 2 * 2 + 2)   // each stray makes two; the two real reversals
        #expect(v.recommended && h.recommended)
        #expect(v.suggestion.window >= WheelAnalysis.windowFloor && v.suggestion.window <= 50_000_000)
        #expect(h.suggestion.window > h.strayGaps.max()!)
        // The proof: that window drops exactly the strays.
        let frames = ChatterAnalysis.completeFrames(try Recording.read(contentsOf: Fixtures.root
            .appendingPathComponent("handmade/worn-wheel.evemu")).devices[0].events)
        let delivered = WheelAnalysis.delivered(v, frames: frames, window: v.suggestion.window)
        #expect(delivered.enumerated().filter { !$0.element }.map(\.offset) == v.strays)
        // Far too long a window loses real ticks: the quick reversal's ticks are not lost (it is
        // confirmed), but nothing worse than the suggestion is chosen.
        let long = WheelAnalysis.evaluate(v, frames: frames, window: 250_000_000)
        #expect(long.remainingStrays == 0)
    }

    @Test("the real Ultrathin Touch Mouse: 3 reversals after pauses, no stray; suggestion off, and 100 ms changes nothing")
    func realHealthyWheel() throws {
        let url = Fixtures.recording("evemu-devices/mice/Ultrathin Touch Mouse.events")
        let axes = try Self.analyze(url)
        #expect(axes.count == 1)
        let v = try #require(axes.first)
        #expect(!v.hiRes)
        #expect(v.ticks.count == 32 && v.reversals.count == 3 && v.strays.isEmpty)
        #expect(v.suggestion.window == 0 && !v.recommended)
        let frames = ChatterAnalysis.completeFrames(try Recording.read(contentsOf: url).devices[0].events)
        #expect(WheelAnalysis.delivered(v, frames: frames, window: 100_000_000).allSatisfy { $0 })
    }
}
