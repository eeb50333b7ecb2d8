import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Recording
import ReactiveTesting
import Testing

@Suite("ChatterAnalysis", .ownLiveResources) struct ChatterAnalysisTests {
    static let info = device(name: "Synthetic", classes: [.keyboard, .mouse], capabilities: [
        EventType.key: [C.KEY_A, C.KEY_B, C.code("KEY_C"), C.BTN_LEFT, C.BTN_TOUCH],
    ])

    /// Key events from `value@ms` pairs, each followed by a SYN_REPORT (which must be ignored).
    static func events(_ code: UInt16, _ items: [(Int32, Int64)]) -> [InputEvent] {
        items.flatMap { [ev(EventType.key, code, $0.0, at: $0.1), ev(EventType.syn, SynCode.report, 0, at: $0.1)] }
    }

    /// 20 buckets with the given non-zero ones.
    static func buckets(_ nonZero: [Int: Int]) -> [Int] {
        (0..<20).map { nonZero[$0] ?? 0 }
    }

    static func analyzeSynthetic() -> ChatterReport {
        var events = Self.events(C.KEY_A, [(1, 0), (0, 3), (1, 5), (0, 60), (1, 130), (2, 400), (2, 433), (0, 450)])
        events += Self.events(C.KEY_B, [(1, 1000), (0, 1100)])
        // A mouse button bouncing on every release: press at t, release at t+80, re-close
        // d = 1...12 ms later for 1 ms.
        var button: [(Int32, Int64)] = []
        for i in 0..<100 {
            let t = Int64(2000 + i * 1000), d = Int64(i % 12 + 1)
            button += [(1, t), (0, t + 80), (1, t + 80 + d), (0, t + 81 + d)]
        }
        events += Self.events(C.BTN_LEFT, button)
        events += Self.events(C.BTN_TOUCH, [(1, 5000), (0, 5003), (1, 5006), (0, 5009)])
        // A worn key whose contact re-closes 20 ms after every release, for 2 ms: beyond the
        // 15 ms default window for keys.
        events += Self.events(C.code("KEY_C"), (0..<5).flatMap { i -> [(Int32, Int64)] in
            let t = Int64(200_000 + i * 1000)
            return [(1, t), (0, t + 100), (1, t + 120), (0, t + 122)]
        })
        events.sort { $0.time < $1.time }
        return ChatterAnalysis.analyze([(info: info, events: events)])
    }

    @Test("synthetic input: exact counts, histograms, outcomes and suggestions")
    func synthetic() throws {
        let report = Self.analyzeSynthetic()
        #expect(report.codes.map(\.code) == ["KEY_A", "KEY_C", "KEY_B", "BTN_LEFT", "BTN_TOUCH"])   // by code number

        let a = report.codes[0]
        #expect((a.presses, a.releases, a.repeats) == (3, 3, 2))
        #expect(a.gaps.counts == Self.buckets([0: 1, 14: 1]))    // 2 ms, 70 ms
        #expect(a.holds.counts == Self.buckets([0: 1, 11: 1]))   // 3 ms, 55 ms (320 ms not counted)
        #expect(a.shortestGap == 2 * ms && a.shortestHold == 3 * ms)
        // Real presses at 0 and 130 (the re-press at 5 is 2 ms after a release): the default
        // 15 ms keeps both and lets no bounce through.
        #expect(a.withDefault == ChatterAnalysis.Outcome(realPresses: 2, deliveredPresses: 2))
        #expect(a.suggestedWindow == 15 * ms && a.suggestedSpurious == .auto)
        #expect(a.closestDoubleClick == 70 * ms)
        #expect(a.reasoning == "the default (window 15ms, spurious auto) leaves no bounce and loses no press; "
                + "closest real double-click: 70ms between release and press")

        let keyC = report.codes[1]
        // Each re-close 20 ms after a release gets through the 15 ms default as an extra click.
        #expect(keyC.withDefault == ChatterAnalysis.Outcome(realPresses: 5, deliveredPresses: 10, remainingBounces: 5))
        // 21 ms is the smallest window that swallows a press 20 ms after the release.
        #expect(keyC.suggestedWindow == 21 * ms && keyC.suggestedSpurious == .auto)
        #expect(keyC.suggestion == ChatterAnalysis.Outcome(realPresses: 5, deliveredPresses: 5))
        #expect(keyC.reasoning.hasPrefix("the default leaves 5 bounce(s) and loses 0 press(es); window 21ms, spurious auto is the smallest"))

        let left = report.codes[3]
        #expect((left.presses, left.releases, left.repeats) == (200, 200, 0))
        // d = 1...12: 1–4 ms nine times each, 5–12 ms eight times each.
        #expect(left.gaps.counts == Self.buckets([0: 36, 1: 40, 2: 24]))
        #expect(left.holds.counts == Self.buckets([0: 100, 16: 100]))
        #expect(left.withDefault == ChatterAnalysis.Outcome(realPresses: 100, deliveredPresses: 100))
        #expect(left.suggestedWindow == 25 * ms)

        let touch = report.codes[4]
        #expect(touch.suggestedWindow == nil && touch.suggestion == nil)
        #expect(touch.holds.counts == Self.buckets([0: 2]))
    }

    @Test("edges with equal timestamps are paired by order; events after the last SYN_REPORT are ignored")
    func equalTimesAndTrailingEvents() {
        var events = Self.events(C.KEY_A, [(1, 0), (0, 50), (1, 50), (0, 100)])
        events.append(ev(EventType.key, C.KEY_A, 1, at: 200))   // no SYN_REPORT after it
        let code = ChatterAnalysis.analyze([(info: Self.info, events: events)]).codes[0]
        #expect((code.presses, code.releases) == (2, 2))
        #expect(code.gaps.counts == Self.buckets([0: 1]))   // 50 → 50: a gap of 0
        #expect(code.holds.counts == Self.buckets([10: 2]))
        #expect(code.shortestGap == 0)
    }

    /// The numbers of real recordings, pinned; checked against an independent count of the
    /// files' `E:` lines (release→press and press→release intervals, values 0/1/other).
    @Test("real fixtures: pinned numbers")
    func realFixtures() throws {
        func analyze(_ path: String) throws -> [String] {
            let r = try Recording.read(contentsOf: Fixtures.recording(path))
            return ChatterAnalysis.analyze(r.devices.map { (info: $0.info, events: $0.events) }).codes.map {
                "\($0.code) \($0.presses)/\($0.releases)/\($0.repeats) gaps \($0.gaps.total) holds \($0.holds.total) "
                    + "window \($0.suggestedWindow.map { "\($0 / ms)ms" } ?? "-")"
                    + ($0.withDefault.map { " default \($0.remainingBounces)/\($0.lostPresses)" } ?? "")
            }
        }
        #expect(try analyze("evemu-devices/mice/Ultrathin Touch Mouse.events") == [
            "BTN_LEFT 4/4/18 gaps 0 holds 0 window 25ms default 0/0", "BTN_RIGHT 2/2/13 gaps 0 holds 0 window 25ms default 0/0",
        ])
        // Headset buttons report press and release 1 µs apart: every press is still delivered
        // once (its release at the window's end), so the default stays.
        #expect(try analyze("evemu-devices/misc/Plantronics Plantronics .Audio 648 USB.buttons.events") == [
            "BTN_0 2/2/0 gaps 0 holds 2 window 25ms default 0/0", "BTN_1 2/2/0 gaps 0 holds 2 window 25ms default 0/0",
            "BTN_2 2/1/0 gaps 0 holds 0 window 25ms default 0/0", "BTN_3 2/2/0 gaps 0 holds 2 window 25ms default 0/0",
        ])
        #expect(try analyze("evemu-devices/touchscreens/Atmel maXTouch Touchscreen.1-finger-fast-taps.events") == [
            "BTN_TOUCH 9/9/0 gaps 0 holds 7 window -",
        ])
        #expect(try analyze("evemu-devices/touchpads/bcm5974.three-finger-click.events") == [
            "BTN_LEFT 3/3/0 gaps 0 holds 0 window 25ms default 0/0", "BTN_TOOL_FINGER 5/5/0 gaps 1 holds 4 window -",
            "BTN_TOUCH 5/5/0 gaps 2 holds 2 window -", "BTN_TOOL_DOUBLETAP 2/2/0 gaps 0 holds 1 window -",
            "BTN_TOOL_TRIPLETAP 1/1/0 gaps 0 holds 0 window -",
        ])
        #expect(try analyze("evemu-devices/keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events")
                == ["KEY_ENTER 0/1/0 gaps 0 holds 0 window 15ms default 0/0", "KEY_LEFTCTRL 1/0/0 gaps 0 holds 0 window 15ms default 0/0",
                    "KEY_C 1/0/0 gaps 0 holds 0 window 15ms default 0/0"])
        // A recording without keys or buttons gives an empty report.
        #expect(try analyze("evemu-devices/mice/PS2 Generic Mouse.events").isEmpty)
    }
}

@Suite("AxisNoiseAnalysis (analyze --axes)", .ownLiveResources) struct AxisNoiseAnalysisTests {
    static let stick = device(name: "Stick", classes: [.joystick], capabilities: [EventType.abs: [C.ABS_X, C.ABS_Y]],
                              absInfo: [C.ABS_X: AbsInfo(minimum: 0, maximum: 255, fuzz: 4),
                                        C.ABS_Y: AbsInfo(minimum: 0, maximum: 255, fuzz: 4)])

    /// ABS_X rests at 128 swinging ±6 (a worn stick, far more than its fuzz of 4) for 2 s,
    /// moves to 250, rests there ±1; ABS_Y rests within its fuzz.
    static func events() -> [InputEvent] {
        var rng = SplitMix64(seed: 7)
        var out: [InputEvent] = []
        func add(_ code: UInt16, _ v: Int32, _ t: Int64) {
            out.append(InputEvent(time: t * 1_000_000, type: EventType.abs, code: code, value: v))
            out.append(InputEvent(time: t * 1_000_000, type: EventType.syn, code: SynCode.report, value: 0))
        }
        var t: Int64 = 0
        for i in 0..<200 { add(C.ABS_X, 122 + Int32(i % 13), t); t += 10 }            // 122…134: swing 12
        for v in stride(from: 134, through: 250, by: 29) { add(C.ABS_X, Int32(v), t); t += 10 }
        for _ in 0..<100 { add(C.ABS_X, 249 + Int32(rng.below(3)), t); t += 10 }
        for i in 0..<100 { add(C.ABS_Y, 60 + Int32(i % 4), t); t += 10 }
        return out
    }

    @Test("idle swing, suggestion, and the real filter's deliveries at rest with the fuzz and the suggestion")
    func stick() {
        let axes = AxisNoiseAnalysis.analyze([(info: Self.stick, events: Self.events())])
        #expect(axes.map(\.code) == ["ABS_X", "ABS_Y"])
        let x = axes[0]
        #expect(x.idleSwing == 12 && x.fuzz == 4 && x.suggestedHysteresis == 12)
        #expect(x.restingSlices >= 25)
        #expect(x.idleDeliveredWithFuzz > 20)        // the fuzz lets the idle swing through
        #expect(x.idleDeliveredWithSuggestion == 0)  // the suggestion hides it
        let y = axes[1]
        #expect(y.idleSwing == 3 && y.suggestedHysteresis == 4 && y.idleDeliveredWithFuzz == 0)
    }
}

@Suite("Default debounce on the shipped recordings", .ownLiveResources) struct DefaultDebounceOnFixturesTests {
    @Test("every key and button of every shipped recording: no extra click, no real press lost", arguments: Fixtures.recordings())
    func clean(path: String) throws {
        let r = try Recording.read(contentsOf: Fixtures.recording(path))
        for c in ChatterAnalysis.analyze(r.devices.map { (info: $0.info, events: $0.events) }).codes {
            guard let d = c.withDefault else { continue }   // touch and tool contacts are not filtered
            #expect(d.isClean, "\(path) \(c.code): \(d)")
        }
    }
}
