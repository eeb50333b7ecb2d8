import EvflowProtocol
import NoiseAnalysis
import Pipeline

extension ChatterReport {
    /// The report as one JSON object (keys sorted, times in ns, histograms as 20 counts of
    /// 5 ms), written by the protocol's `JSONWriter` like every other JSON evflow writes.
    func renderJSON() -> String {
        var w = JSONWriter()
        func optional(_ n: Int64?) { if let n { w.int(n) } else { w.null() } }
        w.beginObject()
        w.key("bucket_ns"); w.int(ChatterAnalysis.bucketWidth)
        w.key("codes")
        w.beginArray()
        for c in codes {
            w.beginObject()
            w.key("closest_double_click_ns"); optional(c.closestDoubleClick)
            w.key("code"); w.string(c.code)
            w.key("code_number"); w.int(Int(c.codeNumber))
            w.key("default_lost_presses"); optional((c.withDefault?.lostPresses).map(Int64.init))
            w.key("default_remaining_bounces"); optional((c.withDefault?.remainingBounces).map(Int64.init))
            w.key("device_id"); w.string(c.deviceID)
            w.key("device_name"); w.string(c.deviceName)
            w.key("gaps"); array(c.gaps.counts, &w)
            w.key("holds"); array(c.holds.counts, &w)
            w.key("presses"); w.int(c.presses)
            w.key("real_presses"); optional((c.suggestion?.realPresses).map(Int64.init))
            w.key("reasoning"); w.string(c.reasoning)
            w.key("releases"); w.int(c.releases)
            w.key("repeats"); w.int(c.repeats)
            w.key("shortest_gap_ns"); optional(c.shortestGap)
            w.key("shortest_hold_ns"); optional(c.shortestHold)
            w.key("suggested_lost_presses"); optional((c.suggestion?.lostPresses).map(Int64.init))
            w.key("suggested_remaining_bounces"); optional((c.suggestion?.remainingBounces).map(Int64.init))
            w.key("suggested_spurious")
            if let m = c.suggestedSpurious { w.string(m.rawValue) } else { w.null() }
            w.key("suggested_window_ns"); optional(c.suggestedWindow)
            w.endObject()
        }
        w.endArray()
        w.key("threshold_ns"); w.int(ChatterAnalysis.threshold)
        w.endObject()
        return String(decoding: w.bytes, as: UTF8.self)
    }

    private func array(_ counts: [Int], _ w: inout JSONWriter) {
        w.beginArray()
        for n in counts { w.int(n) }
        w.endArray()
    }
}
