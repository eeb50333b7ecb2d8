import InputModel
import Pipeline
import Reactive
import ReactiveTesting
import Testing

/// Keys and buttons: the `KeyDebounce` state machine through `filterNoise`, on the virtual clock (1 tick = 1 ms).
@Suite("NoiseFilter: keys and buttons", .ownLiveResources) struct KeyChatterTests {
    let window = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))

    /// The key filter's worked examples (docs/operators/throttle.md, "Key filter"), window 25 ms (rows 1–5; row 6 is the removal test below).
    @Test("DESIGN worked examples", arguments: [
        ("1@0 0@3 1@6 0@120", "1@0 0@120"),     // bounce after the press swallowed; press never delayed
        ("1@0 0@100 1@103 0@106", "1@0 0@100"), // bounce after the release swallowed
        ("1@0 0@40", "1@0 0@40"),               // a real 40 ms tap is untouched
        ("1@0 0@10", "1@0 0@25"),               // release inside the window delivered at its end
        ("1@0 2@250 2@283 0@300", "1@0 2@250 2@283 0@300"), // repeats are not chatter
    ])
    func workedExample(input: String, expected: String) {
        let run = runFilter(window, keyFrames(input))
        #expect(run.values(EventType.key, C.KEY_A) == expected)
    }

    @Test("DESIGN row 6: removal at 10 ends the window; nothing fires after it")
    func removalEndsWindow() {
        let run = runFilter(window, keyFrames("1@0 0@3 1@6"), completeAt: 10)
        #expect(run.values(EventType.key, C.KEY_A) == "1@0")
        #expect(run.stoppedAt == 10)
        #expect(run.frames.count == 1)
    }

    @Test("disposal while a value is held: nothing fires afterwards")
    func disposalDropsHeld() {
        // 0@10 is held for 25; disposed at 20.
        let run = runFilter(window, keyFrames("1@0 0@10"), disposeAt: 20)
        #expect(run.values(EventType.key, C.KEY_A) == "1@0")
        #expect(run.stoppedAt == nil)
    }

    @Test("bounce on press: chatter after the first edge swallowed, press not delayed")
    func bounceOnPress() {
        let run = runFilter(window, keyFrames("1@0 0@2 1@4 0@6 1@8 0@80"))
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@80")
        #expect(run.counters[.keyChatter] == FilterCounts(dropped: 4, delayed: 0, merged: 0))
    }

    @Test("bounce on release: release delivered at once, bounce swallowed")
    func bounceOnRelease() {
        let run = runFilter(window, keyFrames("1@0 0@100 1@102 0@104 1@106 0@108"))
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@100")
        #expect(run.counters[.keyChatter] == FilterCounts(dropped: 4, delayed: 0, merged: 0))
    }

    @Test("a fast real double-click survives untouched (button, 25 ms)")
    func fastDoubleClick() {
        let s = settings(EventType.key, C.BTN_LEFT, .chatter(window: 25 * ms))
        let input = "1@0 0@60 1@110 0@170"
        let run = runFilter(s, keyFrames(input, code: C.BTN_LEFT))
        #expect(run.values(EventType.key, C.BTN_LEFT) == input)
        #expect(run.counters[.keyChatter] == FilterCounts())
        // Even a very fast one: 30 ms apart is outside the 25 ms window.
        let fast = "1@0 0@30 1@60 0@90"
        #expect(runFilter(s, keyFrames(fast, code: C.BTN_LEFT)).values(EventType.key, C.BTN_LEFT) == fast)
    }

    @Test("key repeat survives, also inside a window")
    func keyRepeat() {
        let held = "1@0 2@500 2@533 2@566 2@600 0@610"
        #expect(runFilter(window, keyFrames(held)).values(EventType.key, C.KEY_A) == held)
        // A repeat right after the press (inside the window) is never filtered.
        #expect(runFilter(window, keyFrames("1@0 2@10 0@40")).values(EventType.key, C.KEY_A) == "1@0 2@10 0@40")
    }

    @Test("defaults: keys 15 ms, buttons 25 ms; touch and tool buttons pass")
    func defaultWindows() throws {
        let info = device(name: "kbd+mouse", classes: [.keyboard, .mouse], capabilities: [
            EventType.key: [C.KEY_A, C.BTN_LEFT, C.BTN_TOUCH, C.BTN_TOOL_FINGER],
        ])
        let s = FilterConfig().settings(for: info)
        #expect(s.keys[C.KEY_A] == .chatter(window: 15 * ms))
        #expect(s.keys[C.BTN_LEFT] == .chatter(window: 25 * ms))
        #expect(s.keys[C.BTN_TOUCH] == nil)
        #expect(s.keys[C.BTN_TOOL_FINGER] == nil)

        // A release at 14 ms: keys deliver it at 15, buttons at 25.
        #expect(runFilter(s, keyFrames("1@0 0@14")).values(EventType.key, C.KEY_A) == "1@0 0@15")
        #expect(runFilter(s, keyFrames("1@0 0@14", code: C.BTN_LEFT)).values(EventType.key, C.BTN_LEFT) == "1@0 0@25")
        // A release at 20 ms: outside the key window, inside the button window.
        #expect(runFilter(s, keyFrames("1@0 0@20")).values(EventType.key, C.KEY_A) == "1@0 0@20")
        #expect(runFilter(s, keyFrames("1@0 0@20", code: C.BTN_LEFT)).values(EventType.key, C.BTN_LEFT) == "1@0 0@25")
        // Touch and tool contacts: fast taps are real, nothing is swallowed.
        let taps = "1@0 0@3 1@6 0@9"
        #expect(runFilter(s, keyFrames(taps, code: C.BTN_TOUCH)).values(EventType.key, C.BTN_TOUCH) == taps)
        #expect(runFilter(s, keyFrames(taps, code: C.BTN_TOOL_FINGER)).values(EventType.key, C.BTN_TOOL_FINGER) == taps)
    }

    @Test("two keys have independent windows")
    func independentCodes() {
        var s = window
        s.keys[C.KEY_B] = .chatter(window: 25 * ms)
        let input = keyFrames("1@0 0@5") + keyFrames("1@3 0@10", code: C.KEY_B)
        let run = runFilter(s, input.sorted { $0.time < $1.time })
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@25")
        #expect(run.values(EventType.key, C.KEY_B) == "1@3 0@28")
    }
}

@Suite("NoiseFilter: switches, axes, frames", .ownLiveResources) struct AxisAndFrameTests {
    @Test("switch debounce: delivered once stable for the window")
    func switchDebounce() {
        let s = settings(EventType.sw, C.SW_LID, .debounce(window: 20 * ms))
        // A clean close: 20 ms later.
        #expect(runFilter(s, [frame(0, EventType.sw, C.SW_LID, 1)]).values(EventType.sw, C.SW_LID) == "1@20")
        // Bouncing: stable only from 10, delivered at 30.
        let bouncy = [frame(0, EventType.sw, C.SW_LID, 1), frame(5, EventType.sw, C.SW_LID, 0),
                      frame(10, EventType.sw, C.SW_LID, 1)]
        let run = runFilter(s, bouncy)
        #expect(run.values(EventType.sw, C.SW_LID) == "1@30")
        #expect(run.counters[.debounce] == FilterCounts(dropped: 2, delayed: 1, merged: 0))
    }

    @Test("switch debounce: a bounce back to the old value emits nothing")
    func switchBounceBack() {
        let s = settings(EventType.sw, C.SW_LID, .debounce(window: 20 * ms))
        let input = [frame(0, EventType.sw, C.SW_LID, 1),            // settles at 20
                     frame(100, EventType.sw, C.SW_LID, 0), frame(105, EventType.sw, C.SW_LID, 1)]
        let run = runFilter(s, input)
        #expect(run.values(EventType.sw, C.SW_LID) == "1@20")
        #expect(run.counters[.debounce] == FilterCounts(dropped: 2, delayed: 1, merged: 0))
    }

    @Test("abs hysteresis from absinfo fuzz: |Δ| ≤ fuzz is unchanged")
    func absHysteresisFuzz() {
        let info = device(name: "stick", classes: [.joystick], capabilities: [EventType.abs: [C.ABS_X, C.ABS_Y]],
                          absInfo: [C.ABS_X: AbsInfo(minimum: 0, maximum: 255, fuzz: 4),
                                    C.ABS_Y: AbsInfo(minimum: 0, maximum: 255, fuzz: 0)])
        let s = FilterConfig().settings(for: info)
        #expect(s.absolute[C.ABS_X] == .absolute(hysteresis: 4, minInterval: 0))
        #expect(s.absolute[C.ABS_Y] == nil)   // no fuzz, no rate: nothing to filter
        let xs: [Int32] = [100, 103, 96, 95, 99, 90, 90, 200]
        let input = xs.enumerated().map { frame(Int64($0.offset), EventType.abs, C.ABS_X, $0.element) }
        let run = runFilter(s, input)
        #expect(run.values(EventType.abs, C.ABS_X) == "100@0 95@3 90@5 200@7")
        #expect(run.counters[.absHysteresis] == FilterCounts(dropped: 4))
    }

    @Test("abs hysteresis configured in the file overrides fuzz")
    func absHysteresisConfigured() throws {
        let yaml = """
        version: 1
        devices:
          - match: { name: "stick" }
            codes:
              ABS_X: { hysteresis: 10 }
        """
        let info = device(name: "stick", classes: [.joystick], capabilities: [EventType.abs: [C.ABS_X]],
                          absInfo: [C.ABS_X: AbsInfo(minimum: 0, maximum: 255, fuzz: 4)])
        let s = try FilterConfig.parse(yaml: yaml).settings(for: info)
        #expect(s.absolute[C.ABS_X] == .absolute(hysteresis: 10, minInterval: 0))
        let input = [Int32(100), 108, 111, 105].enumerated().map {
            frame(Int64($0.offset), EventType.abs, C.ABS_X, $0.element)
        }
        #expect(runFilter(s, input).values(EventType.abs, C.ABS_X) == "100@0 111@2")
    }

    @Test("abs max rate: at most one value per interval, latest wins")
    func absMaxRate() {
        let s = settings(EventType.abs, C.ABS_X, .absolute(hysteresis: 0, minInterval: 10 * ms))
        let input = [(0, 1), (2, 2), (4, 3), (12, 4), (30, 5)].map {
            frame(Int64($0.0), EventType.abs, C.ABS_X, Int32($0.1))
        }
        let run = runFilter(s, input)
        #expect(run.values(EventType.abs, C.ABS_X) == "1@0 3@10 4@20 5@30")
        #expect(run.counters[.absRate] == FilterCounts(dropped: 1, delayed: 2, merged: 0))
    }

    @Test("rel summing under a rate limit: nothing lost, sums at window ends")
    func relSumming() {
        let s = settings(EventType.rel, C.REL_X, .relative(minInterval: 10 * ms))
        let input = [(0, 1), (2, 2), (4, 3), (15, 4), (40, 7)].map {
            frame(Int64($0.0), EventType.rel, C.REL_X, Int32($0.1))
        }
        let run = runFilter(s, input)
        #expect(run.values(EventType.rel, C.REL_X) == "1@0 5@10 4@20 7@40")
        #expect(run.counters[.relRate] == FilterCounts(dropped: 0, delayed: 0, merged: 3))
    }

    @Test("rel summing, seeded random input: total in = total out", arguments: [1, 2, 3] as [UInt64])
    func relSumPreserved(seed: UInt64) {
        var rng = SplitMix64(seed: seed)
        var s = settings(EventType.rel, C.REL_X, .relative(minInterval: 8 * ms))
        s.relative[C.REL_WHEEL] = .relative(minInterval: 16 * ms)
        var input: [InputFrame] = []
        var t: Int64 = 0
        var sumIn: [UInt16: Int64] = [:]
        for _ in 0..<2000 {
            t += Int64(rng.below(5))   // 0..4 ms apart: equal times happen too
            var events: [(UInt16, UInt16, Int32)] = []
            for code in [C.REL_X, C.REL_WHEEL] where rng.below(3) != 0 {
                let v = Int32(rng.below(41)) - 20
                events.append((EventType.rel, code, v))
                sumIn[code, default: 0] += Int64(v)
            }
            input.append(frame(t, events))
        }
        let run = runFilter(s, input)
        var sumOut: [UInt16: Int64] = [:]
        for f in run.frames { for e in f.events { sumOut[e.code, default: 0] += Int64(e.value) } }
        #expect(sumOut == sumIn)
        #expect(run.frames.allSatisfy { !$0.events.isEmpty })
    }

    @Test("multitouch passes through by default")
    func multitouchPassthrough() {
        let info = device(name: "touchscreen", classes: [.touchscreen], capabilities: [
            EventType.abs: [C.ABS_X, C.ABS_MT_SLOT, C.ABS_MT_POSITION_X, C.ABS_MT_TRACKING_ID],
            EventType.key: [C.BTN_TOUCH],
        ], absInfo: [C.ABS_X: AbsInfo(minimum: 0, maximum: 4000, fuzz: 8),
                     C.ABS_MT_POSITION_X: AbsInfo(minimum: 0, maximum: 4000, fuzz: 8)])
        let s = FilterConfig().settings(for: info)
        #expect(s.absolute[C.ABS_MT_POSITION_X] == nil)
        #expect(s.absolute[C.ABS_MT_SLOT] == nil)
        #expect(s.absolute[C.ABS_X] == .absolute(hysteresis: 8, minInterval: 0))
        let input = (0..<6).map { i in
            frame(Int64(i), [(EventType.abs, C.ABS_MT_SLOT, 0), (EventType.abs, C.ABS_MT_POSITION_X, Int32(1000 + i)),
                             (EventType.key, C.BTN_TOUCH, Int32(i % 2))])
        }
        let run = runFilter(s, input)
        #expect(run.frames == input)
    }

    @Test("frames stay whole: KEY chatter + REL motion keeps the REL in its frame")
    func framesStayWhole() {
        var s = settings(EventType.key, C.BTN_LEFT, .chatter(window: 25 * ms))
        s.relative[C.REL_X] = .relative(minInterval: 0)
        let input = [
            frame(0, [(EventType.key, C.BTN_LEFT, 1), (EventType.rel, C.REL_X, 3)]),
            frame(4, [(EventType.key, C.BTN_LEFT, 0), (EventType.rel, C.REL_X, 5), (EventType.rel, C.REL_Y, -1)]),
            frame(8, [(EventType.key, C.BTN_LEFT, 1), (EventType.rel, C.REL_X, 2)]),
        ]
        let run = runFilter(s, input)
        #expect(run.lines == ["@0 BTN_LEFT 1, REL_X 3", "@4 REL_X 5, REL_Y -1", "@8 REL_X 2"])
    }

    @Test("a frame left with only EV_MSC after filtering is dropped; an MSC-only input frame passes")
    func mscLeftoverDropped() {
        let s = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))
        let input = [
            frame(0, [(EventType.msc, C.MSC_SCAN, 30), (EventType.key, C.KEY_A, 1)]),
            frame(5, [(EventType.msc, C.MSC_SCAN, 30), (EventType.key, C.KEY_A, 0)]),   // chatter: dropped whole
            frame(6, [(EventType.msc, C.MSC_SCAN, 99)]),                                  // nothing filtered: passes
            frame(9, [(EventType.msc, C.MSC_SCAN, 30), (EventType.key, C.KEY_A, 1)]),
        ]
        let run = runFilter(s, input)
        #expect(run.lines == ["@0 MSC_SCAN 30, KEY_A 1", "@6 MSC_SCAN 99"])
        #expect(run.counters.framesDropped == 2)
        #expect(run.counters.framesIn == 4)
    }

    @Test("SYN_DROPPED is counted and not passed on")
    func synDroppedCounted() {
        let s = DeviceFilterSettings()
        let input = [frame(0, EventType.key, C.KEY_A, 1),
                     frame(1, [(EventType.syn, SynCode.dropped, 0)]),
                     frame(2, [(EventType.syn, SynCode.dropped, 0), (EventType.key, C.KEY_A, 0)])]
        let run = runFilter(s, input)
        #expect(run.counters.synDropped == 2)
        #expect(run.lines == ["@0 KEY_A 1", "@2 KEY_A 0"])
        #expect(run.counters.framesIn == 3)
        #expect(run.counters.framesOut == 2)
        #expect(run.counters.framesDropped == 1)
    }

    @Test("reconfigure: unchanged codes keep their state, changed codes deliver their held values at once (issue #33)")
    func reconfigureKeepsState() {
        let before = { () -> DeviceFilterSettings in
            var s = settings(EventType.key, C.KEY_A, .chatter(window: 25 * ms))
            s.keys[C.KEY_B] = .chatter(window: 25 * ms)
            return s
        }()
        var after = before
        after.keys[C.KEY_B] = .chatter(window: 40 * ms)
        let input = keyFrames("1@0 0@5") + keyFrames("1@1 0@6", code: C.KEY_B)
        let run = runFilter(before, input.sorted { $0.time < $1.time }, updates: [(10, after)])
        // KEY_A keeps its held release (window end 25); KEY_B's held release is delivered at
        // the reload, stamped with the last frame's time (a reload never drops an edge).
        #expect(run.values(EventType.key, C.KEY_A) == "1@0 0@25")
        #expect(run.values(EventType.key, C.KEY_B) == "1@1 0@6")
        #expect(run.counters[.keyChatter] == FilterCounts(dropped: 0, delayed: 2, merged: 0))
    }
}
