import Pipeline

// `evflowctl analyze` as text: the analysis (Pipeline) computes, this file only words it, as
// `TerminalText` (the device names and ids come from the recording: every value is escaped).

extension ChatterReport {
    /// A human-readable report: per code the counts, both histograms (non-empty buckets) and
    /// the suggestion with its reasoning.
    func renderText() -> TerminalText {
        var out: TerminalText = "Chatter analysis: release→press gaps and press→release holds under "
            + "\(ChatterAnalysis.ms(ChatterAnalysis.threshold)), 5 ms buckets\n"
        if codes.isEmpty { return out + "no key or button events\n" }
        var device = ""
        for c in codes {
            if c.deviceID != device {
                device = c.deviceID
                out += "\n\(c.deviceName) (\(c.deviceID))\n"
            }
            out += "  \(c.code): \(c.presses) presses, \(c.releases) releases, \(c.repeats) repeats\n"
            out += Self.histogramText("release→press", c.gaps, shortest: c.shortestGap)
            out += Self.histogramText("press→release", c.holds, shortest: c.shortestHold)
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

    private static func histogramText(_ title: String, _ h: Histogram, shortest: Int64?) -> TerminalText {
        let shortestText: TerminalText = shortest.map { ", shortest \(ChatterAnalysis.ms($0))" } ?? ""
        guard h.total > 0 else { return "    \(title): none under 100ms\(shortestText)\n" }
        var s: TerminalText = "    \(title): \(h.total) under 100ms\(shortestText)\n"
        let width = ChatterAnalysis.bucketWidth / 1_000_000
        let most = h.counts.max() ?? 1
        for (i, n) in h.counts.enumerated() where n > 0 {
            let lo = Int64(i) * width, hi = lo + width
            let label = "\(lo)–\(hi)ms"
            let bar = String(repeating: "#", count: max(1, n * 30 / most))
            s += "      \(label + String(repeating: " ", count: max(1, 10 - label.count)))\(n) \(bar)\n"
        }
        return s
    }
}

extension AxisNoiseAnalysis {
    /// The `--axes` section of the text report.
    static func renderText(_ axes: [AxisReport]) -> TerminalText {
        var out: TerminalText = "\nAxes at rest: slices of 100ms spanning at most 5% of the axis' range\n"
        if axes.isEmpty { return out + "no absolute axis events\n" }
        var device = ""
        for a in axes {
            if a.deviceID != device {
                device = a.deviceID
                out += "\n\(a.deviceName) (\(a.deviceID))\n"
            }
            out += "  \(a.code): \(a.events) values, \(a.restingSlices) resting slice(s), fuzz \(a.fuzz)"
            guard let swing = a.idleSwing else {
                out += ", never at rest: keep hysteresis fuzz\n"
                continue
            }
            out += ", idle swing \(swing)\n"
            out += "    values delivered at rest: \(a.idleDeliveredWithFuzz) with the fuzz, "
                + "\(a.idleDeliveredWithSuggestion) with hysteresis \(a.suggestedHysteresis)\n"
            out += a.suggestedHysteresis > a.fuzz
                ? "    suggested hysteresis: \(a.suggestedHysteresis) (the stick swings more than its fuzz at rest)\n"
                : "    suggested hysteresis: fuzz (\(a.fuzz)) already covers it\n"
        }
        return out
    }
}

extension WheelAnalysis {
    /// The `--wheel` section of the text report.
    static func renderText(_ axes: [AxisReport]) -> TerminalText {
        var out: TerminalText = "\nScroll wheels: stray ticks (a lone tick against the scroll, under 200ms from the ticks around it)\n"
        if axes.isEmpty { return out + "no scroll wheel events\n" }
        var device = ""
        for a in axes {
            if a.deviceID != device {
                device = a.deviceID
                out += "\n\(a.deviceName) (\(a.deviceID))\n"
            }
            out += "  \(a.codeName)\(a.hiRes ? " (high resolution)" : ""): \(a.ticks.count) ticks, "
                + "\(a.reversals.count) reversal(s), \(a.strays.count) stray tick(s)\n"
            if let shortest = a.strayGaps.min(), let longest = a.strayGaps.max() {
                out += "    strays came \(ChatterAnalysis.ms(shortest))–\(ChatterAnalysis.ms(longest)) after the tick before\n"
            }
            let s = a.suggestion
            if a.strays.isEmpty {
                out += "    suggested: wheel off (no stray tick)\n"
            } else {
                out += "    with wheel \(ChatterAnalysis.ms(s.window)): \(s.remainingStrays) stray(s) left, \(s.lostTicks) real tick(s) lost\n"
                out += a.recommended ? "    suggested: wheel: \(ChatterAnalysis.ms(s.window))\n"
                    : "    suggested: wheel: \(ChatterAnalysis.ms(s.window)) is the closest (no window is clean)\n"
            }
        }
        return out
    }
}
