import Foundation
import Pipeline

/// The plots of the HTML report, each a function from numbers to an `SVG`. Sizes are in CSS
/// pixels; every axis is labelled in words with its unit.
enum Plots {
    /// Plot margins: room for the y labels on the left and the x labels below.
    static let left = 64.0, right = 20.0, top = 54.0, bottom = 46.0

    // MARK: Log time axis

    /// The log time axis shared by the interval histograms: 0.1 ms to 10 s.
    struct LogTimeAxis {
        static let lowest = 5.0, highest = 10.0   // log10 of ns
        static let binsPerDecade = 8
        static var binCount: Int { Int(highest - lowest) * binsPerDecade }
        let x0: Double, width: Double

        /// The bin of an interval: below 0.1 ms in the first, beyond 10 s in the last.
        static func bin(_ ns: Int64) -> Int {
            guard ns > 0 else { return 0 }
            let b = Int(((log10(Double(ns)) - lowest) * Double(binsPerDecade)).rounded(.down))
            return min(max(b, 0), binCount - 1)
        }

        /// The x of a time in ns (clamped to the axis).
        func x(_ ns: Double) -> Double {
            let l = min(max(log10(max(ns, 1)), Self.lowest), Self.highest)
            return x0 + (l - Self.lowest) / (Self.highest - Self.lowest) * width
        }

        /// The x of a bin's left edge.
        func x(bin: Int) -> Double { x0 + Double(bin) / Double(Self.binCount) * width }

        /// Ticks and grid lines with their labels.
        func draw(_ svg: inout SVG, yTop: Double, yBottom: Double) {
            for (ns, label) in [(1e5, "0.1 ms"), (1e6, "1 ms"), (1e7, "10 ms"), (1e8, "100 ms"), (1e9, "1 s"), (1e10, "10 s")] {
                let x = x(ns)
                svg.line(x1: x, y1: yTop, x2: x, y2: yBottom, class: "grid")
                svg.line(x1: x, y1: yBottom, x2: x, y2: yBottom + 5, class: "axis")
                svg.text(label, x: x, y: yBottom + 18, anchor: "middle", class: "tick")
            }
            svg.line(x1: x0, y1: yBottom, x2: x0 + width, y2: yBottom, class: "axis")
        }
    }

    /// A marker drawn across an interval histogram: a window or a threshold, in words.
    struct Mark {
        enum Style: String { case band = "band", dashed = "mark-dashed", dotted = "mark-dotted", double = "mark-double" }
        var ns: Int64
        var label: String
        var style: Style
    }

    /// A histogram of `intervals` (ns) on the log time axis, with `marks` drawn over it.
    /// `barClass` picks the fill (colour and pattern) from the style sheet.
    static func intervalHistogram(title: String, xLabel: String, intervals: [Int64], barClass: String,
                                  marks: [Mark]) -> SVG {
        let width = 720.0, height = 260.0
        var svg = SVG(width: width, height: height, label: title)
        let axis = LogTimeAxis(x0: left, width: width - left - right)
        let yBottom = height - bottom, yTop = top
        var counts = [Int](repeating: 0, count: LogTimeAxis.binCount)
        for d in intervals { counts[LogTimeAxis.bin(d)] += 1 }
        let most = max(counts.max() ?? 0, 1)
        // Windows first, so bars and labels sit on top of them.
        for m in marks where m.style == .band {
            svg.rect(x: axis.x0, y: yTop, width: axis.x(Double(m.ns)) - axis.x0, height: yBottom - yTop, class: "band")
        }
        axis.draw(&svg, yTop: yTop, yBottom: yBottom)
        countAxis(&svg, most: most, yTop: yTop, yBottom: yBottom)
        for (i, n) in counts.enumerated() where n > 0 {
            let h = Double(n) / Double(most) * (yBottom - yTop)
            let lo = pow(10, LogTimeAxis.lowest + Double(i) / Double(LogTimeAxis.binsPerDecade))
            let hi = lo * pow(10, 1 / Double(LogTimeAxis.binsPerDecade))
            svg.rect(x: axis.x(bin: i) + 0.5, y: yBottom - h, width: axis.x(bin: i + 1) - axis.x(bin: i) - 1, height: h,
                     class: "bar \(barClass)", title: "\(n) between \(duration(lo)) and \(duration(hi))",
                     data: [("data-count", String(n))])
        }
        // Labels of the marks in rows above the plot, so close values do not overprint.
        for (row, m) in marks.enumerated() {
            let x = axis.x(Double(m.ns))
            let y = 12.0 + Double(row % 4) * 12
            switch m.style {
            case .band:
                svg.line(x1: x, y1: yTop, x2: x, y2: yBottom, class: "band-edge")
            case .dashed, .dotted, .double:
                svg.line(x1: x, y1: yTop, x2: x, y2: yBottom, class: m.style.rawValue)
            }
            svg.line(x1: x, y1: y + 3, x2: x, y2: yTop, class: "leader")
            svg.text(m.label, x: x > width * 0.6 ? x - 4 : x + 4, y: y, anchor: x > width * 0.6 ? "end" : "start",
                     class: "mark-label")
        }
        svg.text(xLabel, x: axis.x0 + axis.width / 2, y: height - 6, anchor: "middle", class: "axis-title")
        return svg
    }

    /// The y axis of a count: 0, half and the largest, with its title.
    static func countAxis(_ svg: inout SVG, most: Int, yTop: Double, yBottom: Double, title: String = "count") {
        svg.line(x1: left, y1: yTop, x2: left, y2: yBottom, class: "axis")
        let ticks = most >= 2 ? [0, most / 2, most] : [0, most]
        for t in Set(ticks).sorted() {
            let y = yBottom - Double(t) / Double(most) * (yBottom - yTop)
            svg.line(x1: left - 5, y1: y, x2: left, y2: y, class: "axis")
            svg.text(String(t), x: left - 8, y: y + 4, anchor: "end", class: "tick")
        }
        svg.text(title, x: 16, y: (yTop + yBottom) / 2, anchor: "middle", class: "axis-title", rotate: -90)
    }

    // MARK: Timeline

    /// One lane of the timeline: the key's state over time as a step line, its edges marked.
    struct Lane {
        var title: String
        /// (time ns, value) of each press (1) and release (0), in time order.
        var edges: [(Int64, Int32)]
        /// The state before the first edge.
        var initial: Int32
        var lineClass: String
    }

    /// Lanes one above the other over [start, end) (ns); `removed` are the times of raw
    /// presses the filter took out, highlighted across every lane.
    static func timeline(title: String, start: Int64, end: Int64, origin: Int64, lanes: [Lane], removed: [Int64]) -> SVG {
        let width = 720.0, laneHeight = 74.0
        let height = top - 24 + Double(lanes.count) * laneHeight + bottom
        var svg = SVG(width: width, height: height, label: title)
        let x0 = left + 30, plotWidth = width - x0 - right
        let span = Double(max(end - start, 1))
        func x(_ t: Int64) -> Double { x0 + Double(t - start) / span * plotWidth }
        let yTop = top - 24, yBottom = yTop + Double(lanes.count) * laneHeight
        for t in removed where t >= start && t < end {
            svg.rect(x: x(t) - 3, y: yTop, width: 6, height: yBottom - yTop, class: "removed-band",
                     title: "bounce removed at \(duration(Double(t - origin))) into the recording")
        }
        // Ticks: a round step giving 5–10 ticks.
        let steps: [Int64] = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000].map { $0 * 1_000_000 }
        let step = steps.first { (end - start) / $0 <= 10 } ?? 10_000_000_000
        var t = start
        while t <= end {
            svg.line(x1: x(t), y1: yTop, x2: x(t), y2: yBottom, class: "grid")
            svg.text(String(format: "%g", Double(t - start) / 1e6), x: x(t), y: yBottom + 18, anchor: "middle", class: "tick")
            t += step
        }
        for (i, lane) in lanes.enumerated() {
            let base = yTop + Double(i + 1) * laneHeight - 12, high = base - laneHeight + 26
            svg.text(lane.title, x: x0 + plotWidth - 4, y: high - 7, anchor: "end", class: "lane-title")
            svg.text("released", x: x0 - 6, y: base + 4, anchor: "end", class: "tick")
            svg.text("pressed", x: x0 - 6, y: high + 4, anchor: "end", class: "tick")
            var points: [(Double, Double)] = []
            // The state at the stretch's start: the last edge before it.
            var state = lane.edges.last { $0.0 < start }?.1 ?? lane.initial
            func y(_ v: Int32) -> Double { v == 0 ? base : high }
            points.append((x0, y(state)))
            for (time, value) in lane.edges where time >= start && time < end {
                points.append((x(time), y(state)))
                points.append((x(time), y(value)))
                state = value
            }
            points.append((x0 + plotWidth, y(state)))
            svg.polyline(points, class: "trace \(lane.lineClass)")
            for (time, value) in lane.edges where time >= start && time < end && value == 1 {
                svg.circle(cx: x(time), cy: high, r: 2.5, class: "edge \(lane.lineClass)")
            }
            if i > 0 { svg.line(x1: x0, y1: base - laneHeight + 12, x2: x0 + plotWidth, y2: base - laneHeight + 12, class: "lane-rule") }
        }
        for t in removed where t >= start && t < end {
            svg.path("M\(svgNumber(x(t) - 5)),\(svgNumber(yTop + 10)) l5,-8 l5,8 z", class: "removed-marker",
                     title: "bounce removed")
        }
        svg.text("time (ms) from \(duration(Double(start - origin))) into the recording", x: x0 + plotWidth / 2,
                 y: height - 6, anchor: "middle", class: "axis-title")
        return svg
    }

    // MARK: Scroll wheels

    /// A scroll axis' ticks over 1 s around its first stray: two lanes (raw, filtered), a bar
    /// per tick up or down by its sign; strays marked across both lanes.
    static func wheelTicks(title: String, ticks: [WheelAnalysis.Tick], strays: [Int], delivered: [Bool], origin: Int64) -> SVG {
        let width = 720.0, laneHeight = 80.0
        let yTop = top - 24, yBottom = yTop + 2 * laneHeight
        let height = yBottom + bottom
        var svg = SVG(width: width, height: height, label: title)
        let x0 = left + 30, plotWidth = width - x0 - right
        let length: Int64 = 1_000_000_000
        let start = max(ticks[0].time, (strays.first.map { ticks[$0].time } ?? ticks[0].time) - length / 2)
        let end = start + length
        func x(_ t: Int64) -> Double { x0 + Double(t - start) / Double(length) * plotWidth }
        let strayTimes = strays.map { ticks[$0].time }
        for t in strayTimes where t >= start && t < end {
            svg.rect(x: x(t) - 3, y: yTop, width: 6, height: yBottom - yTop, class: "removed-band",
                     title: "stray tick at \(duration(Double(t - origin))) into the recording")
        }
        var t = start
        while t <= end {
            svg.line(x1: x(t), y1: yTop, x2: x(t), y2: yBottom, class: "grid")
            svg.text(String(format: "%g", Double(t - start) / 1e6), x: x(t), y: yBottom + 18, anchor: "middle", class: "tick")
            t += 100_000_000
        }
        for (lane, name) in ["raw (from the device)", "suggested window"].enumerated() {
            let mid = yTop + Double(lane) * laneHeight + laneHeight / 2
            svg.text(name, x: x0 + plotWidth - 4, y: mid - laneHeight / 2 + 14, anchor: "end", class: "lane-title")
            svg.line(x1: x0, y1: mid, x2: x0 + plotWidth, y2: mid, class: "lane-rule")
            for (i, tick) in ticks.enumerated() where tick.time >= start && tick.time < end && (lane == 0 || delivered[i]) {
                let h = 22.0
                svg.rect(x: x(tick.time) - 1.5, y: tick.motion > 0 ? mid - h : mid, width: 3, height: h,
                         class: "bar \(lane == 0 ? "gaps" : "holds")")
            }
        }
        for t in strayTimes where t >= start && t < end {
            svg.path("M\(svgNumber(x(t) - 5)),\(svgNumber(yTop + 10)) l5,-8 l5,8 z", class: "removed-marker", title: "stray tick")
        }
        svg.text("time (ms) from \(duration(Double(start - origin))) into the recording", x: x0 + plotWidth / 2,
                 y: height - 6, anchor: "middle", class: "axis-title")
        return svg
    }

    // MARK: Axis noise

    /// How far a resting axis moves: a bar per span (axis units, in at most 40 bins) of its
    /// resting slices, with the fuzz and the suggested hysteresis drawn.
    static func idleNoise(title: String, spans: [Int32], fuzz: Int32, hysteresis: Int32) -> SVG {
        let width = 720.0, height = 240.0
        var svg = SVG(width: width, height: height, label: title)
        let yTop = top, yBottom = height - bottom, plotWidth = width - left - right
        let largest = Int(max(spans.max() ?? 0, fuzz, hysteresis))
        let binWidth = max(1, (largest + 40) / 40)
        let binCount = largest / binWidth + 1
        var counts = [Int](repeating: 0, count: binCount)
        for s in spans { counts[Int(s) / binWidth] += 1 }
        let most = max(counts.max() ?? 0, 1)
        let slot = plotWidth / Double(binCount)
        /// The x of an axis value (bins are [k·binWidth, (k+1)·binWidth)).
        func x(_ v: Double) -> Double { left + v / Double(binWidth) * slot }
        countAxis(&svg, most: most, yTop: yTop, yBottom: yBottom, title: "slices")
        svg.line(x1: left, y1: yBottom, x2: left + plotWidth, y2: yBottom, class: "axis")
        let labelEvery = max(1, binCount / 8)
        for b in 0..<binCount {
            let lo = b * binWidth
            if b % labelEvery == 0 {
                svg.line(x1: x(Double(lo)), y1: yBottom, x2: x(Double(lo)), y2: yBottom + 5, class: "axis")
                svg.text(String(lo), x: x(Double(lo)), y: yBottom + 18, anchor: "middle", class: "tick")
            }
            guard counts[b] > 0 else { continue }
            let h = Double(counts[b]) / Double(most) * (yBottom - yTop)
            let range = binWidth == 1 ? "\(lo)" : "\(lo)–\(lo + binWidth - 1)"
            svg.rect(x: x(Double(lo)) + 0.5, y: yBottom - h, width: slot - 1, height: h, class: "bar gaps",
                     title: "\(counts[b]) resting slice(s) spanning \(range)", data: [("data-count", String(counts[b]))])
        }
        for (i, (v, label, cls)) in [(fuzz, "fuzz \(fuzz) (the kernel's own filter)", "mark-dotted"),
                                     (hysteresis, "suggested hysteresis \(hysteresis)", "mark-dashed")].enumerated() {
            // A span up to the value is hidden: the line sits at the value's bin's right edge.
            let xv = x(Double(Int(v) / binWidth * binWidth + binWidth))
            svg.line(x1: xv, y1: yTop, x2: xv, y2: yBottom, class: cls)
            svg.text(label, x: xv > width * 0.6 ? xv - 4 : xv + 4, y: 16 + Double(i) * 14,
                     anchor: xv > width * 0.6 ? "end" : "start", class: "mark-label")
            svg.line(x1: xv, y1: 19 + Double(i) * 14, x2: xv, y2: yTop, class: "leader")
        }
        svg.text("largest movement within a 100 ms slice at rest (axis units)", x: left + plotWidth / 2, y: height - 6,
                 anchor: "middle", class: "axis-title")
        return svg
    }

    // MARK: Latency

    /// Per stage, the percentiles of a frame's age as bars on a log time axis.
    static func latency(title: String, rows: [(stage: String, values: [(String, UInt64)])]) -> SVG {
        let width = 720.0, rowHeight = 16.0
        let barsPerRow = rows.first?.values.count ?? 0
        let groupHeight = Double(barsPerRow) * rowHeight + 14
        let height = top + Double(rows.count) * groupHeight + bottom - 20
        var svg = SVG(width: width, height: height, label: title)
        let x0 = left + 90
        let values = rows.flatMap { $0.values.map { Double($0.1) } }.filter { $0 > 0 }
        let lo = floor(log10(values.min() ?? 1e3)), hi = max(ceil(log10(values.max() ?? 1e6)), lo + 1)
        let plotWidth = width - x0 - right - 70
        func x(_ ns: Double) -> Double { x0 + (log10(max(ns, pow(10, lo))) - lo) / (hi - lo) * plotWidth }
        let yTop = top - 20, yBottom = height - bottom
        var decade = lo
        while decade <= hi {
            let xv = x(pow(10, decade))
            svg.line(x1: xv, y1: yTop, x2: xv, y2: yBottom, class: "grid")
            svg.text(duration(pow(10, decade)), x: xv, y: yBottom + 18, anchor: "middle", class: "tick")
            decade += 1
        }
        for (i, row) in rows.enumerated() {
            let y0 = yTop + Double(i) * groupHeight + 4
            svg.text(row.stage, x: 8, y: y0 + Double(barsPerRow) * rowHeight / 2 + 4, class: "lane-title")
            for (j, (name, ns)) in row.values.enumerated() {
                let y = y0 + Double(j) * rowHeight
                svg.text(name, x: x0 - 6, y: y + rowHeight * 0.7, anchor: "end", class: "tick")
                svg.rect(x: x0, y: y + 1, width: x(Double(ns)) - x0, height: rowHeight - 3, class: "bar latency-\(j)",
                         title: "\(row.stage) \(name): \(duration(Double(ns)))")
                svg.text(duration(Double(ns)), x: x(Double(ns)) + 4, y: y + rowHeight * 0.7, class: "value")
            }
        }
        svg.line(x1: x0, y1: yBottom, x2: x0 + plotWidth, y2: yBottom, class: "axis")
        svg.text("age of a frame since the kernel stamped it (log scale)", x: x0 + plotWidth / 2, y: height - 6,
                 anchor: "middle", class: "axis-title")
        return svg
    }

    /// A duration in words-and-units: `850 µs`, `12 ms`, `1.5 s`.
    static func duration(_ ns: Double) -> String {
        switch ns {
        case ..<1e3: return String(format: "%.0f ns", ns)
        case ..<1e6: return String(format: ns < 1e4 ? "%.1f µs" : "%.0f µs", ns / 1e3)
        case ..<1e9: return String(format: ns < 1e7 ? "%.1f ms" : "%.0f ms", ns / 1e6)
        default: return String(format: "%.1f s", ns / 1e9)
        }
    }
}
