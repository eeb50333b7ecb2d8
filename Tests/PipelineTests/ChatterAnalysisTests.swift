import Foundation
import InputModel
import Pipeline
import Recording
import Testing

@Suite("ChatterAnalysis") struct ChatterAnalysisTests {
    static let info = device(name: "Synthetic", classes: [.keyboard, .mouse], capabilities: [
        EventType.key: [C.KEY_A, C.KEY_B, C.BTN_LEFT, C.BTN_TOUCH],
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
        events.sort { $0.time < $1.time }
        return ChatterAnalysis.analyze([(info: info, events: events)])
    }

    @Test("synthetic input: exact counts, histograms and suggestions")
    func synthetic() throws {
        let report = Self.analyzeSynthetic()
        #expect(report.codes.map(\.code) == ["KEY_A", "KEY_B", "BTN_LEFT", "BTN_TOUCH"])

        let a = report.codes[0]
        #expect((a.presses, a.releases, a.repeats) == (3, 3, 2))
        #expect(a.gaps.counts == Self.buckets([0: 1, 14: 1]))    // 2 ms, 70 ms
        #expect(a.holds.counts == Self.buckets([0: 1, 11: 1]))   // 3 ms, 55 ms (320 ms not counted)
        #expect(a.shortestGap == 2 * ms && a.shortestHold == 3 * ms)
        // Bounce 2 ms and 3 ms → 4 ms covers both, raised to the 5 ms minimum; the 70 ms gap stays.
        #expect(a.suggestedWindow == 5 * ms)
        #expect(a.reasoning.contains("2 interval(s) under 30ms taken as bounce (1 release→press, 1 press→release)"))
        #expect(a.reasoning.contains("raised to the 5ms minimum"))
        #expect(a.reasoning.contains("1 release→press gap(s) from 70ms up stay"))

        let b = report.codes[1]
        #expect(b.gaps.total == 0 && b.holds.total == 0)
        #expect(b.suggestedWindow == 15 * ms)
        #expect(b.reasoning.contains("no bounce seen"))

        let left = report.codes[2]
        #expect((left.presses, left.releases, left.repeats) == (200, 200, 0))
        // d = 1...12: 1–4 ms nine times each, 5–12 ms eight times each.
        #expect(left.gaps.counts == Self.buckets([0: 36, 1: 40, 2: 24]))
        #expect(left.holds.counts == Self.buckets([0: 100, 16: 100]))
        // 200 bounce intervals; the 198th shortest is 12 ms → 13 ms.
        #expect(left.suggestedWindow == 13 * ms)
        #expect(left.reasoning.contains("the 99th-percentile is 12ms, so a window of 13ms swallows 198 of 200"))

        let touch = report.codes[3]
        #expect(touch.suggestedWindow == nil)
        #expect(touch.holds.counts == Self.buckets([0: 2]))
    }

    @Test("the suggested window really swallows the bounce and keeps the 80 ms clicks")
    func suggestionWorksInTheFilter() throws {
        let report = Self.analyzeSynthetic()
        let window = try #require(report.codes[2].suggestedWindow)
        let s = settings(EventType.key, C.BTN_LEFT, .chatter(window: window))
        var input: [InputFrame] = []
        for i in 0..<10 {
            let t = Int64(i * 1000), d = Int64(i % 12 + 1)
            input += keyFrames("1@\(t) 0@\(t + 80) 1@\(t + 80 + d) 0@\(t + 81 + d)", code: C.BTN_LEFT)
        }
        let run = runFilter(s, input)
        let expected = (0..<10).map { "1@\($0 * 1000) 0@\($0 * 1000 + 80)" }.joined(separator: " ")
        #expect(run.values(EventType.key, C.BTN_LEFT) == expected)
    }

    @Test("text report: counts, non-empty buckets, suggestion with its reasoning")
    func textReport() {
        let text = Self.analyzeSynthetic().renderText()
        #expect(text.hasPrefix("Chatter analysis: release→press gaps and press→release holds under 100ms, 5 ms buckets\n"))
        #expect(text.contains("\nSynthetic (\(Self.info.id.rawValue))\n"))
        #expect(text.contains("  BTN_LEFT: 200 presses, 200 releases, 0 repeats\n"))
        let bars = ["      0–5ms     36 ", "      5–10ms    40 ", "      10–15ms   24 "]
            .enumerated().map { $0.element + String(repeating: "#", count: [27, 30, 18][$0.offset]) + "\n" }
        #expect(text.contains("    release→press: 100 under 100ms, shortest 1ms\n" + bars.joined()))
        #expect(text.contains("    suggested window: 13ms — 200 interval(s) under 30ms"))
        #expect(text.contains("  KEY_B: 1 presses, 1 releases, 0 repeats\n    release→press: none under 100ms\n"))
        #expect(text.contains("  BTN_TOUCH: 2 presses, 2 releases, 0 repeats\n"))
        #expect(text.contains("    no suggestion — touch/tool contact"))
    }

    @Test("JSON form parses and carries the numbers")
    func jsonForm() throws {
        let json = Self.analyzeSynthetic().renderJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["threshold_ns"] as? Int == 100_000_000)
        #expect(object["bucket_ns"] as? Int == 5_000_000)
        let codes = try #require(object["codes"] as? [[String: Any]])
        #expect(codes.count == 4)
        #expect(codes[2]["code"] as? String == "BTN_LEFT")
        #expect(codes[2]["gaps"] as? [Int] == Self.buckets([0: 36, 1: 40, 2: 24]))
        #expect(codes[2]["suggested_window_ns"] as? Int == 13_000_000)
        #expect(codes[3]["suggested_window_ns"] is NSNull)
        #expect(codes[0]["shortest_gap_ns"] as? Int == 2_000_000)
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
            }
        }
        #expect(try analyze("evemu-devices/mice/Ultrathin Touch Mouse.events") == [
            "BTN_LEFT 4/4/18 gaps 0 holds 0 window 25ms", "BTN_RIGHT 2/2/13 gaps 0 holds 0 window 25ms",
        ])
        // Headset buttons report press and release 1 µs apart: "bounce" → the 5 ms minimum.
        #expect(try analyze("evemu-devices/misc/Plantronics Plantronics .Audio 648 USB.buttons.events") == [
            "BTN_0 2/2/0 gaps 0 holds 2 window 5ms", "BTN_1 2/2/0 gaps 0 holds 2 window 5ms",
            "BTN_2 2/1/0 gaps 0 holds 0 window 25ms", "BTN_3 2/2/0 gaps 0 holds 2 window 5ms",
        ])
        #expect(try analyze("evemu-devices/touchscreens/Atmel maXTouch Touchscreen.1-finger-fast-taps.events") == [
            "BTN_TOUCH 9/9/0 gaps 0 holds 7 window -",
        ])
        #expect(try analyze("evemu-devices/touchpads/bcm5974.three-finger-click.events") == [
            "BTN_LEFT 3/3/0 gaps 0 holds 0 window 25ms", "BTN_TOOL_FINGER 5/5/0 gaps 1 holds 4 window -",
            "BTN_TOUCH 5/5/0 gaps 2 holds 2 window -", "BTN_TOOL_DOUBLETAP 2/2/0 gaps 0 holds 1 window -",
            "BTN_TOOL_TRIPLETAP 1/1/0 gaps 0 holds 0 window -",
        ])
        #expect(try analyze("evemu-devices/keyboards/Lenovo ThinkPad Compact USB Keyboard with TrackPoint.keyboard.events")
                == ["KEY_ENTER 0/1/0 gaps 0 holds 0 window 15ms", "KEY_LEFTCTRL 1/0/0 gaps 0 holds 0 window 15ms",
                    "KEY_C 1/0/0 gaps 0 holds 0 window 15ms"])
        // A recording without keys or buttons gives an empty report.
        #expect(try analyze("evemu-devices/mice/PS2 Generic Mouse.events").isEmpty)
    }
}
