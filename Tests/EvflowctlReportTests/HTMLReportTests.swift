import Foundation
import InputModel
import NoiseAnalysis
import Pipeline
import Testing
@testable import evflowctl

@Suite("Evflowctl analyze --html")
struct HTMLReportTests {
    static func page(_ devices: [(info: DeviceInfo, events: [InputEvent])], axes: Bool = false) -> String {
        let report = ChatterAnalysis.analyze(devices)
        return ChatterHTML.render(ChatterPage(source: "recording test.evemu", command: "evflowctl analyze test.evemu --html t.html",
                                              devices: devices, report: report,
                                              axes: axes ? AxisNoiseAnalysis.analyze(devices) : nil, latency: nil))
    }

    @Test("a section with both histograms, the timeline and the outcomes per chattering code, and none for clean ones")
    func sections() {
        let html = Self.page([(info: Synthetic.info, events: Synthetic.events())])
        // KEY_A (one bounce press), KEY_C (bounces beyond the default), BTN_LEFT (a bounce per
        // release) chattered; KEY_B and the touch contact did not.
        let sections = html.components(separatedBy: "<section class=\"code\"").dropFirst()
        #expect(sections.map { $0.components(separatedBy: "data-code=\"")[1].prefix { $0 != "\"" } } == ["KEY_A", "KEY_C", "BTN_LEFT"])
        let keyC = String(sections.dropFirst().first ?? "")
        #expect(keyC.contains("aria-label=\"Time from a release to the next press of KEY_C\""))
        #expect(keyC.contains("aria-label=\"How long KEY_C was held down\""))
        #expect(keyC.contains("aria-label=\"The worst 400 ms of KEY_C: raw and filtered\""))
        #expect(keyC.contains("default window 15 ms") && keyC.contains("suggested window 21 ms"))
        #expect(keyC.contains("fastest real double-click 878 ms"))
        // The outcomes are the analysis' own: 5 bounce presses, the default leaves all 5.
        #expect(keyC.contains("<td data-field=\"bounces_removed\">0 of 5</td><td data-field=\"remaining_bounces\">5</td>"))
        #expect(keyC.contains("<td data-field=\"bounces_removed\">5 of 5</td><td data-field=\"remaining_bounces\">0</td>"
                              + "<td data-field=\"lost_presses\">0 of 5</td>"))
        // KEY_C's bounces are 1 s apart: the 400 ms stretch holds one, marked.
        #expect(keyC.contains("<figure class=\"plot timeline\" data-removed=\"1\">"))
        #expect(keyC.components(separatedBy: "class=\"removed-marker\"").count == 2)
        #expect(html.contains("<pre id=\"config-yaml\">") && html.contains("KEY_C: { window: 21ms, spurious: auto }\n"))
        #expect(!html.contains("<script"))
        // Self-contained: nothing fetched (the SVG namespace is a name, not a fetch).
        #expect(!html.replacingOccurrences(of: "http://www.w3.org/2000/svg", with: "").contains("http"))
    }

    @Test("every device name is text, never markup, in the page and in the plots")
    func hostileNames() {
        var info = Synthetic.info
        info.name = "<script>alert(1)</script>\"&\u{1b}[2J"
        let html = Self.page([(info: info, events: Synthetic.events())])
        #expect(!html.contains("<script>"))
        #expect(!html.contains("\u{1b}"))
        #expect(html.contains("&lt;script&gt;alert(1)&lt;/script&gt;&quot;&amp;\u{FFFD}[2J"))
    }

    @Test("--axes: the idle-noise plot with the fuzz and the suggestion, and the deliveries at rest")
    func axes() {
        let (info, _) = ReportRenderingTests.stick()
        var events: [InputEvent] = []
        for i in 0..<200 {
            let t = Int64(i) * 10 * ms
            events += [InputEvent(time: t, type: EventType.abs, code: code("ABS_X"), value: 122 + Int32(i % 13)),
                       InputEvent(time: t, type: EventType.syn, code: SynCode.report, value: 0)]
        }
        let html = Self.page([(info: info, events: events)], axes: true)
        #expect(html.contains("aria-label=\"How far ABS_X moves at rest\""))
        #expect(html.contains("suggested hysteresis 12") && html.contains("fuzz 4 (the kernel"))
        #expect(html.contains("<span data-field=\"idle_with_suggestion\">0</span>"))
    }

    @Test("the log time axis puts an interval in the bin of its decade")
    func logBins() {
        #expect(Plots.LogTimeAxis.bin(0) == 0)
        #expect(Plots.LogTimeAxis.bin(100_000) == 0)              // 0.1 ms: the first bin
        #expect(Plots.LogTimeAxis.bin(1_000_000) == 8)            // 1 ms: a decade on
        #expect(Plots.LogTimeAxis.bin(10_000_000) == 16)
        #expect(Plots.LogTimeAxis.bin(100_000_000_000) == Plots.LogTimeAxis.binCount - 1)
    }
}
