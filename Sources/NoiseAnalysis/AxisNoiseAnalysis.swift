import InputModel
import Pipeline
import Reactive

/// `evflowctl analyze --axes`: how much each absolute axis moves while it rests, and the
/// hysteresis that hides that motion — checked by running the real filter.
///
/// The axis' events (complete frames only, multitouch axes left out) are cut into slices of
/// `slice` (100 ms). A slice whose values span at most `restShare` (5%) of the axis' range
/// (absinfo min…max) with at least `minimumEvents` (3) values is *at rest*: a person holds
/// still or lets go, and what moves is noise. The *idle swing* is the largest span of a
/// resting slice. The suggestion is a hysteresis equal to the idle swing (a value within it
/// of the last delivered one is then dropped wherever the axis rests), unless the axis'
/// fuzz already covers it. Proof: the real `NoiseFilter` is run over the whole axis with the
/// fuzz and with the suggestion, and the values it delivers inside resting slices (after
/// each slice's first) are counted — noise that got through.
public enum AxisNoiseAnalysis {
    /// Slice length (ns).
    public static let slice: Int64 = 100_000_000
    /// A resting slice spans at most this share of the axis' range.
    public static let restShare = 0.05
    /// Values a slice needs to count.
    public static let minimumEvents = 3

    /// One absolute axis of one device.
    public struct AxisReport: Hashable, Sendable {
        /// Device id and name, vendor and product.
        public var deviceID: String, deviceName: String, vendor: UInt16, product: UInt16
        /// Axis name (`ABS_X`) and number.
        public var code: String, codeNumber: UInt16
        /// Values seen.
        public var events: Int
        /// Slices at rest.
        public var restingSlices: Int
        /// The span of each resting slice, in time order (the report's idle-noise histogram).
        public var restingSpans: [Int32]
        /// Largest span of a resting slice (nil: no resting slice).
        public var idleSwing: Int32?
        /// absinfo fuzz.
        public var fuzz: Int32
        /// Suggested hysteresis.
        public var suggestedHysteresis: Int32
        /// Values delivered inside resting slices (beyond each slice's first) with the fuzz
        /// and with the suggestion.
        public var idleDeliveredWithFuzz: Int, idleDeliveredWithSuggestion: Int
    }

    /// Analyses every absolute axis of each device (events in time order, with `SYN_REPORT`s).
    public static func analyze(_ devices: [(info: DeviceInfo, events: [InputEvent])]) -> [AxisReport] {
        var reports: [AxisReport] = []
        for (info, events) in devices {
            let frames = ChatterAnalysis.completeFrames(events)
            var perCode: [UInt16: [InputFrame]] = [:]
            for frame in frames {
                for e in frame.events where e.type == EventType.abs && !CodeRange.multitouch.contains(e.code) {
                    perCode[e.code, default: []].append(InputFrame(time: frame.time, events: [e]))
                }
            }
            for code in perCode.keys.sorted() {
                reports.append(report(info: info, code: code, frames: perCode[code]!))
            }
        }
        return reports
    }

    static func report(info: DeviceInfo, code: UInt16, frames: [InputFrame]) -> AxisReport {
        let abs = info.absInfo[code]
        let range = abs.map { Int64($0.maximum) - Int64($0.minimum) } ?? 0
        let fuzz = abs?.fuzz ?? 0
        // Resting slices: [start, end) with their span.
        var resting: [(start: Int64, end: Int64)] = []
        var swing: Int32?
        var spans: [Int32] = []
        var i = 0
        while i < frames.count {
            // By slice number, not `time < start + slice`: that sum trapped for a frame near
            // 2⁶³ ns (issue #34), and saturated it would never end the last slice.
            let number = frames[i].time / slice
            let start = number * slice
            var lo = Int32.max, hi = Int32.min, n = 0
            while i < frames.count, frames[i].time / slice == number {
                let v = frames[i].events[0].value
                lo = min(lo, v); hi = max(hi, v); n += 1
                i += 1
            }
            let span = Int64(hi) - Int64(lo)
            if n >= minimumEvents, range > 0, Double(span) <= restShare * Double(range) {
                resting.append((start, start.addingSaturated(slice)))
                spans.append(Int32(span))
                swing = max(swing ?? 0, Int32(span))
            }
        }
        let suggestion = max(fuzz, swing ?? 0)
        func idleDelivered(_ hysteresis: Int32) -> Int {
            var settings = DeviceFilterSettings()
            if hysteresis > 0 { settings.absolute[code] = .absolute(hysteresis: hysteresis, minInterval: 0) }
            var filter = NoiseFilter(settings: settings)
            var count = 0
            var r = 0
            var firstInSlice = true
            for frame in frames {
                guard filter.process(frame) != nil else { continue }
                while r < resting.count, resting[r].end <= frame.time { r += 1; firstInSlice = true }
                guard r < resting.count, resting[r].start <= frame.time else { continue }
                if firstInSlice { firstInSlice = false } else { count += 1 }
            }
            return count
        }
        return AxisReport(deviceID: info.id.rawValue, deviceName: info.name, vendor: info.inputID.vendor,
                          product: info.inputID.product, code: EventNames.codeText(type: EventType.abs, code: code),
                          codeNumber: code, events: frames.count, restingSlices: resting.count, restingSpans: spans, idleSwing: swing,
                          fuzz: fuzz, suggestedHysteresis: suggestion,
                          idleDeliveredWithFuzz: idleDelivered(fuzz), idleDeliveredWithSuggestion: idleDelivered(suggestion))
    }
}
