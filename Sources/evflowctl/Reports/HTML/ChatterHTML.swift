import EvflowProtocol
import Foundation
import InputModel
import Pipeline

/// What the HTML report is made of: the analysis, the events it was made from (for the
/// interval histograms and the timeline) and, when asked for, the axes and the daemon's latency.
struct ChatterPage {
    /// Where the events came from, in words (`recording keyboard.evemu`).
    var source: String
    /// The command that made the page, shown so a reader can make it again.
    var command: String
    /// The devices and their raw events.
    var devices: [(info: DeviceInfo, events: [InputEvent])]
    /// The analysis of `devices`.
    var report: ChatterReport
    /// `--axes`: the absolute axes' analysis (nil: not asked for).
    var axes: [AxisNoiseAnalysis.AxisReport]?
    /// `--wheel`: the scroll wheels' analysis (nil: not asked for).
    var wheel: [WheelAnalysis.AxisReport]? = nil
    /// `--live`: the daemon's LATENCY report, with device names.
    var latency: (report: LatencyReport, names: [DeviceID: String])?
}

/// `evflowctl analyze --html`: one self-contained page (inline CSS and SVG, no script) that
/// shows a person which keys bounce, how badly, and what the suggested window does about it.
enum ChatterHTML {
    /// One key or button that chattered, with what its plots need.
    struct Detail {
        var code: ChatterReport.CodeReport
        var gaps: [Int64], holds: [Int64]
        var frames: [InputFrame]
        /// The time of the device's first event: the timeline's times are told from it.
        var origin: Int64
        var defaultFilter: CodeFilter, suggestedFilter: CodeFilter
        /// Presses in the input beyond the real ones: contact bounce and spurious releases.
        var bouncePresses: Int { max(0, code.presses - (code.suggestion?.realPresses ?? code.presses)) }
    }

    /// Whether a code chattered: a press came sooner after a release than a person re-presses,
    /// or the default setting lets a bounce through or loses a press.
    static func chattered(_ c: ChatterReport.CodeReport) -> Bool {
        guard let real = c.suggestion?.realPresses else { return false }
        return c.presses > real || !(c.withDefault?.isClean ?? true)
    }

    /// The whole page.
    static func render(_ page: ChatterPage) -> String {
        var html = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            + "<title>Key chatter report — \(htmlEscaped(page.source))</title><style>\(style)</style></head><body>"
        html += patterns
        html += "<header><h1>Key chatter report</h1><p class=\"source\">\(htmlEscaped(page.source))</p>"
        html += "<p class=\"devices\">Device(s): "
            + page.devices.map { "<span class=\"device\">\(htmlEscaped($0.info.name)) (\(htmlEscaped($0.info.id.rawValue)))</span>" }
                .joined(separator: ", ") + "</p>"
        html += "<p class=\"command\">Made by <code>\(htmlEscaped(page.command))</code></p></header>"
        html += "<section class=\"intro\"><p>A worn switch <em>chatters</em>: one press of a finger reaches the computer as "
            + "several presses a few milliseconds apart (contact bounce), or a held key lets go for an instant "
            + "(a spurious release). evflow's debounce filter hides both by ignoring changes that come sooner than a "
            + "<em>window</em> after the last one. Too short a window lets bounces through as extra clicks; too long a "
            + "window swallows real fast presses. Below, for every key or button of this recording, the filter was run "
            + "with the default window and with the smallest window that leaves no extra click and loses no real press.</p></section>"
        let details = page.report.codes.filter(chattered).compactMap { detail($0, page: page) }
        html += summary(page.report, chatteredCount: details.count)
        for d in details { html += section(d) }
        let axes = page.axes ?? []
        let yaml = page.report.configSnippet(axes: axes, wheel: page.wheel ?? [])
        html += "<section class=\"config\"><h2>The suggested configuration</h2>"
        html += "<p>Written by <code>--config-out FILE</code>; put it in <code>/etc/evflow/evflow.yaml</code> "
            + "(or merge its <code>devices:</code> rules there) and reload evflowd.</p>"
        html += "<pre id=\"config-yaml\">\(htmlEscaped(yaml, multiline: true))</pre></section>"
        if let a = page.axes { html += axesSection(a) }
        if let w = page.wheel { html += wheelSection(w, devices: page.devices) }
        if let l = page.latency { html += latencySection(l.report, names: l.names) }
        html += "<footer><p>How to read the plots: bars are counts of intervals; the horizontal time axes are "
            + "logarithmic (each grid line is ten times the one before). Dotted areas are the default window; "
            + "dashed lines the suggestion; triangles mark presses the filter removed.</p></footer>"
        html += "</body></html>\n"
        return html
    }

    static func detail(_ c: ChatterReport.CodeReport, page: ChatterPage) -> Detail? {
        guard let device = page.devices.first(where: { $0.info.id.rawValue == c.deviceID }),
              let defaultFilter = c.defaultFilter, let suggestedFilter = c.suggestedFilter else { return nil }
        // The analysis' own view of the code: its events in the frames a replay delivers.
        var frames: [InputFrame] = []
        for f in ChatterAnalysis.completeFrames(device.events) {
            for e in f.events where e.type == EventType.key && e.code == c.codeNumber {
                frames.append(InputFrame(time: f.time, events: [e]))
            }
        }
        let intervals = ChatterAnalysis.intervals(frames.flatMap(\.events))
        return Detail(code: c, gaps: intervals.gaps, holds: intervals.holds, frames: frames,
                      origin: device.events.first?.time ?? 0, defaultFilter: defaultFilter, suggestedFilter: suggestedFilter)
    }

    // MARK: Summary

    static func summary(_ report: ChatterReport, chatteredCount: Int) -> String {
        var s = "<section class=\"summary\"><h2>Every key and button</h2>"
        guard !report.codes.isEmpty else { return s + "<p class=\"verdict\">The events have no key or button in them.</p></section>" }
        s += chatteredCount == 0
            ? "<p class=\"verdict\">No key or button chattered.</p>"
            : "<p class=\"verdict\">\(chatteredCount) key(s) or button(s) chattered; each has its own section below.</p>"
        s += "<table><thead><tr><th>device</th><th>key or button</th><th>presses</th><th>extra presses (bounce)</th>"
            + "<th>default: extra clicks left</th><th>default: real presses lost</th><th>suggested window</th>"
            + "<th>suggestion: extra clicks left</th><th>suggestion: real presses lost</th></tr></thead><tbody>"
        for c in report.codes {
            let bounce = c.suggestion.map { String(max(0, c.presses - $0.realPresses)) } ?? "–"
            let cells: [(String, String)] = [
                ("device_name", c.deviceName), ("code", c.code), ("presses", String(c.presses)), ("bounce_presses", bounce),
                ("default_remaining_bounces", c.withDefault.map { String($0.remainingBounces) } ?? "–"),
                ("default_lost_presses", c.withDefault.map { String($0.lostPresses) } ?? "–"),
                ("suggested_window", c.suggestedWindow.map { ChatterAnalysis.ms($0).replacingOccurrences(of: "ms", with: " ms") }
                    ?? "not filtered"),
                ("suggested_remaining_bounces", c.suggestion.map { String($0.remainingBounces) } ?? "–"),
                ("suggested_lost_presses", c.suggestion.map { String($0.lostPresses) } ?? "–"),
            ]
            s += "<tr class=\"\(chattered(c) ? "chattered" : "clean")\" data-device=\"\(htmlEscaped(c.deviceID))\" "
                + "data-code=\"\(htmlEscaped(c.code))\">"
            s += cells.map { "<td data-field=\"\($0.0)\">\(htmlEscaped($0.1))</td>" }.joined() + "</tr>"
        }
        return s + "</tbody></table><p class=\"note\">Touch and tool contacts (BTN_TOUCH, BTN_TOOL_…) report contact, "
            + "not a mechanical switch, and are never filtered.</p></section>"
    }

    // MARK: One key

    static func filterWords(_ f: CodeFilter) -> String {
        guard case .chatter(let w, let mode, let sw) = f else { return "no filter" }
        let spurious = mode == .off ? "spurious-release method off"
            : "spurious-release method \(mode.rawValue) (\(words(sw)))"
        return "window \(words(w)), \(spurious)"
    }

    static func words(_ ns: Int64) -> String { ChatterAnalysis.ms(ns).replacingOccurrences(of: "ms", with: " ms") }

    static func section(_ d: Detail) -> String {
        let c = d.code
        var s = "<section class=\"code\" data-device=\"\(htmlEscaped(c.deviceID))\" data-code=\"\(htmlEscaped(c.code))\">"
        s += "<h2>\(htmlEscaped(c.code)) on \(htmlEscaped(c.deviceName))</h2>"
        s += "<p>\(c.presses) presses, of which <strong>\(d.bouncePresses)</strong> came sooner after a release than a "
            + "person presses again (\(words(ChatterAnalysis.bounceCeiling))) and are bounce."
        if let closest = c.closestDoubleClick {
            s += " The fastest real double-click was \(words(closest)) from release to press: a window must stay below it."
        }
        s += "</p>"
        var marks: [Plots.Mark] = []
        if case .chatter(let w, _, _) = d.defaultFilter { marks.append(.init(ns: w, label: "default window \(words(w))", style: .band)) }
        if case .chatter(let w, _, _) = d.suggestedFilter, d.suggestedFilter != d.defaultFilter {
            marks.append(.init(ns: w, label: "suggested window \(words(w))", style: .dashed))
        }
        var gapMarks = marks
        if case .chatter(_, let mode, let sw) = d.suggestedFilter, mode != .off {
            gapMarks.append(.init(ns: sw, label: "spurious-release window \(words(sw))", style: .dotted))
        }
        if let closest = c.closestDoubleClick {
            gapMarks.append(.init(ns: closest, label: "fastest real double-click \(words(closest))", style: .double))
        }
        s += "<figure class=\"plot gaps-plot\">"
            + Plots.intervalHistogram(title: "Time from a release to the next press of \(c.code)",
                                      xLabel: "time from release to the next press (log scale)", intervals: d.gaps,
                                      barClass: "gaps", marks: gapMarks).markup
            + "<figcaption>Time from a release to the next press: bounce sits at the left, inside the window; "
            + "real re-presses to the right.</figcaption></figure>"
        s += "<figure class=\"plot holds-plot\">"
            + Plots.intervalHistogram(title: "How long \(c.code) was held down", xLabel: "time from a press to its release (log scale)",
                                      intervals: d.holds, barClass: "holds", marks: marks).markup
            + "<figcaption>How long each press was held: a contact that closes for an instant shows at the far left.</figcaption></figure>"
        s += timeline(d)
        s += outcomes(d)
        s += "<p class=\"reasoning\">Why: \(htmlEscaped(c.reasoning)).</p></section>"
        return s
    }

    static func outcomes(_ d: Detail) -> String {
        let c = d.code
        var s = "<table class=\"outcomes\"><thead><tr><th>setting</th><th>bounces removed</th><th>extra clicks left</th>"
            + "<th>real presses lost</th></tr></thead><tbody>"
        for (name, filter, outcome) in [("default", d.defaultFilter, c.withDefault), ("suggested", d.suggestedFilter, c.suggestion)] {
            guard let o = outcome else { continue }
            let removed = max(0, d.bouncePresses - o.remainingBounces)
            s += "<tr data-setting=\"\(name)\"><th>\(name): \(htmlEscaped(filterWords(filter)))</th>"
                + "<td data-field=\"bounces_removed\">\(removed) of \(d.bouncePresses)</td>"
                + "<td data-field=\"remaining_bounces\">\(o.remainingBounces)</td>"
                + "<td data-field=\"lost_presses\">\(o.lostPresses) of \(o.realPresses)</td></tr>"
        }
        return s + "</tbody></table>"
    }

    /// The worst stretch: the raw edges, and what the default and the suggestion deliver.
    static func timeline(_ d: Detail) -> String {
        let raw = d.frames.flatMap(\.events).filter { $0.value == 0 || $0.value == 1 }.map { ($0.time, $0.value) }
        guard let first = raw.first else { return "" }
        func edges(_ filter: CodeFilter) -> [(Int64, Int32)] {
            ChatterAnalysis.filtered(code: d.code.codeNumber, frames: d.frames, filter: filter)
                .flatMap(\.events).filter { $0.code == d.code.codeNumber && ($0.value == 0 || $0.value == 1) }
                .map { ($0.time, $0.value) }
        }
        let suggested = edges(d.suggestedFilter)
        let delivered = Set(suggested.filter { $0.1 == 1 }.map(\.0))
        let removed = raw.filter { $0.1 == 1 && !delivered.contains($0.0) }.map(\.0)
        // The stretch with the most removed presses; without any, around the shortest gap.
        let length: Int64 = 400_000_000
        var start = first.0
        if !removed.isEmpty {
            var best = 0, j = 0
            for i in removed.indices {
                while removed[i] - removed[j] > length * 3 / 4 { j += 1 }
                if i - j + 1 > best { best = i - j + 1; start = removed[j] }
            }
            start -= length / 8
        } else if let shortest = d.code.shortestGap {
            var last: Int64?
            for (t, v) in raw {
                if v == 1, let r = last, t - r == shortest { start = r - length / 4; break }
                if v == 0 { last = t }
            }
        }
        // Times are told from the device's first event; the stretch does not start before it.
        let origin = d.origin
        start = max(start, first.0 - 10_000_000, origin)
        let end = start + length
        let initial: Int32 = raw.first.map { $0.1 == 1 ? 0 : 1 } ?? 0
        var lanes = [Plots.Lane(title: "raw (from the device)", edges: raw, initial: initial, lineClass: "raw")]
        if d.defaultFilter != d.suggestedFilter {
            lanes.append(Plots.Lane(title: "default window", edges: edges(d.defaultFilter), initial: initial, lineClass: "default"))
        }
        lanes.append(Plots.Lane(title: "suggested window", edges: suggested, initial: initial, lineClass: "suggested"))
        let inStretch = removed.filter { $0 >= start && $0 < end }.count
        return "<figure class=\"plot timeline\" data-removed=\"\(inStretch)\">"
            + Plots.timeline(title: "The worst \(length / 1_000_000) ms of \(d.code.code): raw and filtered",
                             start: start, end: end, origin: origin, lanes: lanes, removed: removed).markup
            + "<figcaption>The worst \(length / 1_000_000) ms: the key as the device reported it (top) and as the filter "
            + "delivers it (below); \(inStretch) bounce press(es) removed here are marked with a triangle and a shaded "
            + "stripe.</figcaption></figure>"
    }

    // MARK: Axes and latency

    static func axesSection(_ axes: [AxisNoiseAnalysis.AxisReport]) -> String {
        var s = "<section class=\"axes\"><h2>Sticks and other absolute axes at rest</h2>"
            + "<p>While nobody touches an absolute axis (a joystick, a pedal) its value should not move; a worn one "
            + "jitters. A <em>hysteresis</em> hides changes smaller than it from the last delivered value.</p>"
        if axes.isEmpty { return s + "<p>The recording has no absolute axis events.</p></section>" }
        for a in axes {
            s += "<div class=\"axis\" data-device=\"\(htmlEscaped(a.deviceID))\" data-code=\"\(htmlEscaped(a.code))\">"
            s += "<h3>\(htmlEscaped(a.code)) on \(htmlEscaped(a.deviceName))</h3>"
            guard a.idleSwing != nil else {
                s += "<p>Never at rest in this recording: keep the hysteresis at the fuzz (\(a.fuzz)).</p></div>"
                continue
            }
            s += "<figure class=\"plot\">" + Plots.idleNoise(title: "How far \(a.code) moves at rest", spans: a.restingSpans,
                                                              fuzz: a.fuzz, hysteresis: a.suggestedHysteresis).markup
                + "<figcaption>Each bar counts the 100 ms stretches at rest by how far the value moved in them.</figcaption></figure>"
            s += "<p>Values delivered at rest: <span data-field=\"idle_with_fuzz\">\(a.idleDeliveredWithFuzz)</span> with the fuzz, "
                + "<span data-field=\"idle_with_suggestion\">\(a.idleDeliveredWithSuggestion)</span> with hysteresis "
                + "<span data-field=\"suggested_hysteresis\">\(a.suggestedHysteresis)</span>.</p></div>"
        }
        return s + "</section>"
    }

    static func wheelSection(_ axes: [WheelAnalysis.AxisReport], devices: [(info: DeviceInfo, events: [InputEvent])]) -> String {
        var s = "<section class=\"wheel\"><h2>Scroll wheels: stray ticks</h2>"
            + "<p>A worn wheel encoder sends a lone tick the wrong way in the middle of a scroll (the page jumps back). "
            + "A <em>stray</em> is a tick against the scroll with the ticks just before and after it going the other way, "
            + "each less than 200 ms from it. The wheel filter holds a reversed tick for its window: a second tick the new way "
            + "confirms a real reversal and both pass; otherwise the stray is dropped. It was run over this recording with "
            + "each window from 20 to 250 ms; the suggestion is the shortest that leaves no stray and loses no real tick.</p>"
        if axes.isEmpty { return s + "<p>The recording has no scroll wheel events.</p></section>" }
        for a in axes {
            s += "<div class=\"wheel-axis\" data-device=\"\(htmlEscaped(a.deviceID))\" data-code=\"\(htmlEscaped(a.codeName))\">"
            s += "<h3>\(htmlEscaped(a.codeName)) on \(htmlEscaped(a.deviceName))</h3>"
            s += "<p><span data-field=\"ticks\">\(a.ticks.count)</span> ticks\(a.hiRes ? " (high resolution)" : ""), "
                + "<span data-field=\"reversals\">\(a.reversals.count)</span> reversal(s), "
                + "<span data-field=\"strays\">\(a.strays.count)</span> stray tick(s).</p>"
            guard !a.strays.isEmpty else {
                s += "<p class=\"verdict\">No stray tick: keep the wheel filter off.</p></div>"
                continue
            }
            let frames = devices.first { $0.info.id.rawValue == a.deviceID }.map { d in
                ChatterAnalysis.completeFrames(d.events).compactMap { f -> InputFrame? in
                    let e = f.events.filter { $0.type == EventType.rel && ($0.code == a.code || $0.code == (a.code == 8 ? 11 : 12)) }
                    return e.isEmpty ? nil : InputFrame(time: f.time, events: e)
                }
            } ?? []
            let delivered = WheelAnalysis.delivered(a, frames: frames, window: a.suggestion.window)
            let origin = devices.first { $0.info.id.rawValue == a.deviceID }?.events.first?.time ?? a.ticks[0].time
            s += "<figure class=\"plot wheel-timeline\" data-strays=\"\(a.strays.count)\">"
                + Plots.wheelTicks(title: "\(a.codeName) around its first stray tick: raw and filtered", ticks: a.ticks,
                                   strays: a.strays, delivered: delivered, origin: origin).markup
                + "<figcaption>Each tick as a bar up (one way) or down (the other): as the device sent it (top) and as the "
                + "suggested window delivers it (below); stray ticks are marked with a triangle and a shaded stripe.</figcaption></figure>"
            s += "<p>With <code>wheel: <span data-field=\"suggested_window\">\(ChatterAnalysis.ms(a.suggestion.window))</span></code>: "
                + "<span data-field=\"remaining_strays\">\(a.suggestion.remainingStrays)</span> stray(s) left, "
                + "<span data-field=\"lost_ticks\">\(a.suggestion.lostTicks)</span> real tick(s) lost.</p></div>"
        }
        return s + "</section>"
    }

    static func latencySection(_ r: LatencyReport, names: [DeviceID: String]) -> String {
        var s = "<section class=\"latency\"><h2>How long evflowd takes</h2><p>The age of each frame since the kernel "
            + "stamped it, when it left each stage: read from the device, through the filter, sent to a client. "
            + "Half the frames were faster than p50, all but one in a hundred faster than p99.</p>"
        func rows(_ stages: [LatencyStage: LatencySummary]) -> [(stage: String, values: [(String, UInt64)])] {
            LatencyStage.allCases.compactMap { stage in
                guard let v = stages[stage], v.count > 0 else { return nil }
                return (stage.rawValue, [("p50", v.p50), ("p90", v.p90), ("p99", v.p99), ("p99.9", v.p999), ("max", v.max)])
            }
        }
        let total = rows(r.total)
        if total.isEmpty { return s + "<p>No frame measured yet.</p></section>" }
        s += "<figure class=\"plot\" data-latency=\"all\">" + Plots.latency(title: "Frame age per stage, all devices", rows: total).markup
            + "<figcaption>All devices (\(r.clock.rawValue) clock).</figcaption></figure>"
        for (id, stages) in r.devices.sorted(by: { $0.key < $1.key }) {
            let rs = rows(stages)
            guard !rs.isEmpty else { continue }
            let name = names[id] ?? id.rawValue
            s += "<figure class=\"plot\" data-latency=\"\(htmlEscaped(id.rawValue))\">"
                + Plots.latency(title: "Frame age per stage, \(name)", rows: rs).markup
                + "<figcaption>\(htmlEscaped(name)).</figcaption></figure>"
        }
        return s + "</section>"
    }

    // MARK: Look

    /// Fills that differ in pattern as well as colour (grey-scale printing, colour blindness):
    /// the Okabe–Ito palette, hatching for holds, dots for the default window.
    static let patterns = """
    <svg width="0" height="0" style="position:absolute" aria-hidden="true"><defs>\
    <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">\
    <rect width="6" height="6" fill="#E69F00"/><line x1="0" y1="0" x2="0" y2="6" stroke="#000" stroke-width="1.6"/></pattern>\
    <pattern id="window-dots" width="8" height="8" patternUnits="userSpaceOnUse">\
    <rect width="8" height="8" fill="#dcecf7"/><circle cx="4" cy="4" r="1.1" fill="#56B4E9"/></pattern>\
    </defs></svg>
    """

    static let style = """
    body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;color:#111;background:#fff;\
    max-width:780px;margin:0 auto;padding:16px}
    h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:28px 0 6px;border-bottom:2px solid #111}h3{font-size:16px;margin:16px 0 4px}
    .source{font-weight:600;margin:0}.command{margin:2px 0 8px;color:#333}
    code,pre{font-family:"DejaVu Sans Mono",monospace;font-size:13px}pre{background:#f3f3f3;padding:8px;border:1px solid #bbb;overflow-x:auto}
    table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid #999;padding:3px 6px;text-align:left}
    td{text-align:right}td[data-field=device_name],td[data-field=code]{text-align:left}
    tr.chattered td{font-weight:700}tr.chattered td[data-field=code]::before{content:"⚠ "}
    thead th{background:#eee}.verdict{font-size:17px;font-weight:600}
    figure{margin:10px 0}figcaption{font-size:13px;color:#333}
    svg{max-width:100%;height:auto;font-family:inherit}
    .grid{stroke:#ccc;stroke-width:1}.axis{stroke:#111;stroke-width:1.2}.lane-rule{stroke:#888;stroke-dasharray:2 3}
    .tick{font-size:11px;fill:#222}.axis-title{font-size:12px;fill:#111;font-weight:600}
    .label,.lane-title{font-size:12px;fill:#111;font-weight:600}.mark-label{font-size:11.5px;fill:#111;font-weight:600}.value{font-size:11px;fill:#111}
    .bar{stroke:#111;stroke-width:.8}.gaps{fill:#0072B2}.holds{fill:url(#hatch)}
    .band{fill:url(#window-dots);opacity:.9}.band-edge{stroke:#0072B2;stroke-width:2}
    .mark-dashed{stroke:#D55E00;stroke-width:2.5;stroke-dasharray:7 4}.mark-dotted{stroke:#009E73;stroke-width:2.5;stroke-dasharray:2 3}
    .mark-double{stroke:#111;stroke-width:4;stroke-dasharray:1 0}.leader{stroke:#777;stroke-width:.8}
    .trace{fill:none;stroke-width:2}.trace.raw{stroke:#111}.trace.default{stroke:#0072B2;stroke-dasharray:5 2}.trace.suggested{stroke:#009E73}
    .edge{stroke:none}.edge.raw{fill:#111}.edge.default{fill:#0072B2}.edge.suggested{fill:#009E73}
    .removed-band{fill:#D55E00;opacity:.22}.removed-marker{fill:#D55E00;stroke:#111;stroke-width:.8}
    .latency-0{fill:#56B4E9}.latency-1{fill:#0072B2}.latency-2{fill:#E69F00}.latency-3{fill:url(#hatch)}.latency-4{fill:#D55E00}
    .reasoning{font-size:13px;color:#222}.note{font-size:13px;color:#333}
    @media print{body{max-width:none;padding:0}section.code,figure{break-inside:avoid}h2{break-after:avoid}}
    """
}
