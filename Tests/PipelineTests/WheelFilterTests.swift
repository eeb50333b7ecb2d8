import InputModel
import Pipeline
import Testing

/// One row of the `WheelFilter` table in docs/configuration.md (W = 100 ms).
struct WheelRow: Sendable, CustomTestStringConvertible {
    let number: Int
    let state: WheelFilter.State
    let input: WheelFilter.Input
    let at: Int64
    let output: WheelFilter.Output
    let next: WheelFilter.State
    var testDescription: String { "row \(number)" }

    init(_ number: Int, _ state: WheelFilter.State, _ input: WheelFilter.Input, at: Int64,
         _ output: WheelFilter.Output, next: WheelFilter.State) {
        self.number = number
        self.state = state
        self.input = input
        self.at = at * ms
        self.output = output
        self.next = next
    }
}

private let up: Int8 = 1, down: Int8 = -1
private let holding = WheelFilter.State.holding(direction: up, last: 100 * ms, heldAt: 150 * ms, until: 250 * ms)

/// Every row of the state/transition table, from its state, on the pure machine.
let wheelTable: [WheelRow] = [
    .init(1, .idle, .tick(up), at: 100, .init(pass: true), next: .scrolling(direction: up, last: 100 * ms)),
    .init(2, .idle, .timeout, at: 100, .init(), next: .idle),
    .init(3, .scrolling(direction: up, last: 100 * ms), .tick(up), at: 120, .init(pass: true),
          next: .scrolling(direction: up, last: 120 * ms)),
    .init(4, .scrolling(direction: up, last: 100 * ms), .tick(down), at: 150, .init(hold: true), next: holding),
    .init(5, .scrolling(direction: up, last: 100 * ms), .tick(down), at: 200, .init(pass: true),
          next: .scrolling(direction: down, last: 200 * ms)),   // t − last = W: a pause, passes
    .init(6, .scrolling(direction: up, last: 100 * ms), .timeout, at: 300, .init(),
          next: .scrolling(direction: up, last: 100 * ms)),
    .init(7, holding, .tick(down), at: 170, .init(pass: true, releaseHeld: true),
          next: .scrolling(direction: down, last: 170 * ms)),
    .init(8, holding, .tick(up), at: 170, .init(pass: true, dropped: 1), next: .scrolling(direction: up, last: 170 * ms)),
    .init(9, holding, .timeout, at: 250, .init(dropped: 1), next: .idle),
    // The driver did not fire the deadline before a later tick: the timeout first.
    .init(10, holding, .tick(down), at: 250, .init(pass: true, dropped: 1), next: .scrolling(direction: down, last: 250 * ms)),
    .init(11, holding, .tick(up), at: 300, .init(pass: true, dropped: 1), next: .scrolling(direction: up, last: 300 * ms)),
]

@Suite("WheelFilter: the state machine") struct WheelFilterTableTests {
    @Test("every row of the table", arguments: wheelTable)
    func row(_ r: WheelRow) {
        var machine = WheelFilter(window: 100 * ms, state: r.state)
        let out = machine.on(r.input, at: r.at)
        #expect(out == r.output)
        #expect(machine.state == r.next)
        #expect(machine.deadline == { if case .holding(_, _, _, let u) = r.next { return u } else { return nil } }())
    }

    @Test("the table lists every state with every input")
    func tableCoversEverything() {
        func name(_ s: WheelFilter.State) -> String { String(describing: s).prefix { $0 != "(" }.description }
        func input(_ i: WheelFilter.Input) -> String {
            switch i {
            case .timeout: "timeout"
            case .tick(let s): "tick\(s)"
            }
        }
        let pairs = Set(wheelTable.map { "\(name($0.state)) \(input($0.input))" })
        for state in ["idle", "scrolling", "holding"] {
            for i in ["tick1", "tick-1", "timeout"] where !(state == "idle" && i == "tick-1") {
                #expect(pairs.contains("\(state) \(i)"), "\(state) \(i)")
            }
        }
    }
}

/// Frames of one scroll axis from `value@ms` text such as `1@0 1@20 -1@50`: `REL_WHEEL` only
/// (`hiRes` nil), or `REL_WHEEL_HI_RES` = value × `hiRes` with the `REL_WHEEL` a kernel adds
/// (its accumulator: a detent each 120, hid-input's rule).
func wheelFrames(_ text: String, hiRes: Int32? = nil) -> [InputFrame] {
    var accumulated: Int32 = 0
    return text.split(separator: " ").map { item in
        let parts = item.split(separator: "@")
        let t = Int64(parts[1])!, v = Int32(parts[0])!
        guard let hiRes else { return frame(t, EventType.rel, C.REL_WHEEL, v) }
        accumulated += v * hiRes
        let lo = accumulated / 120
        accumulated -= lo * 120
        var events: [(UInt16, UInt16, Int32)] = []
        if lo != 0 { events.append((EventType.rel, C.REL_WHEEL, lo)) }
        events.append((EventType.rel, C.REL_WHEEL_HI_RES, v * hiRes))
        return frame(t, events)
    }
}

func wheelSettings(_ window: Int64 = 100, hiRes: Bool = false, horizontal: Bool = false) -> DeviceFilterSettings {
    var s = DeviceFilterSettings()
    s.wheel[C.REL_WHEEL] = WheelSetting(window: window * ms, hiRes: hiRes)
    if horizontal { s.wheel[C.REL_HWHEEL] = WheelSetting(window: window * ms, hiRes: hiRes) }
    return s
}

extension FilterRun {
    /// The sum of every delivered value of one code.
    func sum(_ code: UInt16) -> Int32 {
        frames.flatMap(\.events).filter { $0.type == EventType.rel && $0.code == code }.reduce(0) { $0 + $1.value }
    }
}

/// Marble tests in virtual time (TestScheduler, 1 tick = 1 ms) through `filterNoise`, W = 100 ms.
@Suite("WheelFilter: marbles through filterNoise", .ownLiveResources) struct WheelFilterMarbleTests {
    @Test("REL_WHEEL only", arguments: [
        // input, output
        ("1@0 1@20 1@40 -1@50 1@60 1@80", "1@0 1@20 1@40 1@60 1@80"),          // a stray tick in a scroll
        ("1@0 1@20 1@40 -1@50", "1@0 1@20 1@40"),                              // a stray at the scroll's end
        ("1@0 1@20 -1@50 -1@70 -1@90", "1@0 1@20 -2@70 -1@90"),                // a real reversal, whole
        ("1@0 1@20 -1@300 -1@320", "1@0 1@20 -1@300 -1@320"),                  // a reversal after a pause
        ("1@0 1@20 -1@120", "1@0 1@20 -1@120"),                                // exactly W after: a pause
        ("1@0 1@20 -1@50 -1@200", "1@0 1@20 -1@200"),                          // too slow: the first is lost
        ("-1@0 1@10 -1@20 -1@30", "-1@0 -1@20 -1@30"),                         // the other direction
        ("3@0 -2@10 3@20", "3@0 3@20"),                                        // several detents a frame
    ])
    func lowResolution(input: String, output: String) {
        let run = runFilter(wheelSettings(), wheelFrames(input))
        #expect(run.values(EventType.rel, C.REL_WHEEL) == output)
    }

    @Test("counters: dropped stray ticks, delayed held ticks of a confirmed reversal")
    func counters() {
        let run = runFilter(wheelSettings(), wheelFrames("1@0 1@20 -1@50 1@60 -1@70 -1@80 1@400 -1@420"))
        #expect(run.values(EventType.rel, C.REL_WHEEL) == "1@0 1@20 1@60 -2@80 1@400")
        #expect(run.counters[.wheel] == FilterCounts(dropped: 2, delayed: 1))
        #expect(run.counters.framesDropped == 3)   // the two strays and the held tick (delivered with the next)
    }

    @Test("the held tick's window ends at heldAt + W on the virtual clock: a second tick 1 ms before confirms, 1 ms after does not")
    func windowEdge() {
        let before = runFilter(wheelSettings(), wheelFrames("1@0 1@20 -1@50 -1@149"))
        #expect(before.values(EventType.rel, C.REL_WHEEL) == "1@0 1@20 -2@149")
        #expect(before.counters[.wheel] == FilterCounts(dropped: 0, delayed: 1))
        let after = runFilter(wheelSettings(), wheelFrames("1@0 1@20 -1@50 -1@151"))
        #expect(after.values(EventType.rel, C.REL_WHEEL) == "1@0 1@20 -1@151")
        #expect(after.counters[.wheel] == FilterCounts(dropped: 1, delayed: 0))
    }

    @Test("hi-res, 120 a detent: a stray is dropped with its REL_WHEEL; frames that pass are the device's own")
    func hiRes120() {
        let input = wheelFrames("1@0 1@20 1@40 -1@50 1@60 -1@300 -1@320", hiRes: 120)
        let run = runFilter(wheelSettings(hiRes: true), input)
        #expect(run.values(EventType.rel, C.REL_WHEEL_HI_RES) == "120@0 120@20 120@40 120@60 -120@300 -120@320")
        #expect(run.values(EventType.rel, C.REL_WHEEL) == "1@0 1@20 1@40 1@60 -1@300 -1@320")
        let clean = wheelFrames("1@0 1@20 1@40 1@60 -1@300 -1@320", hiRes: 120)
        #expect(run.frames == clean)   // the very frames of the scroll without the stray
    }

    @Test("hi-res, 15 units a tick (8 a detent): the delivered hi-res sum is 120 × the detents + under one detent")
    func hiResPartial() {
        // 20 ticks down, a stray tick up in the middle, 20 more down.
        var ticks = (0..<20).map { "1@\($0 * 10)" }
        ticks.append("-1@195")
        ticks += (20..<40).map { "1@\($0 * 10)" }
        let run = runFilter(wheelSettings(hiRes: true), wheelFrames(ticks.joined(separator: " "), hiRes: 15))
        let hi = run.sum(C.REL_WHEEL_HI_RES), lo = run.sum(C.REL_WHEEL)
        #expect(hi == 40 * 15)
        #expect(lo == 5)
        #expect(hi - 120 * lo == 0)
        // At every frame, the running sums stay within one detent of each other.
        var hiSum: Int32 = 0, loSum: Int32 = 0
        for f in run.frames {
            for e in f.events where e.code == C.REL_WHEEL_HI_RES { hiSum += e.value }
            for e in f.events where e.code == C.REL_WHEEL { loSum += e.value }
            #expect(abs(hiSum - 120 * loSum) < 120, "\(describe(f))")
        }
        #expect(run.counters[.wheel].dropped == 1)
        // Unfiltered, the kernel's stream: 15 × 40 − 15 = 585 hi-res, 4 detents (its accumulator
        // was set back by the stray): the filter gives back the fifth.
        let raw = wheelFrames(ticks.joined(separator: " "), hiRes: 15)
        #expect(raw.flatMap(\.events).filter { $0.code == C.REL_WHEEL }.reduce(0) { $0 + $1.value } == 4)
    }

    @Test("hi-res, a clean partial scroll passes unchanged, frame for frame")
    func hiResPartialClean() {
        let text = (0..<24).map { "1@\($0 * 10)" }.joined(separator: " ") + " " + (0..<16).map { "-1@\(600 + $0 * 10)" }.joined(separator: " ")
        let input = wheelFrames(text, hiRes: 15)
        #expect(runFilter(wheelSettings(hiRes: true), input).frames == input)
    }

    @Test("hi-res axis: a frame with REL_WHEEL alone counts as 120 × its value, and gets its REL_WHEEL_HI_RES")
    func hiResAxisLowOnlyFrame() {
        let run = runFilter(wheelSettings(hiRes: true), wheelFrames("1@0 -1@30 1@60"))
        #expect(run.values(EventType.rel, C.REL_WHEEL) == "1@0 1@60")
        #expect(run.values(EventType.rel, C.REL_WHEEL_HI_RES) == "120@0 120@60")
    }

    @Test("horizontal and vertical are independent; other events of a frame stay")
    func twoAxes() {
        let input = [
            frame(0, [(EventType.rel, C.REL_WHEEL, 1), (EventType.rel, C.REL_HWHEEL, -1)]),
            frame(20, [(EventType.rel, C.REL_X, 3), (EventType.rel, C.REL_WHEEL, -1), (EventType.rel, C.REL_HWHEEL, -1)]),
            frame(40, [(EventType.rel, C.REL_WHEEL, 1), (EventType.key, C.BTN_LEFT, 1)]),
        ]
        let run = runFilter(wheelSettings(horizontal: true), input)
        #expect(run.frames.map(describe) == [
            "@0 REL_WHEEL 1, REL_HWHEEL -1",
            "@20 REL_X 3, REL_HWHEEL -1",
            "@40 REL_WHEEL 1, BTN_LEFT 1",
        ])
    }

    @Test("off (no wheel setting): every tick passes")
    func off() {
        let input = wheelFrames("1@0 1@20 -1@50 1@60")
        #expect(runFilter(DeviceFilterSettings(), input).frames == input)
    }
}

@Suite("WheelFilter: configuration") struct WheelFilterConfigTests {
    static let mouse = device(name: "Wheel mouse", classes: [.mouse],
                              capabilities: [EventType.key: [C.BTN_LEFT], EventType.rel: [C.REL_X, C.REL_Y, C.REL_WHEEL, C.REL_WHEEL_HI_RES]])
    static let oldMouse = device(name: "Old mouse", classes: [.mouse],
                                 capabilities: [EventType.rel: [C.REL_X, C.REL_Y, C.REL_WHEEL, C.REL_HWHEEL]])
    static let keyboard = device(name: "Keyboard", classes: [.keyboard], capabilities: [EventType.key: [C.KEY_A]])

    @Test("off by default; wheel: in defaults and in a rule; hi-res from the device's codes")
    func configuration() throws {
        #expect(FilterConfig().settings(for: Self.mouse).wheel.isEmpty)
        let all = try FilterConfig.parse(yaml: "defaults:\n  wheel: 80ms\n")
        #expect(all.settings(for: Self.mouse).wheel == [C.REL_WHEEL: WheelSetting(window: 80 * ms, hiRes: true)])
        #expect(all.settings(for: Self.oldMouse).wheel == [C.REL_WHEEL: WheelSetting(window: 80 * ms, hiRes: false),
                                                           C.REL_HWHEEL: WheelSetting(window: 80 * ms, hiRes: false)])
        #expect(all.settings(for: Self.keyboard).wheel.isEmpty)
        let hiOnly = device(name: "Hi-res only", classes: [.mouse], capabilities: [EventType.rel: [C.REL_X, C.REL_WHEEL_HI_RES]])
        #expect(all.settings(for: hiOnly).wheel.isEmpty)   // the filter would write a REL_WHEEL it does not have
        let rule = try FilterConfig.parse(yaml: """
            defaults:
              wheel: 80ms
            devices:
              - match: { name: "Old*" }
                wheel: off
              - match: { name: "Wheel*" }
                wheel: 120
            """)
        #expect(rule.settings(for: Self.oldMouse).wheel.isEmpty)
        #expect(rule.settings(for: Self.mouse).wheel[C.REL_WHEEL]?.window == 120 * ms)
        #expect(throws: ConfigError.self) { try FilterConfig.parse(yaml: "defaults:\n  wheel: fast\n") }
    }
}
