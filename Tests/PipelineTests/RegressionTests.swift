import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// Regression tests, each named after the bug it pins.
@Suite("Pipeline regressions", .ownLiveResources) struct RegressionTests {
    @Test("bug: reconfiguring a code to passthrough (or removing it) lost its held value without counting it; since issue #33 the held release is delivered at the reload")
    func bugReconfigureToPassthroughLostHeldValueUncounted() {
        let before = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))
        var run = runFilter(before, keyFrames("1@0 0@5"), updates: [(10, DeviceFilterSettings())])
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@5")
        #expect(run.counters[.keyChatter] == FilterCounts(delayed: 1))
        // Afterwards the code passes unfiltered.
        run = runFilter(before, keyFrames("1@0 0@5 1@30 0@31"), updates: [(10, DeviceFilterSettings())])
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@5 1@30 0@31")
    }

    @Test("bug: a rate-limited abs value kept for the window end was delivered although the axis had moved back inside the hysteresis")
    func bugAbsStaleKeptValueDeliveredAfterReturnInsideHysteresis() {
        let s = settings(EventType.abs, C.ABS_X, .absolute(hysteresis: 4, minInterval: 10 * ms))
        // 150 is kept for 10; the axis then returns to 101 (within 4 of the delivered 100).
        let input = [(0, 100), (2, 150), (4, 101)].map { frame(Int64($0.0), EventType.abs, C.ABS_X, Int32($0.1)) }
        let run = runFilter(s, input)
        #expect(run.values(EventType.abs, C.ABS_X) == "100@0")
        #expect(run.counters[.absRate] == FilterCounts(dropped: 1))
        #expect(run.counters[.absHysteresis] == FilterCounts(dropped: 1))
    }
}
