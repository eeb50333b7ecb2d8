import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Testing
@testable import evflowctl

// The analysis is pinned in PipelineTests (ChatterAnalysis); these check how evflowctl words it.

@Suite("Evflowctl analyze: text, JSON and --config-out")
struct ReportRenderingTests {
    @Test("text report: counts, non-empty buckets, outcomes, suggestion with its reasoning")
    func textReport() {
        let text = Synthetic.report().renderText().text
        #expect(text.hasPrefix("Chatter analysis: release→press gaps and press→release holds under 100ms, 5 ms buckets\n"))
        #expect(text.contains("\nSynthetic (\(Synthetic.info.id.rawValue))\n"))
        #expect(text.contains("  BTN_LEFT: 200 presses, 200 releases, 0 repeats\n"))
        let bars = ["      0–5ms     36 ", "      5–10ms    40 ", "      10–15ms   24 "]
            .enumerated().map { $0.element + String(repeating: "#", count: [27, 30, 18][$0.offset]) + "\n" }
        #expect(text.contains("    release→press: 100 under 100ms, shortest 1ms\n" + bars.joined()))
        #expect(text.contains("    with the default: 5 bounce(s) left, 0 of 5 real press(es) lost\n"
            + "    with the suggestion: 0 bounce(s) left, 0 of 5 real press(es) lost\n"
            + "    suggested: window 21ms, spurious auto — the default leaves 5 bounce(s)"))
        #expect(text.contains("  KEY_B: 1 presses, 1 releases, 0 repeats\n    release→press: none under 100ms\n"))
        #expect(text.contains("  BTN_TOUCH: 2 presses, 2 releases, 0 repeats\n"))
        #expect(text.contains("    no suggestion — touch/tool contact"))
    }

    @Test("JSON form parses, carries the numbers, and has its keys sorted")
    func jsonForm() throws {
        let json = Synthetic.report().renderJSON()
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect(object["threshold_ns"] as? Int == 100_000_000)
        #expect(object["bucket_ns"] as? Int == 5_000_000)
        let codes = try #require(object["codes"] as? [[String: Any]])
        #expect(codes.count == 5)
        #expect(codes[1]["code"] as? String == "KEY_C")
        #expect(codes[1]["suggested_window_ns"] as? Int == 21_000_000)
        #expect(codes[1]["suggested_spurious"] as? String == "auto")
        #expect(codes[1]["default_remaining_bounces"] as? Int == 5)
        #expect(codes[1]["suggested_remaining_bounces"] as? Int == 0)
        #expect(codes[1]["suggested_lost_presses"] as? Int == 0)
        #expect(codes[1]["real_presses"] as? Int == 5)
        #expect(codes[3]["gaps"] as? [Int] == [36, 40, 24] + [Int](repeating: 0, count: 17))
        #expect(codes[4]["suggested_window_ns"] is NSNull)
        #expect(codes[0]["shortest_gap_ns"] as? Int == 2_000_000)
        #expect(codes[0]["closest_double_click_ns"] as? Int == 70_000_000)
        // The documented order: every object's keys sorted ("real_presses" used to sit after
        // "shortest_gap_ns").
        let firstCode = json[json.range(of: "\"codes\":[{")!.upperBound...].prefix { $0 != "}" }
        let keys = firstCode.split(separator: ",").compactMap { $0.hasPrefix("\"") ? $0.split(separator: ":")[0] : nil }
        #expect(keys.count == 20 && keys == keys.sorted())
    }

    @Test("a device name with control characters and DEL is escaped as the socket escapes it")
    func hostileNameInJSON() throws {
        var info = Synthetic.info
        info.name = "Evil\u{1}\"\\\n\u{7f}"
        let json = ChatterAnalysis.analyze([(info: info, events: Synthetic.events("KEY_A", [(1, 0), (0, 50)]))]).renderJSON()
        #expect(json.contains(#""device_name":"Evil\u0001\"\\\n"# + "\u{7f}\""))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [String: Any])
        #expect((object["codes"] as? [[String: Any]])?.first?["device_name"] as? String == info.name)
    }

    @Test("--config-out: the snippet parses, and the real filter with it leaves 0 bounces where the default left 5")
    func configSnippetProvesItself() throws {
        let report = Synthetic.report()
        let yaml = report.configSnippet()
        #expect(yaml.contains("  - match: { id: \"1234:5678\", name: \"Synthetic\" }\n"))
        #expect(yaml.contains("      KEY_C: { window: 21ms, spurious: auto }\n"))
        let settings = try FilterConfig.parse(yaml: yaml).settings(for: Synthetic.info)
        let keyC = code("KEY_C")
        let filter = try #require(settings.keys[keyC])
        #expect(filter == .chatter(window: 21 * ms, spurious: .auto, spuriousWindow: 12 * ms))
        // Issue #21: the device is observed as it stands; one uncommented line grabs it.
        #expect(try FilterConfig.parse(yaml: yaml).outputMode(for: Synthetic.info) == .observe)
        let grabbing = yaml.replacingOccurrences(of: "    # output: virtual   #", with: "    output: virtual   #")
        #expect(grabbing != yaml)
        #expect(try FilterConfig.parse(yaml: grabbing).outputMode(for: Synthetic.info) == .virtual)
        let frames = ChatterAnalysis.completeFrames(Synthetic.events().filter { $0.type != EventType.key || $0.code == keyC })
            .filter { !$0.events.isEmpty }
        let byDefault = ChatterAnalysis.evaluate(code: keyC, frames: frames,
                                                 filter: FilterConfig().settings(for: Synthetic.info).keys[keyC]!)
        #expect(byDefault.remainingBounces == 5)
        #expect(ChatterAnalysis.evaluate(code: keyC, frames: frames, filter: filter) ==
                ChatterAnalysis.Outcome(realPresses: 5, deliveredPresses: 5))
    }

    /// ABS_X rests at 128 swinging 122…134 (more than its fuzz of 4); ABS_Y rests within its fuzz.
    static func stick() -> (DeviceInfo, [AxisNoiseAnalysis.AxisReport]) {
        let info = DeviceInfo(name: "Stick", inputID: InputID(bustype: 3, vendor: 0x1234, product: 0x5678, version: 1),
                              classes: [.joystick], capabilities: [EventType.abs: [code("ABS_X"), code("ABS_Y")]],
                              absInfo: [code("ABS_X"): AbsInfo(minimum: 0, maximum: 255, fuzz: 4),
                                        code("ABS_Y"): AbsInfo(minimum: 0, maximum: 255, fuzz: 4)])
        var events: [InputEvent] = []
        for i in 0..<200 {
            let t = Int64(i) * 10 * ms
            events += [InputEvent(time: t, type: EventType.abs, code: code("ABS_X"), value: 122 + Int32(i % 13)),
                       InputEvent(time: t, type: EventType.abs, code: code("ABS_Y"), value: 60 + Int32(i % 4)),
                       InputEvent(time: t, type: EventType.syn, code: SynCode.report, value: 0)]
        }
        return (info, AxisNoiseAnalysis.analyze([(info: info, events: events)]))
    }

    @Test("--axes: text and --config-out carry the axis whose fuzz is not enough")
    func axes() throws {
        let (info, axes) = Self.stick()
        let text = AxisNoiseAnalysis.renderText(axes).text
        #expect(text.contains("    suggested hysteresis: 12 (the stick swings more than its fuzz at rest)\n"))
        #expect(text.contains("    suggested hysteresis: fuzz (4) already covers it\n"))
        let yaml = ChatterAnalysis.analyze([]).configSnippet(axes: axes)
        #expect(yaml.contains("      ABS_X: { hysteresis: 12 }\n") && !yaml.contains("ABS_Y"))
        let settings = try FilterConfig.parse(yaml: yaml).settings(for: info)
        #expect(settings.absolute[code("ABS_X")] == .absolute(hysteresis: 12, minInterval: 0))
    }
}
