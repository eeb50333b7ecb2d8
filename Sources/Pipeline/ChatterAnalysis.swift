import InputModel

/// The analysis behind `evflowctl analyze RECORDING`: how much each key and button of a
/// recording chatters, and which debounce settings remove it — proven by running the real
/// filter (`NoiseFilter`, `KeyDebounce`) over the recording.
///
/// Works on the raw events of complete frames: events after a device's last `SYN_REPORT`
/// are ignored, as a replay ignores them. Per `EV_KEY` code it counts presses (1), releases
/// (0) and repeats (2), and histograms (5 ms buckets below 100 ms) the release→press gaps and
/// press→release holds. Edges are paired by order, not by time, so two edges with the same
/// timestamp make an interval of 0.
///
/// Real presses: a press is a real one when it is the code's first, or comes at least
/// `bounceCeiling` (30 ms) after the previous release — faster than a person re-presses; a
/// press sooner than that is contact bounce or a spurious release. The filter's output is
/// checked against them: a real press with no delivered press in its span (up to the next
/// real press) is *lost*; each delivered press beyond the first in a span is a *remaining
/// bounce* (an extra click). Both must be 0.
///
/// The suggestion (`search`): the default setting if it already gives 0 and 0; otherwise the
/// smallest window from 5 to 30 ms (whole ms) that does, with the spurious mode `auto`, else
/// `always`; if none does, the setting with the fewest lost presses, then remaining bounces.
/// The report gives both outcomes and the closest real double-click (the shortest
/// release→press gap of a real press), which a window must stay below.
///
/// Touch and tool contacts (`BTN_TOUCH`, `BTN_TOOL_*`) are reported but not filtered, so they
/// get no suggestion. Pipeline does not depend on the Recording module, so the input is a
/// list of devices with their events; with a `Recording`:
/// `ChatterAnalysis.analyze(recording.devices.map { ($0.info, $0.events) })`.
public enum ChatterAnalysis {
    /// Intervals up to this length are reported (ns).
    public static let threshold: Int64 = 100_000_000
    /// Histogram bucket width (ns).
    public static let bucketWidth: Int64 = 5_000_000
    /// A press sooner than this after a release is not a real press (ns).
    public static let bounceCeiling: Int64 = 30_000_000
    /// The window search: from this (ns) ...
    public static let windowFloor: Int64 = 5_000_000
    /// ... to this (ns), in whole milliseconds.
    public static let windowCeiling: Int64 = 30_000_000

    /// Analyses the `EV_KEY` events of each device (events in time order, with their `SYN_REPORT`s).
    public static func analyze(_ devices: [(info: DeviceInfo, events: [InputEvent])],
                               config: FilterConfig = FilterConfig()) -> ChatterReport {
        var codes: [ChatterReport.CodeReport] = []
        for (info, events) in devices {
            let frames = completeFrames(events)
            var perCode: [UInt16: Tracker] = [:]
            var keyFrames: [UInt16: [InputFrame]] = [:]
            for frame in frames {
                for e in frame.events where e.type == EventType.key {
                    perCode[e.code, default: Tracker()].add(e)
                    keyFrames[e.code, default: []].append(InputFrame(time: frame.time, events: [e]))
                }
            }
            let defaults = config.settings(for: info)
            for code in perCode.keys.sorted() {
                codes.append(perCode[code]!.report(device: info, code: code, frames: keyFrames[code] ?? [],
                                                   defaultFilter: defaults.keys[code] ?? .passthrough))
            }
        }
        return ChatterReport(codes: codes)
    }

    /// The frames a replay delivers (`FrameAssembler`'s grouping, the live reader's); events
    /// after the last frame are dropped.
    public static func completeFrames(_ events: [InputEvent]) -> [InputFrame] {
        FrameAssembler.frames(of: events).frames
    }

    /// What one setting does to one code's frames.
    public struct Outcome: Hashable, Sendable {
        /// Real presses in the input.
        public var realPresses = 0
        /// Presses delivered.
        public var deliveredPresses = 0
        /// Delivered presses beyond one per real press (bounce that got through).
        public var remainingBounces = 0
        /// Real presses with no delivered press.
        public var lostPresses = 0
        /// The spurious-release method turned on by itself.
        public var spuriousTurnedOn = false
        /// An outcome with these counts.
        public init(realPresses: Int = 0, deliveredPresses: Int = 0, remainingBounces: Int = 0, lostPresses: Int = 0,
                    spuriousTurnedOn: Bool = false) {
            self.realPresses = realPresses
            self.deliveredPresses = deliveredPresses
            self.remainingBounces = remainingBounces
            self.lostPresses = lostPresses
            self.spuriousTurnedOn = spuriousTurnedOn
        }

        /// No bounce left and no press lost.
        public var isClean: Bool { remainingBounces == 0 && lostPresses == 0 }
    }

    /// Runs `filter` over the frames of one code (the real `NoiseFilter`, in event time, held
    /// values delivered at the end) and checks the output against the real presses.
    public static func evaluate(code: UInt16, frames: [InputFrame], filter: CodeFilter) -> Outcome {
        var settings = DeviceFilterSettings()
        settings.keys[code] = filter
        var noise = NoiseFilter(settings: settings)
        var output: [InputFrame] = []
        for frame in frames {
            while let due = noise.nextDeadline, due <= frame.time {
                if let f = noise.fire(at: due) { output.append(f) }
            }
            if let f = noise.process(frame) { output.append(f) }
        }
        while let due = noise.nextDeadline, let f = noise.fire(at: due) { output.append(f) }
        var outcome = Outcome()
        outcome.spuriousTurnedOn = !noise.spuriousTurnedOn.isEmpty
        let starts = realPressTimes(frames.flatMap(\.events).filter { $0.type == EventType.key && $0.code == code })
        outcome.realPresses = starts.count
        var perSpan = [Int](repeating: 0, count: starts.count)
        for f in output {
            for e in f.events where e.type == EventType.key && e.code == code && e.value == 1 {
                outcome.deliveredPresses += 1
                // The span of the last real press at or before the delivered one.
                var lo = 0, hi = starts.count
                while lo < hi {
                    let mid = (lo + hi) / 2
                    if starts[mid] <= e.time { lo = mid + 1 } else { hi = mid }
                }
                if lo == 0 { outcome.remainingBounces += 1 } else { perSpan[lo - 1] += 1 }
            }
        }
        for n in perSpan {
            if n == 0 { outcome.lostPresses += 1 } else { outcome.remainingBounces += n - 1 }
        }
        return outcome
    }

    /// Times of the real presses of one code's events (see the type's documentation).
    static func realPressTimes(_ events: [InputEvent]) -> [Int64] {
        var starts: [Int64] = []
        var down = false
        var lastRelease: Int64?
        for e in events {
            if e.value == 1 && !down {
                if lastRelease.map({ e.time - $0 >= bounceCeiling }) ?? true { starts.append(e.time) }
                down = true
            } else if e.value == 0 && down {
                lastRelease = e.time
                down = false
            } else if e.value == 0 && lastRelease == nil {
                lastRelease = e.time   // a release first: the key was down before the recording
            }
        }
        return starts
    }

    /// The settings tried, in order of preference, and the one chosen.
    public static func search(code: UInt16, frames: [InputFrame], defaultFilter: CodeFilter)
        -> (filter: CodeFilter, outcome: Outcome, defaultOutcome: Outcome) {
        let defaultOutcome = evaluate(code: code, frames: frames, filter: defaultFilter)
        if defaultOutcome.isClean { return (defaultFilter, defaultOutcome, defaultOutcome) }
        var spuriousWindow: Int64 = 12_000_000
        if case .chatter(_, _, let s) = defaultFilter, s > 0 { spuriousWindow = s }
        var best: (filter: CodeFilter, outcome: Outcome)?
        for mode in [SpuriousMode.auto, .always] {
            var w = windowFloor
            while w <= windowCeiling {
                let filter = CodeFilter.chatter(window: w, spurious: mode, spuriousWindow: spuriousWindow)
                let outcome = evaluate(code: code, frames: frames, filter: filter)
                if outcome.isClean { return (filter, outcome, defaultOutcome) }
                if best == nil || (outcome.lostPresses, outcome.remainingBounces)
                    < (best!.outcome.lostPresses, best!.outcome.remainingBounces) {
                    best = (filter, outcome)
                }
                w += 1_000_000
            }
        }
        return (best!.filter, best!.outcome, defaultOutcome)
    }

    /// Per-code accumulation.
    struct Tracker {
        var presses = 0, releases = 0, repeats = 0
        var lastPress: Int64?
        var lastRelease: Int64?
        var down: Bool?
        var gaps: [Int64] = []    // release→press, all lengths
        var holds: [Int64] = []   // press→release, all lengths

        mutating func add(_ e: InputEvent) {
            switch e.value {
            case 1:
                presses += 1
                if down == false, let r = lastRelease { gaps.append(e.time - r) }
                lastPress = e.time
                down = true
            case 0:
                releases += 1
                if down == true, let p = lastPress { holds.append(e.time - p) }
                lastRelease = e.time
                down = false
            default:
                repeats += 1
            }
        }

        func report(device: DeviceInfo, code: UInt16, frames: [InputFrame], defaultFilter: CodeFilter)
            -> ChatterReport.CodeReport {
            let isTouch = (0x140...0x14f).contains(code)
            var report = ChatterReport.CodeReport(
                deviceID: device.id.rawValue, deviceName: device.name, vendor: device.inputID.vendor,
                product: device.inputID.product,
                code: EventNames.codeText(type: EventType.key, code: code), codeNumber: code,
                presses: presses, releases: releases, repeats: repeats,
                gaps: ChatterReport.Histogram(gaps), holds: ChatterReport.Histogram(holds),
                shortestGap: gaps.min(), shortestHold: holds.min(),
                suggestedWindow: nil, suggestedSpurious: nil, suggestion: nil, withDefault: nil,
                closestDoubleClick: nil,
                reasoning: "touch/tool contact: reports contact, not a mechanical switch; not filtered")
            let events = frames.flatMap(\.events)
            var closest: Int64?
            var lastRelease: Int64?
            var down = false
            for e in events {
                if e.value == 1 && !down, let r = lastRelease, e.time - r >= ChatterAnalysis.bounceCeiling {
                    closest = min(closest ?? .max, e.time - r)
                }
                if e.value == 1 { down = true } else if e.value == 0 { down = false; lastRelease = e.time }
            }
            report.closestDoubleClick = closest
            guard !isTouch else { return report }
            let found = ChatterAnalysis.search(code: code, frames: frames, defaultFilter: defaultFilter)
            report.withDefault = found.defaultOutcome
            report.suggestion = found.outcome
            if case .chatter(let w, let mode, _) = found.filter {
                report.suggestedWindow = w
                report.suggestedSpurious = mode
            }
            let filterText = report.suggestedWindow.map { "window \(ChatterAnalysis.ms($0)), spurious \(report.suggestedSpurious!.rawValue)" }
                ?? "no filter"
            var why: String
            if found.filter == defaultFilter {
                why = "the default (\(filterText)) leaves no bounce and loses no press"
            } else if found.outcome.isClean {
                why = "the default leaves \(found.defaultOutcome.remainingBounces) bounce(s) and loses "
                    + "\(found.defaultOutcome.lostPresses) press(es); \(filterText) is the smallest setting that leaves none"
            } else {
                why = "no window from \(ChatterAnalysis.ms(ChatterAnalysis.windowFloor)) to \(ChatterAnalysis.ms(ChatterAnalysis.windowCeiling)) is clean; "
                    + "\(filterText) comes closest"
            }
            if found.outcome.spuriousTurnedOn && report.suggestedSpurious == .auto {
                why += " (the spurious-release method turns on by itself on this recording)"
            }
            if let closest { why += "; closest real double-click: \(ChatterAnalysis.ms(closest)) between release and press" }
            report.reasoning = why
            return report
        }
    }

    /// `12ms`, `12.3ms`.
    static func ms(_ ns: Int64) -> String {
        if ns % 1_000_000 == 0 { return "\(ns / 1_000_000)ms" }
        let tenths = (ns + 50_000) / 100_000
        return "\(tenths / 10).\(tenths % 10)ms"
    }
}

/// The result of `ChatterAnalysis.analyze`: one entry per key/button code per device.
public struct ChatterReport: Hashable, Sendable {
    /// Counts of intervals per bucket: bucket i holds intervals in [i·5 ms, (i+1)·5 ms), below 100 ms.
    public struct Histogram: Hashable, Sendable {
        /// 20 buckets of 5 ms.
        public var counts: [Int]

        /// Buckets `intervals` (ns); those ≥ 100 ms (and negative ones) are not counted.
        public init(_ intervals: [Int64]) {
            counts = [Int](repeating: 0, count: Int(ChatterAnalysis.threshold / ChatterAnalysis.bucketWidth))
            for d in intervals where d >= 0 && d < ChatterAnalysis.threshold {
                counts[Int(d / ChatterAnalysis.bucketWidth)] += 1
            }
        }

        /// Intervals counted.
        public var total: Int { counts.reduce(0, +) }
    }

    /// One key or button of one device.
    public struct CodeReport: Hashable, Sendable {
        /// Device id.
        public var deviceID: String
        /// Device name.
        public var deviceName: String
        /// Vendor and product (for `--config-out`).
        public var vendor: UInt16, product: UInt16
        /// Code name (`KEY_A`, `BTN_LEFT`).
        public var code: String
        /// Code number.
        public var codeNumber: UInt16
        /// Events with value 1, 0 and 2.
        public var presses: Int, releases: Int, repeats: Int
        /// Release→press gaps under 100 ms.
        public var gaps: Histogram
        /// Press→release durations under 100 ms.
        public var holds: Histogram
        /// Shortest release→press gap and press→release duration (ns), any length.
        public var shortestGap: Int64?, shortestHold: Int64?
        /// Suggested debounce window (ns); nil for touch/tool contacts.
        public var suggestedWindow: Int64?
        /// Suggested spurious-release mode; nil for touch/tool contacts.
        public var suggestedSpurious: SpuriousMode?
        /// What the suggestion and the default do to this recording (nil for touch/tool contacts).
        public var suggestion: ChatterAnalysis.Outcome?, withDefault: ChatterAnalysis.Outcome?
        /// The shortest release→press gap before a real press (ns).
        public var closestDoubleClick: Int64?
        /// Why this window.
        public var reasoning: String
    }

    /// Every key/button seen, by device (in input order), then code number.
    public var codes: [CodeReport]

    /// A human-readable report: per code the counts, both histograms (non-empty buckets) and
    /// the suggestion with its reasoning.
    public func renderText() -> String {
        var out = "Chatter analysis: release→press gaps and press→release holds under "
            + "\(ChatterAnalysis.ms(ChatterAnalysis.threshold)), 5 ms buckets\n"
        if codes.isEmpty { return out + "no key or button events\n" }
        var device = ""
        for c in codes {
            if c.deviceID != device {
                device = c.deviceID
                out += "\n\(c.deviceName) (\(c.deviceID))\n"
            }
            out += "  \(c.code): \(c.presses) presses, \(c.releases) releases, \(c.repeats) repeats\n"
            out += histogramText("release→press", c.gaps, shortest: c.shortestGap)
            out += histogramText("press→release", c.holds, shortest: c.shortestHold)
            if let w = c.suggestedWindow, let mode = c.suggestedSpurious {
                if let d = c.withDefault {
                    out += "    with the default: \(d.remainingBounces) bounce(s) left, \(d.lostPresses) of \(d.realPresses) real press(es) lost\n"
                }
                if let o = c.suggestion {
                    out += "    with the suggestion: \(o.remainingBounces) bounce(s) left, \(o.lostPresses) of \(o.realPresses) real press(es) lost\n"
                }
                out += "    suggested: window \(ChatterAnalysis.ms(w)), spurious \(mode.rawValue) — \(c.reasoning)\n"
            } else {
                out += "    no suggestion — \(c.reasoning)\n"
            }
        }
        return out
    }

    private func histogramText(_ title: String, _ h: Histogram, shortest: Int64?) -> String {
        let shortestText = shortest.map { ", shortest \(ChatterAnalysis.ms($0))" } ?? ""
        guard h.total > 0 else { return "    \(title): none under 100ms\(shortestText)\n" }
        var s = "    \(title): \(h.total) under 100ms\(shortestText)\n"
        let width = ChatterAnalysis.bucketWidth / 1_000_000
        let most = h.counts.max() ?? 1
        for (i, n) in h.counts.enumerated() where n > 0 {
            let lo = Int64(i) * width, hi = lo + width
            let label = "\(lo)–\(hi)ms"
            let bar = String(repeating: "#", count: max(1, n * 30 / most))
            s += "      " + label + String(repeating: " ", count: max(1, 10 - label.count)) + "\(n) \(bar)\n"
        }
        return s
    }

    /// The suggestions as a configuration file (`--config-out`): one rule per device,
    /// matched by vendor:product and name, with a `codes:` entry per key or button that has a
    /// suggestion, and per absolute axis (`axes`, from `--axes`) whose suggested hysteresis
    /// exceeds its fuzz. `FilterConfig.parse` accepts it.
    public func configSnippet(axes: [AxisNoiseAnalysis.AxisReport] = []) -> String {
        var out = "# written by evflowctl analyze: per code, the debounce that left no bounce and lost no press\n"
        out += "version: 1\n"
        struct Entry { var deviceID, deviceName, line: String; var vendor, product: UInt16 }
        var entries: [Entry] = []
        for c in codes where c.suggestedWindow != nil {
            let w = c.suggestedWindow!
            let text = w % 1_000_000 == 0 ? "\(w / 1_000_000)ms" : "\(w / 1000)us"
            entries.append(Entry(deviceID: c.deviceID, deviceName: c.deviceName,
                                 line: "\(c.code): { window: \(text), spurious: \(c.suggestedSpurious!.rawValue) }",
                                 vendor: c.vendor, product: c.product))
        }
        for a in axes where a.suggestedHysteresis > a.fuzz {
            entries.append(Entry(deviceID: a.deviceID, deviceName: a.deviceName,
                                 line: "\(a.code): { hysteresis: \(a.suggestedHysteresis) }", vendor: a.vendor, product: a.product))
        }
        var devices: [(String, [Entry])] = []
        for e in entries {
            if let i = devices.firstIndex(where: { $0.0 == e.deviceID }) { devices[i].1.append(e) } else { devices.append((e.deviceID, [e])) }
        }
        if devices.isEmpty { return out }
        out += "devices:\n"
        func hex(_ v: UInt16) -> String {
            let h = String(v, radix: 16)
            return String(repeating: "0", count: 4 - h.count) + h
        }
        func quoted(_ s: String) -> String {
            "\"" + s.replacingOccurrences("\\", "\\\\").replacingOccurrences("\"", "\\\"") + "\""
        }
        for (_, list) in devices {
            let first = list[0]
            out += "  - match: { id: \"\(hex(first.vendor)):\(hex(first.product))\", name: \(quoted(first.deviceName)) }\n"
            out += "    codes:\n"
            for e in list { out += "      \(e.line)\n" }
        }
        return out
    }

    /// The report as one JSON object (keys sorted, times in ns, histograms as 20 counts of 5 ms).
    public func renderJSON() -> String {
        let w = JSONText()
        w.object {
            w.field("bucket_ns") { w.number(ChatterAnalysis.bucketWidth) }
            w.field("codes") {
                w.array(codes) { c in
                    w.object {
                        w.field("code") { w.string(c.code) }
                        w.field("closest_double_click_ns") { w.optional(c.closestDoubleClick) }
                        w.field("code_number") { w.number(Int64(c.codeNumber)) }
                        w.field("default_lost_presses") { w.optional(c.withDefault.map { Int64($0.lostPresses) }) }
                        w.field("default_remaining_bounces") { w.optional(c.withDefault.map { Int64($0.remainingBounces) }) }
                        w.field("device_id") { w.string(c.deviceID) }
                        w.field("device_name") { w.string(c.deviceName) }
                        w.field("gaps") { w.array(c.gaps.counts) { w.number(Int64($0)) } }
                        w.field("holds") { w.array(c.holds.counts) { w.number(Int64($0)) } }
                        w.field("presses") { w.number(Int64(c.presses)) }
                        w.field("reasoning") { w.string(c.reasoning) }
                        w.field("releases") { w.number(Int64(c.releases)) }
                        w.field("repeats") { w.number(Int64(c.repeats)) }
                        w.field("shortest_gap_ns") { w.optional(c.shortestGap) }
                        w.field("real_presses") { w.optional(c.suggestion.map { Int64($0.realPresses) }) }
                        w.field("shortest_hold_ns") { w.optional(c.shortestHold) }
                        w.field("suggested_lost_presses") { w.optional(c.suggestion.map { Int64($0.lostPresses) }) }
                        w.field("suggested_remaining_bounces") { w.optional(c.suggestion.map { Int64($0.remainingBounces) }) }
                        w.field("suggested_spurious") {
                            if let m = c.suggestedSpurious { w.string(m.rawValue) } else { w.optional(nil) }
                        }
                        w.field("suggested_window_ns") { w.optional(c.suggestedWindow) }
                    }
                }
            }
            w.field("threshold_ns") { w.number(ChatterAnalysis.threshold) }
        }
        return w.text
    }
}

/// A minimal JSON writer (Pipeline does not import Foundation); fields are written in the order
/// given, which the caller keeps sorted.
private final class JSONText {
    var text = ""
    private var needsComma = [false]

    func separator() {
        if needsComma[needsComma.count - 1] { text += "," }
        needsComma[needsComma.count - 1] = true
    }

    func object(_ body: () -> Void) {
        text += "{"
        needsComma.append(false)
        body()
        needsComma.removeLast()
        text += "}"
    }

    func field(_ name: String, _ value: () -> Void) {
        separator()
        appendString(name)
        text += ":"
        needsComma.append(false)
        value()
        needsComma.removeLast()
    }

    func array<T>(_ items: [T], _ each: (T) -> Void) {
        text += "["
        needsComma.append(false)
        for item in items {
            separator()
            needsComma.append(false)
            each(item)
            needsComma.removeLast()
        }
        needsComma.removeLast()
        text += "]"
    }

    func number(_ n: Int64) { text += String(n) }
    func optional(_ n: Int64?) { text += n.map { String($0) } ?? "null" }
    func string(_ s: String) { appendString(s) }

    private func appendString(_ s: String) {
        text += "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": text += "\\\""
            case "\\": text += "\\\\"
            case "\n": text += "\\n"
            case "\r": text += "\\r"
            case "\t": text += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    text += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    text.unicodeScalars.append(u)
                }
            }
        }
        text += "\""
    }
}

extension String {
    /// Every `target` replaced by `replacement` (Pipeline does not import Foundation).
    fileprivate func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        var out = ""
        var rest = Substring(self)
        while let r = rest.firstRange(of: target) {
            out += rest[..<r.lowerBound]
            out += replacement
            rest = rest[r.upperBound...]
        }
        return out + rest
    }
}
