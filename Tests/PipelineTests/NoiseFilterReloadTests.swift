import InputModel
@testable import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// A reload never drops an edge (issue #33, docs/configuration.md "Device removal and reload"):
/// a code whose filter changes hands over what its old filter held, delivered at once in a
/// frame stamped with the last frame's time, and the new filter starts from what was delivered.
@Suite("NoiseFilter: reload hands over", .ownLiveResources) struct NoiseFilterReloadTests {
    static let key15 = settings(EventType.key, C.KEY_A, .chatter(window: 15 * ms))
    static let key40 = settings(EventType.key, C.KEY_A, .chatter(window: 40 * ms))

    @Test("issue #33: a release held inside the window is delivered at the reload, not dropped; counted delayed")
    func heldReleaseDelivered() {
        let run = runFilter(Self.key15, keyFrames("1@100 0@105"), updates: [(106, Self.key40)])
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@105")
        #expect(run.counters[.keyChatter] == FilterCounts(dropped: 0, delayed: 1))
    }

    @Test("a reload that removes the key's filter delivers the held release too")
    func filterRemoved() {
        let run = runFilter(Self.key15, keyFrames("1@100 0@105 1@200"), updates: [(106, DeviceFilterSettings())])
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@105 1@200")
    }

    @Test("a release held for the spurious window is delivered at the reload")
    func spuriousReleaseDelivered() {
        let always = settings(EventType.key, C.KEY_A, .chatter(window: 15 * ms, spurious: .always, spuriousWindow: 12 * ms))
        let run = runFilter(always, keyFrames("1@100 0@130"), updates: [(135, Self.key40)])
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@130")
        #expect(run.counters[.keyChatter].delayed == 1)
    }

    @Test("a re-press held after a release is dropped, as the window's end would; the key then waits for its physical release")
    func heldRepressDropped() {
        let run = runFilter(Self.key15, keyFrames("1@100 0@150 1@155 0@300 1@400"), updates: [(156, Self.key40)])
        // 0@300 ends upHeld (its bounce window opens); 1@400 is a new press.
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@150 1@400")
        #expect(run.counters[.keyChatter].dropped == 2, "the held re-press, and the release of a key delivered up")
    }

    @Test("the new window runs from what was delivered: a key delivered down stays down, its next bounce is swallowed")
    func seededDown() {
        let run = runFilter(Self.key15, keyFrames("1@100 0@300 1@310"), updates: [(200, Self.key40)])
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@300")
    }

    @Test("an unchanged filter keeps its window; nothing is delivered at the reload")
    func unchangedFilterKeepsItsWindow() {
        let run = runFilter(Self.key15, keyFrames("1@100 0@105"), updates: [(106, Self.key15)])
        #expect(run.values(EventType.key, C.KEY_A) == "1@100 0@115")
    }

    @Test("a switch's pending value, an axis's kept value and a relative sum are delivered at the reload")
    func otherKindsDelivered() {
        var before = DeviceFilterSettings()
        before.switches[C.SW_LID] = .debounce(window: 50 * ms)
        before.absolute[C.ABS_X] = .absolute(hysteresis: 0, minInterval: 50 * ms)
        before.relative[C.REL_X] = .relative(minInterval: 50 * ms)
        var after = DeviceFilterSettings()
        after.switches[C.SW_LID] = .debounce(window: 20 * ms)
        after.absolute[C.ABS_X] = .absolute(hysteresis: 0, minInterval: 20 * ms)
        let input = [frame(100, EventType.sw, C.SW_LID, 1), frame(100, EventType.abs, C.ABS_X, 10),
                     frame(101, EventType.abs, C.ABS_X, 30), frame(100, EventType.rel, C.REL_X, 2),
                     frame(102, EventType.rel, C.REL_X, 3), frame(103, EventType.rel, C.REL_X, 4)]
        let run = runFilter(before, input, updates: [(110, after)])
        #expect(run.values(EventType.sw, C.SW_LID) == "1@103")
        #expect(run.values(EventType.abs, C.ABS_X) == "10@100 30@103")
        #expect(run.values(EventType.rel, C.REL_X) == "2@100 7@103")
        #expect(run.counters[.debounce].delayed == 1 && run.counters[.absRate].delayed == 1)
        #expect(run.counters[.relRate].merged == 2)
    }

    @Test("an axis and a switch that get a filter start from the value they last passed unfiltered (a resting stick's next jitter is dropped)")
    func newlyFilteredCodesStartFromWhatPassed() {
        var before = DeviceFilterSettings()
        before.absolute[C.ABS_Y] = .absolute(hysteresis: 5, minInterval: 0)   // stays; ABS_X unfiltered
        var after = DeviceFilterSettings()
        after.absolute[C.ABS_X] = .absolute(hysteresis: 590, minInterval: 0)
        after.switches[C.SW_LID] = .debounce(window: 20 * ms)
        let input = [frame(100, EventType.abs, C.ABS_X, -280), frame(101, EventType.abs, C.ABS_X, 40),
                     frame(102, EventType.sw, C.SW_LID, 1),
                     frame(200, EventType.abs, C.ABS_X, -280), frame(201, EventType.abs, C.ABS_X, 310),
                     frame(202, EventType.abs, C.ABS_X, 20000), frame(300, EventType.sw, C.SW_LID, 1)]
        let run = runFilter(before, input, updates: [(150, after)])
        // Seeded with 40: -280 and 310 are within 590 of it; 20000 is a real move.
        #expect(run.values(EventType.abs, C.ABS_X) == "-280@100 40@101 20000@202")
        // Seeded with 1: a repeated 1 is no change.
        #expect(run.values(EventType.sw, C.SW_LID) == "1@102")
    }

    @Test("a code whose filter is removed and added again starts from what the old filter delivered")
    func filterRemovedThenAddedAgain() {
        var hyst = DeviceFilterSettings()
        hyst.absolute[C.ABS_X] = .absolute(hysteresis: 100, minInterval: 0)
        let input = [frame(100, EventType.abs, C.ABS_X, 0), frame(101, EventType.abs, C.ABS_X, 50),
                     frame(300, EventType.abs, C.ABS_X, 60)]
        let run = runFilter(hyst, input, updates: [(150, DeviceFilterSettings()), (200, hyst)])
        #expect(run.values(EventType.abs, C.ABS_X) == "0@100")
    }

    @Test("a resync frame passes whole and restarts the codes it names; a held release of a key it says is down is dropped")
    func resyncFrame() {
        var filter = NoiseFilter(settings: Self.key15)
        _ = filter.process(frame(100, EventType.key, C.KEY_A, 1))
        #expect(filter.process(frame(105, EventType.key, C.KEY_A, 0)) == nil)   // held
        let resync = InputFrame.resync(dropped: ev(EventType.syn, SynCode.dropped, 0, at: 106),
                                       state: [ev(EventType.key, C.KEY_A, 1, at: 106)], time: 106 * ms)
        #expect(resync.isResync)
        let out = filter.process(resync)
        #expect(out.map(describe) == "@106 KEY_A 1")
        #expect(filter.nextDeadline == nil, "the held release is gone")
        #expect(filter.counters.synDropped == 1 && filter.counters[.keyChatter].dropped == 1)
        // Restarted `down`: the next release is delivered at once.
        #expect(filter.process(frame(500, EventType.key, C.KEY_A, 0)).map(describe) == "@500 KEY_A 0")
        // A lone SYN_DROPPED (a recording's) is not a resync frame: dropped, counted.
        #expect(!frame(600, EventType.syn, SynCode.dropped, 0).isResync)
        #expect(filter.process(frame(600, EventType.syn, SynCode.dropped, 0)) == nil)
        #expect(filter.counters.synDropped == 2)
    }
}
