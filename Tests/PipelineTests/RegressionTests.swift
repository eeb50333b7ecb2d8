import InputModel
import Pipeline
import Reactive
import Testing

/// Regression tests, each named after the bug it pins.
@Suite("Pipeline regressions") struct RegressionTests {
    @Test("bug: reconfiguring a code to passthrough (or removing it) lost its held value without counting it")
    func bugReconfigureToPassthroughLostHeldValueUncounted() {
        let before = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))
        var run = runFilter(before, keyFrames("1@0 0@5"), updates: [(10, DeviceFilterSettings())])
        #expect(run.values(EventType.key, C.KEY_A) == "1@0")
        #expect(run.counters[.keyChatter] == FilterCounts(dropped: 1))
        // Afterwards the code passes unfiltered.
        run = runFilter(before, keyFrames("1@0 0@5 1@30 0@31"), updates: [(10, DeviceFilterSettings())])
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 1@30 0@31")
    }

}
