import InputModel

/// The analysis behind `evflowctl analyze RECORDING`: how much each key and button of a
/// recording chatters, and which chatter window would swallow it.
///
/// Works on the raw (unfiltered) events. Per `EV_KEY` code it counts presses (1), releases (0)
/// and repeats (2), and collects two kinds of short intervals, each as a histogram of 5 ms
/// buckets below 100 ms:
/// - release→press gaps: bounce on release (the contact re-closes a few ms after opening), and
///   fast real re-presses (double-clicks, ≥ ~50 ms);
/// - press→release holds: bounce on press (the contact opens again a few ms after closing).
///
/// Suggested window (`suggestWindow`): intervals shorter than `bounceCeiling` (30 ms) are taken
/// as contact bounce — faster than a person releases or re-presses a key. The suggestion is the
/// smallest whole-millisecond window that swallows at least 99% of them (a chatter window
/// swallows an interval shorter than itself), at least 5 ms. It is therefore at most 30 ms,
/// well below the fastest plausible human re-press (~50 ms), which survives it. Without bounce the suggestion is the
/// default for the code's kind (15 ms keys, 25 ms buttons). Touch and tool contacts
/// (`BTN_TOUCH`, `BTN_TOOL_*`) are reported but get no suggestion: they are never
/// chatter-filtered by default, because fast taps on them are real.
///
/// Pipeline does not depend on the Recording module, so the input is a list of devices with
/// their events; with a `Recording`: `ChatterAnalysis.analyze(recording.devices.map { ($0.info, $0.events) })`.
public enum ChatterAnalysis {
    /// Intervals up to this length are reported (ns).
    public static let threshold: Int64 = 100_000_000
    /// Histogram bucket width (ns).
    public static let bucketWidth: Int64 = 5_000_000
    /// Intervals shorter than this are taken as contact bounce (ns).
    public static let bounceCeiling: Int64 = 30_000_000
    /// The smallest window suggested (ns).
    public static let windowFloor: Int64 = 5_000_000
    /// Share of bounce intervals the suggested window must swallow.
    public static let coverage = 0.99

    /// Analyses the `EV_KEY` events of each device (events in time order, `SYN_REPORT`s may be included).
    public static func analyze(_ devices: [(info: DeviceInfo, events: [InputEvent])]) -> ChatterReport {
        var codes: [ChatterReport.CodeReport] = []
        for (info, events) in devices {
            var perCode: [UInt16: Tracker] = [:]
            var order: [UInt16] = []
            for e in events where e.type == EventType.key {
                if perCode[e.code] == nil {
                    perCode[e.code] = Tracker()
                    order.append(e.code)
                }
                perCode[e.code]!.add(e)
            }
            for code in order.sorted() {
                codes.append(perCode[code]!.report(device: info, code: code))
            }
        }
        return ChatterReport(codes: codes)
    }

    /// Per-code accumulation.
    struct Tracker {
        var presses = 0, releases = 0, repeats = 0
        var lastPress: Int64?
        var lastRelease: Int64?
        var gaps: [Int64] = []    // release→press, all lengths
        var holds: [Int64] = []   // press→release, all lengths

        mutating func add(_ e: InputEvent) {
            switch e.value {
            case 1:
                presses += 1
                if let r = lastRelease, lastPress.map({ $0 < r }) ?? true { gaps.append(e.time - r) }
                lastPress = e.time
            case 0:
                releases += 1
                if let p = lastPress, lastRelease.map({ $0 < p }) ?? true { holds.append(e.time - p) }
                lastRelease = e.time
            default:
                repeats += 1
            }
        }

        func report(device: DeviceInfo, code: UInt16) -> ChatterReport.CodeReport {
            let isTouch = (0x140...0x14f).contains(code)
            let suggestion = isTouch ? nil : ChatterAnalysis.suggestWindow(gaps: gaps, holds: holds,
                                                                            isButton: CodeRange.isButton(code))
            return ChatterReport.CodeReport(
                deviceID: device.id.rawValue, deviceName: device.name,
                code: EventNames.codeText(type: EventType.key, code: code), codeNumber: code,
                presses: presses, releases: releases, repeats: repeats,
                gaps: ChatterReport.Histogram(gaps), holds: ChatterReport.Histogram(holds),
                shortestGap: gaps.min(), shortestHold: holds.min(),
                suggestedWindow: suggestion?.window,
                reasoning: suggestion?.reasoning
                    ?? "touch/tool contact: reports contact, not a mechanical switch; not chatter-filtered")
        }
    }

    /// The suggested chatter window and why.
    public static func suggestWindow(gaps: [Int64], holds: [Int64], isButton: Bool) -> (window: Int64, reasoning: String) {
        let bounce = (gaps + holds).filter { $0 >= 0 && $0 < bounceCeiling }.sorted()
        let defaultWindow: Int64 = isButton ? 25_000_000 : 15_000_000
        guard !bounce.isEmpty else {
            return (defaultWindow, "no interval under \(ms(bounceCeiling)) (no bounce seen); keep the default for "
                + (isButton ? "buttons" : "keys") + " (\(ms(defaultWindow)))")
        }
        // The interval at the 99% rank: every interval up to it must be shorter than the window.
        let rank = max(Int((Double(bounce.count) * coverage).rounded(.up)), 1)
        let covered = bounce[rank - 1]
        var window = (covered / 1_000_000 + 1) * 1_000_000
        var notes = "\(bounce.count) interval(s) under \(ms(bounceCeiling)) taken as bounce "
            + "(\(gaps.filter { $0 >= 0 && $0 < bounceCeiling }.count) release→press, "
            + "\(holds.filter { $0 >= 0 && $0 < bounceCeiling }.count) press→release); "
            + "the \(rank == bounce.count ? "longest" : "99th-percentile") is \(ms(covered)), "
            + "so a window of \(ms(window)) swallows \(rank) of \(bounce.count)"
        if window < windowFloor {
            window = windowFloor
            notes += "; raised to the \(ms(windowFloor)) minimum"
        }
        notes += "; below a fast human re-press (~50ms)"
        let survivors = gaps.filter { $0 >= window && $0 < threshold }
        if let shortest = survivors.min() {
            notes += "; \(survivors.count) release→press gap(s) from \(ms(shortest)) up stay (fast re-presses)"
        }
        return (window, notes)
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
        /// Suggested chatter window (ns); nil for touch/tool contacts.
        public var suggestedWindow: Int64?
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
            if let w = c.suggestedWindow {
                out += "    suggested window: \(ChatterAnalysis.ms(w)) — \(c.reasoning)\n"
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

    /// The report as one JSON object (keys sorted, times in ns, histograms as 20 counts of 5 ms).
    public func renderJSON() -> String {
        let w = JSONText()
        w.object {
            w.field("bucket_ns") { w.number(ChatterAnalysis.bucketWidth) }
            w.field("codes") {
                w.array(codes) { c in
                    w.object {
                        w.field("code") { w.string(c.code) }
                        w.field("code_number") { w.number(Int64(c.codeNumber)) }
                        w.field("device_id") { w.string(c.deviceID) }
                        w.field("device_name") { w.string(c.deviceName) }
                        w.field("gaps") { w.array(c.gaps.counts) { w.number(Int64($0)) } }
                        w.field("holds") { w.array(c.holds.counts) { w.number(Int64($0)) } }
                        w.field("presses") { w.number(Int64(c.presses)) }
                        w.field("reasoning") { w.string(c.reasoning) }
                        w.field("releases") { w.number(Int64(c.releases)) }
                        w.field("repeats") { w.number(Int64(c.repeats)) }
                        w.field("shortest_gap_ns") { w.optional(c.shortestGap) }
                        w.field("shortest_hold_ns") { w.optional(c.shortestHold) }
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
